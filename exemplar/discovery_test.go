package exemplar

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// The discovery call takes the built-in example after every failure but
// FILE_MISSING, with a description for the failure; the three failures
// only discovery has map to it whatever role a caller names.
func TestSelectDiscovery(t *testing.T) {
	canonical := Canonical{Engineer: canonicalEngineer, Reviewer: canonicalReviewer}
	history := []HistoryItem{{Round: 1, Role: "reviewer", Content: canonicalReviewer}}
	builtIn := func(desc string) selView {
		return selView{Tier: TierTemplate, Source: SourceTemplate, Description: desc, Text: DiscoveryTemplate, Notes: []string{noteDiscoveryTiers}}
	}
	tests := []struct {
		role    gap.Role
		failure validate.FailureType
		want    selView
	}{
		{gap.Discovery, validate.MalformedGap, builtIn("Built-in example - follow this format exactly")},
		{gap.Discovery, validate.WrongFormat, builtIn("Built-in example - follow this format exactly")},
		{gap.Discovery, validate.DuplicateGap, builtIn("Built-in example - one gap per ID, none from the given list")},
		{gap.Discovery, validate.UnlocatedGap, builtIn("Built-in example - a Location quotes the spec or names a heading")},
		{gap.Discovery, validate.EmptyOutput, builtIn("Built-in example - a gap line, then its Location and Why")},
		{" Discovery ", "unlocated_gap", builtIn("Built-in example - a Location quotes the spec or names a heading")},
		{gap.Reviewer, validate.UnlocatedGap, builtIn("Built-in example - a Location quotes the spec or names a heading")},
		{gap.Discovery, validate.MissingFile, selView{Tier: TierNone, Source: SourceNone, Description: "No example attached - file creation issue",
			Notes: []string{"FILE_MISSING: no example helps with a file creation issue"}}},
	}
	for _, tt := range tests {
		got := Select(Request{Role: tt.role, FailureType: tt.failure, CurrentRound: 1, Canonical: canonical, History: history, Budget: RetryBudget})
		if diff := cmp.Diff(tt.want, view(got)); diff != "" {
			t.Errorf("%s after %s (-want +got):\n%s", tt.role, tt.failure, diff)
		}
	}
	init := SelectInitial(Request{Role: gap.Discovery, Canonical: canonical, Budget: InitialBudget})
	if init.Tier != TierTemplate || init.Text != DiscoveryTemplate {
		t.Errorf("initial discovery example: tier %d, %q", init.Tier, init.Text)
	}
	if text, ok := Template(gap.Discovery); !ok || text != DiscoveryTemplate {
		t.Errorf("Template(discovery) = %q, %v", text, ok)
	}
}

// The built-in example is a valid discovery answer in form, so a model
// that follows it exactly is not failed for its format.
func TestDiscoveryTemplateIsAValidAnswer(t *testing.T) {
	r := validate.Discovery(DiscoveryTemplate, validate.DiscoveryOptions{})
	if !r.Success || len(r.Gaps) != 2 || len(r.Warnings) > 0 || len(r.Normalized) > 0 {
		t.Fatalf("%s: %s (%d gaps, warnings %q, normalized %v)", r.FailureType, r.Message, len(r.Gaps), r.Warnings, r.Normalized)
	}
}
