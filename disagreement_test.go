package refine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// rejectedPosition is the Engineer position of disagreeDoc, which the
// user rejects (option A) in the tests below.
const rejectedPosition = "The retry bound should stay implementation-defined; fixing it in the spec over-constrains hosts."

// A DISAGREE with a LOW issue is a low-priority conflict (FLOW-006 §7):
// its question recommends the Engineer's position, so automated mode
// resolves it that way; it blocks no gap and nothing else waits on it.
func TestLowDisagreementIsALowPriorityConflict(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		revisedDoc("GAP-TEST-001", "ISSUE-R1-001")+"\n"+disagreeBlock("ISSUE-R1-002", "field names could be shorter (GAP-TEST-001)"),
	)
	rev := refinetest.Script(
		reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified", "LOW: field names could be shorter"),
		reviewerDoc(2, "GAP-TEST-001"),
	)
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v, want COMPLETE after round 2", out)
	}
	st, _ := s.Status(ctx)
	if len(st.Conflicts) != 1 || st.Conflicts[0].IssueID != "ISSUE-R1-002" || st.Conflicts[0].Open() {
		t.Errorf("conflicts = %+v, want ISSUE-R1-002 resolved", st.Conflicts)
	}
	if !slices.ContainsFunc(st.Decisions, func(d refine.DecisionStatus) bool { return d.Issue == "ISSUE-R1-002" && d.Option == "B" }) {
		t.Errorf("decisions = %+v, want ISSUE-R1-002 resolved toward the Engineer (B)", st.Decisions)
	}
	status := get(t, cfg, "status.md")
	if strings.Contains(status, "BLOCKED") {
		t.Errorf("status.md shows a BLOCKED gap for a LOW disagreement")
	}
}

// Left unresolved when the session ends, a LOW conflict is a known
// limitation in final_summary.md.
func TestUnresolvedLowConflictIsAKnownLimitation(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		revisedDoc("GAP-TEST-001", "ISSUE-R1-001")+"\n"+disagreeBlock("ISSUE-R1-002", "field names could be shorter (GAP-TEST-001)"),
	)
	rev := refinetest.Script(
		reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified", "LOW: field names could be shorter"),
		reviewerDoc(2, "GAP-TEST-001"),
	)
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || len(out.Pending) == 0 || !strings.Contains(out.Pending[0].Title, "ISSUE-R1-002 (LOW)") {
		t.Fatalf("Run: %+v, %v; want the LOW conflict question pending", out, err)
	}
	if err := s.Approve(ctx, refine.ApproveRequest{Note: "ship it"}); err != nil {
		t.Fatalf("Approve with a LOW conflict open: %v (a LOW conflict blocks nothing)", err)
	}
	sum := get(t, cfg, "final_summary.md")
	if !strings.Contains(sum, "ISSUE-R1-002") || !strings.Contains(sum, "unresolved conflict") {
		t.Errorf("final_summary.md does not list the unresolved LOW conflict as a known limitation:\n%s", sum)
	}
}

// A disagreement the Mediator cannot tie to any issue is logged in
// status.md; a DISAGREE block naming an issue that does not exist fails
// validation (INVALID_DISAGREE_REF, as GAP-FLOW-006 §2 says) and is
// retried with the failure in the prompt.
func TestUnmatchedDisagreement(t *testing.T) {
	informal := `
## Disagree: glossary wording

The glossary terms are fine as written; renaming them churns every reader
for no benefit, and the terms already match the industry's usage.
`
	badRef := disagreeBlock("ISSUE-R1-009", "retry bound unspecified (GAP-TEST-001)")
	fix := revisedDoc("GAP-TEST-001", "ISSUE-R1-001")
	tests := []struct {
		name        string
		round2      []string // Engineer attempts of round 2
		wantCalls   int
		wantLogged  []string // in status.md's round 2 errors
		wantFailure string   // in status.md and the retry prompt
	}{
		{
			name:       "informal disagreement matching no issue is logged",
			round2:     []string{fix + informal},
			wantCalls:  2,
			wantLogged: []string{"Unmatched DISAGREE block (logged)", "names no issue and matches no issue of round 1: The glossary terms are fine as written"},
		},
		{
			name:        "DISAGREE naming an unknown issue is a validation failure",
			round2:      []string{fix + badRef, fix},
			wantCalls:   3,
			wantFailure: "DISAGREE references ISSUE-R1-009 which does not exist",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := refinetest.Script(append([]string{engineerDoc("GAP-TEST-001")}, tt.round2...)...)
			rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(2, "GAP-TEST-001"))
			ask := refinetest.Keys()
			cfg := refinetest.Config(eng, rev, ask)
			_, out := run(t, cfg)
			if out.Status != refine.StatusComplete || out.Round != 2 {
				t.Fatalf("outcome %+v, want COMPLETE after round 2", out)
			}
			if len(ask.Asked()) != 0 {
				t.Errorf("questions asked: %v", kindsOf(ask.Asked()))
			}
			if eng.CallCount() != tt.wantCalls {
				t.Errorf("engineer calls = %d, want %d", eng.CallCount(), tt.wantCalls)
			}
			status := get(t, cfg, "status.md")
			errs := section(status, "## Round 2 Errors")
			for _, want := range tt.wantLogged {
				if !strings.Contains(errs, want) {
					t.Errorf("status.md round 2 errors lack %q:\n%s", want, status)
				}
			}
			if tt.wantFailure == "" {
				return
			}
			if strings.Contains(errs, "Unmatched DISAGREE block") {
				t.Errorf("a DISAGREE rejected by validation was also logged as unmatched")
			}
			log := section(status, "## Round 2 Validation Log")
			if !strings.Contains(log, "INVALID_DISAGREE_REF") || !strings.Contains(log, tt.wantFailure) {
				t.Errorf("round 2 validation log lacks the failure:\n%s", log)
			}
			if p := eng.Prompt(2); !strings.Contains(p, "RETRY ATTEMPT 1 of 2") || !strings.Contains(p, "ISSUE-R1-009") {
				t.Errorf("retry prompt does not name the bad reference:\n%s", p)
			}
		})
	}
}

// An Engineer output that restates a position the user rejected is valid
// but warned about: the warning reaches status.md's validation log and the
// round summary.
func TestRepeatedRejectedPositionWarning(t *testing.T) {
	issue := "retry bound unspecified (GAP-TEST-001)"
	repeat := revisedDoc("GAP-TEST-001", "ISSUE-R1-001") + "\n## Notes\n\n" + rejectedPosition + "\n"
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue),
		repeat,
	)
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(3, "GAP-TEST-001"))
	ask := then(refinetest.Keys("A")) // the Reviewer's position wins; defaults after
	cfg := refinetest.Config(eng, rev, ask)
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 3 {
		t.Fatalf("outcome %+v, want COMPLETE after round 3", out)
	}
	if eng.CallCount() != 3 {
		t.Errorf("engineer calls = %d, want 3 (a repeated position is a warning, not a failure)", eng.CallCount())
	}
	const want = "Engineer may be proposing same position rejected in ISSUE-R1-001"
	log := section(get(t, cfg, "status.md"), "## Round 3 Validation Log")
	if !strings.Contains(log, want) || !strings.Contains(log, "DECISION-R2-001") {
		t.Errorf("status.md round 3 validation log lacks the compliance warning:\n%s", log)
	}
	summary := section(get(t, cfg, "round_003/summary.md"), "## Validation Warnings")
	if !strings.Contains(summary, "Engineer: "+want) {
		t.Errorf("round 3 summary lacks the compliance warning:\n%s", get(t, cfg, "round_003/summary.md"))
	}
}

// A conflict resolution of a rolled-back round is archived and offered by
// the decision-recovery question; each answer is acted on.
func TestConflictResolutionRecoveredAfterRollback(t *testing.T) {
	tests := []struct {
		name       string
		answer     refine.Answer
		reapplied  bool
		wantChoice string // in the re-applied decision
	}{
		{"re-apply", refine.Answer{Key: "1"}, true, "Keep the Engineer's position"},
		{"modify and apply", refine.Answer{Key: "2", Text: "Choice: cap retries at three\nRationale: agreed with the hosts"}, true, "cap retries at three"},
		{"leave archived", refine.Answer{Key: "3"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			issue := "retry bound unspecified (GAP-TEST-001)"
			// Round 2 disagrees until the rollback; its retry revises.
			var rolledBack bool
			eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
				switch {
				case req.Round == 1:
					return refine.Response{Content: engineerDoc(req.Gaps...)}, nil
				case !rolledBack:
					return refine.Response{Content: disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue)}, nil
				}
				return refine.Response{Content: revisedDoc("GAP-TEST-001", "ISSUE-R1-001")}, nil
			})
			rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
				if req.Round == 1 {
					return refine.Response{Content: reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified")}, nil
				}
				return refine.Response{Content: reviewerDoc(req.Round, "GAP-TEST-001")}, nil
			})
			sc := &script{answers: []scripted{
				{"Conflict: ISSUE-R1-001", refine.Answer{Key: "B"}}, // the Engineer's position stands
				{"DECISION RECOVERY", tt.answer},
			}}
			cfg := refinetest.Config(eng, rev, sc)
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 2; i++ {
				if _, err := s.Step(ctx); err != nil {
					t.Fatalf("round %d: %v (asked %v)", i, err, sc.titles())
				}
			}
			st, _ := s.Status(ctx)
			if len(st.Conflicts) != 1 || st.Conflicts[0].DecisionID != "DECISION-R2-001" {
				t.Fatalf("round 2 conflicts = %+v (asked %v)", st.Conflicts, sc.titles())
			}
			rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "round 2 argued instead of fixing", Adjustments: []string{"Address ISSUE-R1-001."}})
			if err != nil {
				t.Fatal(err)
			}
			rolledBack = true
			files := archiveFiles(t, cfg, rep.Archives[0])
			if !strings.Contains(string(files["decisions_from_round_2.md"]), "DECISION-R2-001") {
				t.Errorf("archive lacks the conflict resolution:\n%s", files["decisions_from_round_2.md"])
			}
			if strings.Contains(get(t, cfg, "decisions.md"), "### ISSUE-R1-001") {
				t.Errorf("decisions.md still holds the undone resolution")
			}
			out, err := s.Run(ctx)
			if err != nil || out.Status != refine.StatusComplete {
				t.Fatalf("run after rollback = %+v %v (asked %v)", out, err, sc.titles())
			}
			q, ok := sc.find("DECISION RECOVERY")
			if !ok {
				t.Fatalf("no DECISION RECOVERY question; asked %v", sc.titles())
			}
			if !strings.Contains(q.Body, "1. DECISION-R2-001: Conflict ISSUE-R1-001") {
				t.Errorf("recovery question does not offer the resolution:\n%s", q.Body)
			}
			if got, want := strings.Join(sc.titles(), "; "), "Conflict: ISSUE-R1-001; DECISION RECOVERY; ARCHIVE CLEANUP"; !strings.HasPrefix(got, "Conflict: ISSUE-R1-001") || !strings.Contains(got, "DECISION RECOVERY; ARCHIVE CLEANUP") {
				t.Errorf("questions = %s, want %s", got, want)
			}
			st, _ = s.Status(ctx)
			ids := map[string]bool{}
			for _, d := range st.Decisions {
				if ids[d.ID] {
					t.Errorf("decision ID %s issued twice: %+v", d.ID, st.Decisions)
				}
				ids[d.ID] = true
			}
			found := slices.ContainsFunc(st.Decisions, func(d refine.DecisionStatus) bool { return d.ID == "DECISION-R2-001" && d.Issue == "ISSUE-R1-001" })
			if found != tt.reapplied {
				t.Errorf("DECISION-R2-001 in force = %v, want %v (decisions %+v)", found, tt.reapplied, st.Decisions)
			}
			dec := get(t, cfg, "decisions.md")
			if strings.Contains(dec, "### ISSUE-R1-001") != tt.reapplied {
				t.Errorf("decisions.md holds the resolution = %v, want %v:\n%s", !tt.reapplied, tt.reapplied, dec)
			}
			if tt.reapplied {
				if !strings.Contains(dec, "Re-applied from rolled-back Round 2") || !strings.Contains(dec, tt.wantChoice) {
					t.Errorf("decisions.md lacks the re-applied note or choice %q:\n%s", tt.wantChoice, dec)
				}
			}
			// The retried round's Engineer prompt carries a re-applied resolution.
			calls := eng.Calls()
			last := calls[len(calls)-1]
			prompt := last.Messages[len(last.Messages)-1].Content
			if strings.Contains(prompt, "CONFLICT RESOLUTIONS FROM PREVIOUS ROUND") != tt.reapplied {
				t.Errorf("retried round prompt carries the resolution = %v, want %v:\n%s", !tt.reapplied, tt.reapplied, prompt)
			}
		})
	}
}

// section returns the part of a markdown document from the heading line
// to the next heading of the same or a higher level ("" when absent).
func section(doc, heading string) string {
	i := strings.Index(doc, heading+"\n")
	if i < 0 {
		return ""
	}
	level := strings.IndexByte(heading, ' ')
	rest := doc[i+len(heading)+1:]
	for off := 0; off < len(rest); {
		nl := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if nl >= 0 {
			line = rest[off : off+nl]
		}
		if j := strings.IndexByte(line, ' '); j > 0 && j <= level && strings.Trim(line[:j], "#") == "" {
			return doc[i : i+len(heading)+1+off]
		}
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	return doc[i:]
}
