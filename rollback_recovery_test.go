package refine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
)

// conflictSection is the decisions.md section of the resolution of issue.
func conflictSection(doc, issue string) string {
	i := strings.Index(doc, "\n### "+issue+":")
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(doc[i+1:], "\n")
	return section(doc, line)
}

// "Modify before re-applying" asks which decision and what it becomes
// (MODIFY DECISION), changes that one only and asks again for the others:
// re-applied afterwards, they read in decisions.md byte for byte as when
// re-applied unchanged (#40 item 2a; round-06 Example 5).
func TestDecisionRecoveryModifiesOneDecision(t *testing.T) {
	ctx := context.Background()
	const edit = "Choice: 2 consecutive FLAT rounds, then a warning\nRationale: agreed with the hosts"

	// Both re-applied unchanged.
	s, cfg, sc, _, _ := example5Session(t, scripted{"DECISION RECOVERY", refine.Answer{Key: "3"}})
	if _, err := s.Step(ctx); err != nil {
		t.Fatalf("retry: %v (asked %v)", err, sc.titles())
	}
	plain := get(t, cfg, "decisions.md")

	// DECISION-R6-002 modified, then DECISION-R6-001 re-applied.
	s, cfg, sc, _, _ = example5Session(t,
		scripted{"DECISION RECOVERY", refine.Answer{Key: "4"}},
		scripted{"MODIFY DECISION", refine.Answer{Key: "2", Text: edit}},
		scripted{"DECISION RECOVERY", refine.Answer{Key: "1"}},
	)
	if _, err := s.Step(ctx); err != nil {
		t.Fatalf("retry: %v (asked %v)", err, sc.titles())
	}
	var got []string
	for _, q := range sc.asked {
		if q.Title == "DECISION RECOVERY" || q.Title == "MODIFY DECISION" {
			got = append(got, q.Title+" "+q.ID)
		}
	}
	if want := "DECISION RECOVERY rollback-recovery-r6; MODIFY DECISION rollback-modify-r6-2; DECISION RECOVERY rollback-recovery-r6-3"; strings.Join(got, "; ") != want {
		t.Errorf("questions %q, want %q", strings.Join(got, "; "), want)
	}
	mq, _ := sc.find("MODIFY DECISION")
	for _, want := range []string{"1. DECISION-R6-001: Conflict ISSUE-R5-001", "2. DECISION-R6-002: Conflict ISSUE-R5-002", "Only that decision changes"} {
		if !strings.Contains(mq.Body, want) {
			t.Errorf("MODIFY DECISION lacks %q:\n%s", want, mq.Body)
		}
	}
	if o, ok := mq.Option("back"); !ok || mq.Default != "back" || !strings.Contains(o.Label, "nothing changes") {
		t.Errorf("MODIFY DECISION offers no way back as its default: %+v", mq.Options)
	}
	again := sc.asked[len(sc.asked)-1]
	for _, q := range sc.asked {
		if q.ID == "rollback-recovery-r6-3" {
			again = q
		}
	}
	if !strings.Contains(again.Body, "Re-applied as modified: DECISION-R6-002.") || strings.Contains(again.Body, "DECISION-R6-002:") {
		t.Errorf("the recovery question asked again does not list only the others:\n%s", again.Body)
	}

	modified := get(t, cfg, "decisions.md")
	if a, b := conflictSection(plain, "ISSUE-R5-001"), conflictSection(modified, "ISSUE-R5-001"); a == "" || a != b {
		t.Errorf("the decision not modified changed:\n--- re-applied unchanged:\n%s\n--- after modifying the other:\n%s", a, b)
	}
	two := conflictSection(modified, "ISSUE-R5-002")
	if two == "" {
		t.Fatalf("decisions.md lacks the modified decision:\n%s", modified)
	}
	for _, want := range []string{"2 consecutive FLAT rounds, then a warning", "agreed with the hosts", "(modified)"} {
		if !strings.Contains(two, want) {
			t.Errorf("the modified decision lacks %q:\n%s", want, two)
		}
	}
	if strings.Count(modified, "(modified)") != 1 {
		t.Errorf("the edit reached more than one decision:\n%s", modified)
	}
	if conflictSection(plain, "ISSUE-R5-002") == two {
		t.Error("the modified decision reads as the unchanged one")
	}
}

// Back from MODIFY DECISION changes nothing and asks the recovery question
// again; automated mode (no one to edit) goes back and leaves the
// decisions archived.
func TestDecisionRecoveryModifyBack(t *testing.T) {
	ctx := context.Background()
	s, cfg, sc, _, _ := example5Session(t, scripted{"DECISION RECOVERY", refine.Answer{Key: "4", Text: "Choice: weights 8, 4, 2, 1"}})
	if _, err := s.Step(ctx); err != nil {
		t.Fatalf("retry: %v (asked %v)", err, sc.titles())
	}
	mq, ok := sc.find("MODIFY DECISION")
	if !ok || len(mq.TextRequired) != 0 || !strings.Contains(mq.Body, `uses the text given with "Modify": "Choice: weights 8, 4, 2, 1"`) {
		t.Errorf("MODIFY DECISION with the text given with Modify: %+v", mq)
	}
	dec := get(t, cfg, "decisions.md")
	if strings.Contains(dec, "(modified)") || conflictSection(dec, "ISSUE-R5-001") != "" || conflictSection(dec, "ISSUE-R5-002") != "" {
		t.Errorf("going back re-applied something:\n%s", dec)
	}
	if n := strings.Count(strings.Join(sc.titles(), ";"), "DECISION RECOVERY"); n != 2 {
		t.Errorf("DECISION RECOVERY asked %d times, want 2 (again after back); asked %v", n, sc.titles())
	}
}
