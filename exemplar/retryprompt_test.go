package exemplar

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRetryPrompt(t *testing.T) {
	const (
		double = "═══════════════════════════════════════════════════════════════════════════════"
		single = "───────────────────────────────────────────────────────────────────────────────"
	)
	tests := []struct {
		name                                    string
		original, modification, source, example string
		attempt, max                            int
		want                                    string
	}{
		{
			name:         "the spec's layout",
			original:     "You are the Engineer. Address GAP-FLOW-001.",
			modification: "\nFORMAT CORRECTION REQUIRED:\n\nYour previous output did not follow the required structure.\n", // as the spec's f-string builds it
			source:       "Canonical example - note required headers",
			example:      "## Gap Resolution: GAP-XXX\n\n**Confidence:** HIGH | MEDIUM | LOW\n",
			attempt:      1, max: 2,
			want: double + "\n" +
				"                         RETRY ATTEMPT 1 of 2\n" +
				double + "\n" +
				"\n" +
				"FORMAT CORRECTION REQUIRED:\n\nYour previous output did not follow the required structure.\n" +
				"\n" +
				single + "\n" +
				"                              EXAMPLE OUTPUT\n" +
				"Source: Canonical example - note required headers\n" +
				single + "\n" +
				"\n" +
				"## Gap Resolution: GAP-XXX\n\n**Confidence:** HIGH | MEDIUM | LOW\n" +
				"\n" +
				double + "\n" +
				"\n" +
				"You are the Engineer. Address GAP-FLOW-001.",
		},
		{
			name:         "no example (FILE_MISSING): the example block is left out",
			original:     "Original.",
			modification: "CRITICAL: Your previous attempt did not create the required output file.",
			source:       "No example attached - file creation issue",
			attempt:      2, max: 3,
			want: double + "\n" +
				"                         RETRY ATTEMPT 2 of 3\n" +
				double + "\n" +
				"\n" +
				"CRITICAL: Your previous attempt did not create the required output file.\n" +
				"\n" +
				double + "\n" +
				"\n" +
				"Original.",
		},
		{
			name:     "no modification either",
			original: "Original.",
			source:   "Default template",
			example:  "\n\nEXAMPLE\n\n",
			attempt:  1, max: 2,
			want: double + "\n" +
				"                         RETRY ATTEMPT 1 of 2\n" +
				double + "\n" +
				"\n" +
				single + "\n" +
				"                              EXAMPLE OUTPUT\n" +
				"Source: Default template\n" +
				single + "\n" +
				"\n" +
				"EXAMPLE\n" +
				"\n" +
				double + "\n" +
				"\n" +
				"Original.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RetryPrompt(tt.original, tt.modification, tt.source, tt.example, tt.attempt, tt.max)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RetryPrompt mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRetryPromptRulesMatchSpec reads the rules and titles from the spec
// itself, so a transcription slip in the constants cannot pass.
func TestRetryPromptRulesMatchSpec(t *testing.T) {
	spec := readSpec(t, "round-09-error-recovery.md")
	start := strings.Index(spec, "retry_notice = f\"\"\"\n")
	if start < 0 {
		t.Fatal("construct_retry_prompt's retry_notice not found in the spec")
	}
	notice := spec[start+len("retry_notice = f\"\"\"\n"):]
	notice = notice[:strings.Index(notice, "\"\"\"")]
	got := RetryPrompt("", "{modification}", "{source}", "{example}", 7, 2)
	got = strings.TrimSuffix(got, "\n\n")
	want := strings.Replace(strings.TrimSuffix(notice, "\n"), "{attempt}", "7", 1)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("retry notice differs from the spec's (-spec +ours):\n%s", diff)
	}
}

func TestInitialFormatBlock(t *testing.T) {
	const single = "───────────────────────────────────────────────────────────────────────────────"
	sel := Selection{Text: "## Gap Resolution: [GAP-ID]\n", Description: "Structural template", Tier: TierTemplate}
	want := single + "\n" +
		"                              EXPECTED FORMAT\n" +
		"Source: Structural template\n" +
		single + "\n" +
		"\n" +
		"## Gap Resolution: [GAP-ID]\n" +
		"\n" +
		single + "\n"
	if diff := cmp.Diff(want, InitialFormatBlock(sel)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if got := InitialFormatBlock(Selection{Description: "x"}); got != "" {
		t.Errorf("empty selection gave %q", got)
	}
}
