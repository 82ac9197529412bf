package retry

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/validate"
)

func TestModificationTexts(t *testing.T) {
	c := Context{ExpectedPath: "round_003/engineer.md", Gaps: []string{"GAP-FLOW-003", "GAP-UX-001"}, ValidGaps: []string{"GAP-FLOW-001"}, InvalidRefs: "GAP-FLOW-099", Message: "DISAGREE for ISSUE-R2-001 missing '**Rationale:**'"}
	tests := []struct {
		failure validate.FailureType
		want    []string
	}{
		{"FILE_MISSING", []string{"CRITICAL: Your previous attempt did not create the required output file.", "You MUST write your output to: round_003/engineer.md"}},
		{"EMPTY_OUTPUT", []string{"ATTENTION: Your previous output was empty or too brief.", "Do NOT submit an empty file. Write something useful."}},
		{"WRONG_FORMAT", []string{"FORMAT CORRECTION REQUIRED:", "- Start each gap with: ## Gap Resolution: GAP-XXX", "The example below shows the correct format. Match it exactly."}},
		{"NO_GAPS_ADDRESSED", []string{"GAP REFERENCE REQUIRED:", "- GAP-FLOW-003\n- GAP-UX-001", "1. Begin with: ## Gap Resolution: GAP-FLOW-003"}},
		{"INCONSISTENT_REFS", []string{"INVALID REFERENCES DETECTED:", "do not exist:\nGAP-FLOW-099", "Valid gaps for this session are:\n- GAP-FLOW-001"}},
		{"MALFORMED_DISAGREE", []string{"DISAGREE FORMAT CORRECTION REQUIRED:", "missing '**Rationale:**'", "## DISAGREE: ISSUE-R{N}-{XXX}"}},
		{"RE_ARGUED_CONFLICT", []string{"DECIDED CONFLICT RE-ARGUED:", "Do not re-argue it"}},
		{"INTEGRATION_STRUCTURE", []string{"INTEGRATED SPEC STRUCTURE CORRECTION REQUIRED:", "missing '**Rationale:**'", "| Item | Section(s) | Note |"}},
		{"INTEGRATION_MISSING", []string{"INTEGRATED SPEC INCOMPLETE:", "missing '**Rationale:**'", "its own Resolution Log row"}},
		{"INTEGRATION_STALE", []string{"RESOLVED GAP STILL DESCRIBED AS OPEN:", "missing '**Rationale:**'", "drop the gap's marker"}},
		{"TRUNCATED", []string{"ANSWER CUT BY THE TOKEN LIMIT:", "cut off by the output token limit", "keep it concise"}},
		{"REFUSAL", []string{"TASK RESTATED:", "benign technical task", "software\nspecification document"}},
		{"CLARIFICATION", []string{"NO QUESTIONS BACK:", "missing '**Rationale:**'", "Do not ask questions back", "LOW confidence"}},
		{"AMBIGUOUS_STRUCTURE", []string{"AMBIGUOUS STRUCTURE:", "missing '**Rationale:**'", "## Gap Resolution: GAP-XXX", "## DISAGREE: ISSUE-R{N}-NNN"}},
		{"MALFORMED_GAP", []string{"GAP LIST FORMAT CORRECTION REQUIRED:", "missing '**Rationale:**'", "- GAP-AREA-NNN (SEVERITY): one-line title\n  Location:", "NO_GAPS_FOUND"}},
		{"DUPLICATE_GAP", []string{"DUPLICATE GAP ID:", "missing '**Rationale:**'", "These IDs are taken by the gaps already listed:\n- GAP-FLOW-001"}},
		{"UNLOCATED_GAP", []string{"LOCATION NOT FOUND IN THE SPEC:", "missing '**Rationale:**'", "in double quotes, copied exactly"}},
		{"SOMETHING_ELSE", []string{"Please review your output and try again."}},
	}
	for _, tt := range tests {
		got := Modification(tt.failure, c)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("Modification(%s) lacks %q:\n%s", tt.failure, w, got)
			}
		}
		if Label(tt.failure) == "" {
			t.Errorf("Label(%s) empty", tt.failure)
		}
	}
	if got := Modification("NO_GAPS_ADDRESSED", Context{}); !strings.Contains(got, "Begin with: ## Gap Resolution: GAP-XXX") {
		t.Errorf("no gaps: first gap placeholder missing:\n%s", got)
	}
	// A discovery call's WRONG_FORMAT restates the gap list, not the
	// Engineer's and Reviewer's headers.
	got := Modification(validate.WrongFormat, Context{Role: "discovery"})
	for _, w := range []string{"held no gap list and did not say NO_GAPS_FOUND", "  Why: what an implementer cannot decide"} {
		if !strings.Contains(got, w) {
			t.Errorf("discovery WRONG_FORMAT lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "## Gap Resolution") {
		t.Errorf("discovery WRONG_FORMAT names the Engineer's header:\n%s", got)
	}
	if got := Modification(validate.DuplicateGap, Context{}); strings.Contains(got, "taken") {
		t.Errorf("DUPLICATE_GAP without a list names taken IDs:\n%s", got)
	}
}

// Every retriable failure type has a text of its own; the types no retry
// follows and unknown types get the spec's fallback, so a failure type
// added to validate without a text here fails this test.
func TestEveryRetriableTypeHasItsText(t *testing.T) {
	for _, ft := range append(validate.FailureTypes(), "SOMETHING_ELSE", "") {
		mod, label := Modification(ft, Context{}), Label(ft)
		generic := mod == GenericModification
		if generic != (label == GenericLabel) {
			t.Errorf("%q: Modification generic %v but Label %q", ft, generic, label)
		}
		if want := !ft.Retriable(); generic != want {
			t.Errorf("%q (retriable %v): Modification is the generic text: %v, want %v", ft, ft.Retriable(), generic, want)
		}
	}
}

func TestEscalationQuestion(t *testing.T) {
	e := EscalationQuestion("engineer", 7, "NO_GAPS_ADDRESSED", 3, false)
	for _, w := range []string{
		"Engineer could not produce valid output after 3 attempts.",
		"Round: 7\nRole: Engineer\nFailure Type: NO_GAPS_ADDRESSED",
		"1. Skip Engineer this round - Proceed without Engineer output",
		"Effect: Round 7 recorded as \"Engineer: SKIP\"",
		"4. Narrow scope - Address only the simplest gap",
		"5. Pause session - Save state for later",
		"Choose an option (1-5): ___",
	} {
		if !strings.Contains(e.Body, w) {
			t.Errorf("body lacks %q:\n%s", w, e.Body)
		}
	}
	if len(e.Options) != 5 || e.Default != OptionSkip || !e.Options[0].Recommended {
		t.Errorf("options %d default %q", len(e.Options), e.Default)
	}
	// The body is the one refine rendered before options were listed by
	// question.Menu, byte for byte.
	want := `Reviewer could not produce valid output after 2 attempts.

=== Situation ===
Round: 3
Role: Reviewer
Failure Type: WRONG_FORMAT
Attempts: 2 (all failed validation)

=== Options ===
1. Skip Reviewer this round - Proceed without Reviewer output
   Effect: Round 3 recorded as "Reviewer: SKIP"

2. Reassign gaps - Choose different gaps for this round
   Effect: Select from non-blocked gaps in status.md (answer text may list gap IDs)

3. Provide context - Add information Reviewer may be missing
   Effect: Text input added to prompt, one additional retry

4. Narrow scope - Address only the simplest gap
   Effect: Reassign to single lowest-complexity gap

5. Pause session - Save state for later
   Effect: Session saved, can resume with fresh context

Choose an option (1-5): ___`
	if diff := cmp.Diff(want, EscalationQuestion("reviewer", 3, "WRONG_FORMAT", 2, false).Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	// With a rollback possible, the sixth option is offered and listed.
	rb := EscalationQuestion("engineer", 7, "NO_GAPS_ADDRESSED", 3, true)
	if n := len(rb.Options); n != 6 || rb.Options[5].Key != OptionRollback {
		t.Fatalf("with rollback: %d options", n)
	}
	for _, w := range []string{"6. Roll back this round - Archive it, restore the state before it, and retry\n   Effect: ", "Choose an option (1-6): ___"} {
		if !strings.Contains(rb.Body, w) {
			t.Errorf("body with rollback lacks %q:\n%s", w, rb.Body)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 8 * time.Second}
	one := func() float64 { return 0.999999 }
	zero := func() float64 { return 0 }
	tests := []struct {
		n    int
		hint time.Duration
		rnd  func() float64
		want time.Duration
	}{
		{1, 0, zero, 0},
		{1, 0, one, time.Second - time.Microsecond},
		{2, 0, one, 2*time.Second - 2*time.Microsecond},
		{4, 0, one, 8*time.Second - 8*time.Microsecond},
		{30, 0, one, 8*time.Second - 8*time.Microsecond}, // capped, no overflow
		{1, 3 * time.Second, zero, 3 * time.Second},      // hint honoured
		{1, time.Hour, zero, 8 * time.Second},            // hint bounded by Max
	}
	for _, tt := range tests {
		got := b.Delay(tt.n, tt.hint, tt.rnd)
		if d := got - tt.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("Delay(%d, %s) = %s, want ≈%s", tt.n, tt.hint, got, tt.want)
		}
	}
}
