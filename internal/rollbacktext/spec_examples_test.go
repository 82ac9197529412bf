package rollbacktext

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// The five worked examples of round-06 "### Examples", driven through the
// packages the way the engine drives them.

func entryNames(t *testing.T, archive []byte) []string {
	t.Helper()
	es, err := rollback.ListArchive(archive, rollback.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		n := e.Name
		if e.Dir {
			n += "/"
		}
		names = append(names, n)
	}
	return names
}

// Example 1: Auto-Retry Success.
const example1Engineer = `## Gap Resolution: GAP-FLOW-005

**Confidence:** HIGH

### Proposed Solution

Terminate the session when zero gaps are open and the last review approved.
Stop after 10 rounds with outcome MAX_ROUNDS, and after 2 flat rounds ask the
user whether to narrow scope or accept the remaining gaps.

### Examples

**Example 1: Complete**
Round 6 ends with 0 open gaps and an APPROVE verdict: outcome COMPLETE.

**Example 2: Edge case - max rounds**
Round 10 ends with 2 open MEDIUM gaps: outcome MAX_ROUNDS.

### New Gaps Introduced

None.
`

func TestSpecExample1AutoRetrySuccess(t *testing.T) {
	s := session(t, 4)
	s[rollback.RoundPrefix(4)+"engineer.md"] = []byte(example1Engineer)

	// Output flagged: missing trade-offs → MISSING_SECTIONS, nothing else.
	det := rollback.DetectPatterns(rollback.Input{
		Engineer: example1Engineer,
		Assigned: []gap.ID{"GAP-FLOW-005"},
		Known:    []gap.ID{"GAP-FLOW-001", "GAP-FLOW-005"},
	})
	if got, want := det.FailurePattern(), "MISSING_SECTIONS (Trade-offs absent)"; got != want {
		t.Fatalf("failure pattern = %q, want %q", got, want)
	}

	// AUTO_RETRY, first rollback of round 4: no question.
	pol := rollback.Policy{Mode: rollback.ModeAutoRetry}
	step := pol.Next(4, rollback.History{}, false, false)
	if diff := cmp.Diff(rollback.Step{Attempt: 1, Mode: rollback.ModeAutoRetry, AutoRetry: true}, step); diff != "" {
		t.Fatalf("step (-want +got):\n%s", diff)
	}
	adjs := rollback.AutoAdjustments(det)
	if got, want := rollback.PromptText(adjs), "You MUST include a ### Trade-offs section with at least 2 pros and 2 cons."; got != want {
		t.Errorf("auto-adjustment prompt = %q, want %q", got, want)
	}

	// Archives round_004, restores backups of round 3.
	plan, err := rollback.PlanRollback(rollback.Request{Current: 4, To: 3, Keys: s.keys()})
	if err != nil {
		t.Fatal(err)
	}
	wantPlan := rollback.Plan{
		Current: 4, To: 3,
		Rounds: []rollback.RoundPlan{{Round: 4, Attempt: 1, Archive: "round_004_rolled_back_1.tar.gz", Keys: []string{
			"round_004/attempts/engineer-1.md", "round_004/engineer.md", "round_004/reviewer.md",
		}}},
		Restore: []rollback.Copy{
			{From: "status_backup_round_3.md", To: "status.md"},
			{From: "decisions_backup_round_3.md", To: "decisions.md"},
			{From: "state_backup_round_3.json", To: "state.json"},
		},
		Delete: []string{"round_004/attempts/engineer-1.md", "round_004/engineer.md", "round_004/reviewer.md"},
	}
	if diff := cmp.Diff(wantPlan, plan); diff != "" {
		t.Fatalf("plan (-want +got):\n%s", diff)
	}
	res, err := plan.Execute(rollback.Execution{
		Files: s.read(t, plan.Reads()), At: t0, Reason: "Validation: missing trade-offs section",
		Mode: step.Mode, Trigger: rollback.TriggerValidation, Adjustments: rollback.Summaries(adjs),
		Patterns: map[int][]rollback.Pattern{4: det.Patterns()},
		Analyses: map[int]string{4: AnalysisReport(ReportInput{Round: 4, Attempt: 1, Reason: "Validation: missing trade-offs section", At: t0, Detection: det})},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.apply(res.Ops())

	if diff := cmp.Diff([]string{
		"round_004_rolled_back/",
		"round_004_rolled_back/analysis.md",
		"round_004_rolled_back/attempts/",
		"round_004_rolled_back/attempts/engineer-1.md",
		"round_004_rolled_back/decisions_from_round_4.md",
		"round_004_rolled_back/engineer.md",
		"round_004_rolled_back/reviewer.md",
		"round_004_rolled_back/rollback_metadata.json",
	}, entryNames(t, s["round_004_rolled_back_1.tar.gz"])); diff != "" {
		t.Errorf("archive entries (-want +got):\n%s", diff)
	}
	files, meta, err := rollback.ReadArchive(s["round_004_rolled_back_1.tar.gz"], rollback.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(files["engineer.md"]); got != example1Engineer {
		t.Errorf("archived engineer.md = %q", got)
	}
	wantMeta := `{
  "original_round": 4,
  "rollback_timestamp": "2026-01-12T14:30:00Z",
  "reason": "Validation: missing trade-offs section",
  "attempt_number": 1,
  "user_adjustments": [
    "Added structural requirement for ### Trade-offs section"
  ],
  "mode": "AUTO_RETRY",
  "trigger": "VALIDATION_FAILURE",
  "target_round": 3
}
`
	if diff := cmp.Diff(wantMeta, string(files[rollback.MetadataName])); diff != "" {
		t.Errorf("rollback_metadata.json (-want +got):\n%s", diff)
	}
	if meta.OriginalRound != 4 || meta.AttemptNumber != 1 {
		t.Errorf("metadata = %+v", meta)
	}
	for _, k := range []string{"round_004/engineer.md", "status_backup_round_3.md", "status_backup_round_1.md"} {
		_, ok := s[k]
		if want := k != "round_004/engineer.md"; ok != want {
			t.Errorf("key %s present = %v, want %v", k, ok, want)
		}
	}
	if !strings.HasPrefix(string(s[rollback.StateKey]), `{"schema":1,"round":3}`) {
		t.Errorf("state.json not restored from round 3: %s", s[rollback.StateKey])
	}

	// Retry succeeds: the status.md entry of Example 1, verbatim.
	entry := AutoRetryBlock(AutoRetry{
		Round: 4, Attempt: step.Attempt, Threshold: 2,
		FailurePattern: det.FailurePattern(), Adjustments: rollback.Summaries(adjs),
		Outcome: "Successful on retry",
	})
	want := `## Round 4 Auto-Retry
**Attempt:** 1 of 2 before user prompt
**Failure Pattern:** MISSING_SECTIONS (Trade-offs absent)
**Auto-Adjustments Applied:**
- Added structural requirement for ### Trade-offs section
**Outcome:** Successful on retry
`
	if diff := cmp.Diff(want, entry); diff != "" {
		t.Errorf("status.md entry (-want +got):\n%s", diff)
	}
}

// Example 2: Multi-Round Rollback from the end of round 8 to round 5.
func TestSpecExample2MultiRound(t *testing.T) {
	s := session(t, 8)
	targets := rollback.AvailableTargets(8, s.keys())
	if diff := cmp.Diff([]int{7, 6, 5}, targets); diff != "" {
		t.Fatalf("targets (-want +got):\n%s", diff)
	}
	info := []Target{{Round: 7, OpenGaps: 12, DecisionsSince: 1}, {Round: 6, OpenGaps: 14, DecisionsSince: 3}, {Round: 5, OpenGaps: 16, DecisionsSince: 5}}
	p := ConfirmQuestion(8, info[2], info, 10)
	wantBody := `Available rollback targets:
| Target | Gaps at Target | Decisions Since | Rounds to Undo |
|--------|----------------|-----------------|----------------|
| Round 7 | 12 open | 1 decision | 1 |
| Round 6 | 14 open | 3 decisions | 2 |
| Round 5 | 16 open | 5 decisions | 3 |

Rollback to Round 5 will:
- Discard rounds 6, 7, 8
- Restore 16 open gaps (currently 10)
- Archive 5 decisions (can be recovered)
- Create 3 archive files
`
	if diff := cmp.Diff(wantBody, p.Body); diff != "" {
		t.Errorf("prompt body (-want +got):\n%s", diff)
	}
	wantOpts := []question.Option{
		{Key: "1", Label: "Rollback to Round 5 (3 rounds back)", Effect: "rollback-to:5"},
		{Key: "2", Label: "Choose different target", Effect: EffectChooseOther},
		{Key: "3", Label: "Cancel rollback", Effect: EffectCancel},
	}
	if diff := cmp.Diff(wantOpts, p.Options); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if p.Title != "MULTI-ROUND ROLLBACK" || p.Default != "3" {
		t.Errorf("title %q default %q", p.Title, p.Default)
	}

	// User selects 1.
	opt, _ := p.Option("1")
	to, ok := TargetOf(opt.Effect)
	if !ok || to != 5 {
		t.Fatalf("TargetOf(%q) = %d, %v", opt.Effect, to, ok)
	}
	plan, err := rollback.PlanRollback(rollback.Request{Current: 8, To: to, Keys: s.keys()})
	if err != nil {
		t.Fatal(err)
	}
	var archives []string
	for _, rp := range plan.Rounds {
		archives = append(archives, rp.Archive)
	}
	if diff := cmp.Diff([]string{"round_008_rolled_back_1.tar.gz", "round_007_rolled_back_1.tar.gz", "round_006_rolled_back_1.tar.gz"}, archives); diff != "" {
		t.Errorf("archives (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]rollback.Copy{
		{From: "status_backup_round_5.md", To: "status.md"},
		{From: "decisions_backup_round_5.md", To: "decisions.md"},
		{From: "state_backup_round_5.json", To: "state.json"},
	}, plan.Restore); diff != "" {
		t.Errorf("restore (-want +got):\n%s", diff)
	}

	decisions := map[int][]rollback.RoundDecision{
		6: {{ID: "DECISION-R6-001", Summary: "a"}, {ID: "DECISION-R6-002", Summary: "b"}},
		7: {{ID: "DECISION-R7-001", Summary: "c"}, {ID: "DECISION-R7-002", Summary: "d"}},
		8: {{ID: "DECISION-R8-001", Summary: "e"}},
	}
	res, err := plan.Execute(rollback.Execution{
		Files: s.read(t, plan.Reads()), At: t0, Reason: "The last 3 rounds went in a bad direction",
		Mode: rollback.ModeInteractive, Trigger: rollback.TriggerUser, Decisions: decisions,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.apply(res.Ops())

	if diff := cmp.Diff([]string{
		"decisions.md", "decisions_backup_round_5.md",
		"round_001/attempts/engineer-1.md", "round_001/engineer.md", "round_001/reviewer.md",
		"round_002/attempts/engineer-1.md", "round_002/engineer.md", "round_002/reviewer.md",
		"round_003/attempts/engineer-1.md", "round_003/engineer.md", "round_003/reviewer.md",
		"round_004/attempts/engineer-1.md", "round_004/engineer.md", "round_004/reviewer.md",
		"round_005/attempts/engineer-1.md", "round_005/engineer.md", "round_005/reviewer.md",
		"round_006_rolled_back_1.tar.gz", "round_007_rolled_back_1.tar.gz", "round_008_rolled_back_1.tar.gz",
		"state.json", "state_backup_round_5.json", "status.md", "status_backup_round_5.md",
	}, s.keys()); diff != "" {
		t.Errorf("store after rollback (-want +got):\n%s", diff)
	}
	for r := 6; r <= 8; r++ {
		files, meta, err := rollback.ReadArchive(s[rollback.ArchiveName(r, 1)], rollback.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if meta.OriginalRound != r || meta.TargetRound != 5 {
			t.Errorf("round %d metadata = %+v", r, meta)
		}
		got := rollback.ParseDecisionsFromRound(string(files[rollback.DecisionsFileName(r)]))
		if diff := cmp.Diff(decisions[r], got, cmpopts.IgnoreFields(rollback.RoundDecision{}, "Text")); diff != "" {
			t.Errorf("round %d archived decisions (-want +got):\n%s", r, diff)
		}
	}

	wantStatus := "# Status\n\nround 5\n\n" + `## Rollback Notice - Rounds 6-8

Rounds 6, 7, 8 were rolled back to Round 5 at 2026-01-12T14:30:00Z.
Restored status.md, decisions.md and state.json from the Round 5 backups.
Archived to:
  round_008_rolled_back_1.tar.gz
  round_007_rolled_back_1.tar.gz
  round_006_rolled_back_1.tar.gz

Reason: The last 3 rounds went in a bad direction
`
	if diff := cmp.Diff(wantStatus, string(s[rollback.StatusKey])); diff != "" {
		t.Errorf("status.md (-want +got):\n%s", diff)
	}
	dec := string(s[rollback.DecisionsKey])
	for r := 6; r <= 8; r++ {
		block := fmt.Sprintf("## Rollback Notice - Round %d\n\nRound %d was rolled back at 2026-01-12T14:30:00Z.\n"+
			"Decisions from round %d have been archived to:\n  round_%03d_rolled_back/decisions_from_round_%d.md\n\n"+
			"Reason: The last 3 rounds went in a bad direction\n", r, r, r, r, r)
		if !strings.Contains(dec, block) {
			t.Errorf("decisions.md lacks the round %d notice:\n%s", r, dec)
		}
	}
	if !strings.HasPrefix(dec, "# Decisions\n\nthrough round 5\n") {
		t.Errorf("decisions.md not restored from round 5:\n%s", dec)
	}
	if n := len(res.Records); n != 3 {
		t.Errorf("%d history records, want 3 (one per undone round)", n)
	}
}

// Example 3: Root Cause Analysis Triggers Gap Split.
func TestSpecExample3GapSplit(t *testing.T) {
	filler := "This section explains the proposal in enough detail to pass the minimum length check of two hundred characters, so that only the direction of the answer differs between attempts."
	attempts := []rollback.AttemptInfo{
		{Attempt: 1, Reason: "Rollback mechanics unclear", Trigger: rollback.TriggerUser,
			Engineer: "## Gap Resolution: GAP-FLOW-007\n\n### User Prompts\n\n" + filler + "\n\n### Confirmation Dialogs\n\n" + filler + "\n"},
		{Attempt: 2, Reason: "Now UX is unclear instead", Trigger: rollback.TriggerUser,
			Engineer: "## Gap Resolution: GAP-FLOW-007\n\n### State Restoration\n\n" + filler + "\n\n### Backup Rotation\n\n" + filler + "\n"},
	}
	var h rollback.History
	h.Records = append(h.Records, rollback.Record{Round: 7, Attempt: 1, Mode: rollback.ModeAutoRetry, Archive: rollback.ArchiveName(7, 1)})
	step := rollback.Policy{Mode: rollback.ModeAutoRetry}.Next(7, h, false, false)
	if diff := cmp.Diff(rollback.Step{Attempt: 2, Mode: rollback.ModeInteractive, Ask: true, Analyze: true}, step); diff != "" {
		t.Fatalf("step (-want +got):\n%s", diff)
	}

	diag := rollback.Diagnose(attempts)
	if diag.Action != rollback.ActionSplit || diag.Primary == nil || diag.Primary.Heuristic != rollback.DifferentFailureModes || diag.Primary.Confidence != gap.ConfidenceHigh {
		t.Fatalf("diagnosis = %+v", diag)
	}
	p := AnalysisQuestion(RCAInput{
		Round: 7, Attempts: attempts, Diagnosis: diag, Gap: "GAP-FLOW-007", GapTitle: "Rollback mechanism",
		Split: []SplitChild{
			{Title: "Rollback state restoration", Note: "what gets rolled back"},
			{Title: "Rollback user experience", Note: "how user interacts"},
			{Title: "Rollback policies and limits", Note: "constraints"},
		},
	})
	wantBody := `Round 7 has been rolled back twice. This suggests a systematic issue.

=== Rollback History ===
Attempt 1: "Rollback mechanics unclear" (user)
Attempt 2: "Now UX is unclear instead" (user)

=== Possible Root Causes ===
1. Gap scope too large (HIGH confidence)
   Evidence: Rollback reasons divergent; Different sections produced in each attempt (Attempt 1: User Prompts, Confirmation Dialogs; Attempt 2: State Restoration, Backup Rotation)

=== Recommended Actions ===
Based on analysis, recommended action: Split gap

Current gap: GAP-FLOW-007 "Rollback mechanism"
Suggested split:
  - GAP-FLOW-007a: "Rollback state restoration" (what gets rolled back)
  - GAP-FLOW-007b: "Rollback user experience" (how user interacts)
  - GAP-FLOW-007c: "Rollback policies and limits" (constraints)
`
	if diff := cmp.Diff(wantBody, p.Body); diff != "" {
		t.Errorf("analysis body (-want +got):\n%s", diff)
	}
	wantOpts := []question.Option{
		{Key: "1", Label: "Split gap as suggested", Effect: "split", Recommended: true},
		{Key: "2", Label: "Provide additional context for retry", Effect: "context"},
		{Key: "3", Label: "Reassign to different gaps this round", Effect: "reassign"},
		{Key: "4", Label: "Force proceed with best available output", Effect: "force"},
		{Key: "5", Label: "Pause session for external consultation", Effect: "pause"},
	}
	if diff := cmp.Diff(wantOpts, p.Options); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if p.Title != "REPEATED ROLLBACK DETECTED" || p.Default != "1" || p.ID != "rollback-analysis-r7-a2" {
		t.Errorf("prompt = %q default %q id %q", p.Title, p.Default, p.ID)
	}

	// User selects 1 (Split): 007a-c created, linked, 007 SUPERSEDED.
	var l gap.Ledger
	if err := l.Add(gap.Gap{ID: "GAP-FLOW-007", Title: "Rollback mechanism", Severity: gap.High, State: gap.NeedsRevision}); err != nil {
		t.Fatal(err)
	}
	children, err := rollback.ApplySplit(&l, "GAP-FLOW-007", []string{"Rollback state restoration", "Rollback user experience", "Rollback policies and limits"}, 7, t0, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]gap.ID{"GAP-FLOW-007a", "GAP-FLOW-007b", "GAP-FLOW-007c"}, children); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	parent, _ := l.Get("GAP-FLOW-007")
	if parent.State != gap.Superseded {
		t.Errorf("parent state = %s", parent.State)
	}
	for _, id := range children {
		g, _ := l.Get(id)
		if g.State != gap.Open || g.Parent != "GAP-FLOW-007" || g.Severity != gap.High || g.Round != 7 {
			t.Errorf("child %+v", g)
		}
	}

	// status.md history entry of this rollback.
	rec := rollback.Record{
		Round: 7, Attempt: 2, Target: 6, At: t0.Add(75 * 60e9), Mode: step.Mode, Trigger: rollback.TriggerUser,
		Reason: "Now UX is unclear instead", Analysis: diag.Record(), UserDecision: SplitDecision(children),
		Split: &rollback.SplitRecord{Parent: "GAP-FLOW-007", Children: children}, Archive: rollback.ArchiveName(7, 2),
		Outcome: "Proceeded with split gaps", Succeeded: true,
	}
	want := `### Round 7 - Rollback 2
- **Timestamp:** 2026-01-12T15:45:00Z
- **Mode:** INTERACTIVE (second attempt)
- **Reason:** Now UX is unclear instead
- **Root Cause Analysis:** Performed
  - Detected: Gap scope too large
  - Recommendation: Split gap
- **User Decision:** Split gap into 007a, 007b, 007c
- **Archive:** round_007_rolled_back_2.tar.gz
- **Outcome:** Proceeded with split gaps
`
	if diff := cmp.Diff(want, RenderRecord(rec)); diff != "" {
		t.Errorf("history entry (-want +got):\n%s", diff)
	}
}

// Example 4: Session Limit Reached after 7 rollbacks.
func TestSpecExample4SessionLimit(t *testing.T) {
	var h rollback.History
	add := func(round, n int, outcome string) {
		for k := 1; k <= n; k++ {
			h.Records = append(h.Records, rollback.Record{Round: round, Attempt: k, Archive: rollback.ArchiveName(round, k), Outcome: outcome})
		}
	}
	add(3, 2, "gap split resolved")
	add(5, 1, "auto-retry successful")
	add(6, 2, "context added")
	add(7, 2, "still failing")

	s := session(t, 8)
	_, err := rollback.PlanRollback(rollback.Request{Current: 8, To: 7, Keys: s.keys(), History: h})
	var le *rollback.LimitError
	if !errors.Is(err, rollback.ErrLimit) || !errors.As(err, &le) || le.Used != 7 || le.Limit != 7 {
		t.Fatalf("8th rollback: err = %v, want ErrLimit with 7 of 7 used", err)
	}
	step := rollback.DefaultPolicy().Next(8, h, false, false)
	if !step.LimitReached || step.Ask || step.AutoRetry {
		t.Errorf("step = %+v, want LimitReached only", step)
	}

	p := LimitQuestion(h, rollback.DefaultLimit)
	wantBody := `Used: 7 of 7 rollback attempts

Rollback history:
- Round 3: 2 rollbacks (gap split resolved)
- Round 5: 1 rollback (auto-retry successful)
- Round 6: 2 rollbacks (context added)
- Round 7: 2 rollbacks (still failing)

This pattern suggests systematic issues.

Note: Additional rollbacks are not available.
`
	if diff := cmp.Diff(wantBody, p.Body); diff != "" {
		t.Errorf("limit body (-want +got):\n%s", diff)
	}
	var labels []string
	for _, o := range p.Options {
		labels = append(labels, o.Key+". "+o.Label)
	}
	if diff := cmp.Diff([]string{
		"1. Pause for human review - Export session state",
		"2. Accept current state - USER_APPROVED flow",
		"3. Abandon session",
		"4. Prompt refresh (experimental) - Reset Mediator context",
	}, labels); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if p.Title != "SESSION ROLLBACK LIMIT REACHED" || p.Default != "1" {
		t.Errorf("title %q default %q", p.Title, p.Default)
	}
}

// Example 5: Decision Recovery After Rollback of round 6.
func TestSpecExample5DecisionRecovery(t *testing.T) {
	decisions := []rollback.RoundDecision{
		{ID: "DECISION-R6-001", Summary: "Error threshold weights", Choice: "CRITICAL=16, HIGH=4, MEDIUM=2, LOW=1", Rationale: "Matches GAP-FLOW-012 severity definitions"},
		{ID: "DECISION-R6-002", Summary: "Stall detection threshold", Choice: "2 consecutive FLAT rounds", Rationale: "Balances sensitivity and false positives"},
	}
	// Roll back round 6, archiving its decisions.
	s := session(t, 6)
	plan, err := rollback.PlanRollback(rollback.Request{Current: 6, To: 5, Keys: s.keys()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Execute(rollback.Execution{Files: s.read(t, plan.Reads()), At: t0, Reason: "unhelpful", Mode: rollback.ModeInteractive, Trigger: rollback.TriggerUser, Decisions: map[int][]rollback.RoundDecision{6: decisions}})
	if err != nil {
		t.Fatal(err)
	}
	s.apply(res.Ops())

	// "Wait, I still want to keep that decision about error weights":
	// recovered from the history record (or, equally, from the archive).
	files, _, err := rollback.ReadArchive(s[rollback.ArchiveName(6, 1)], rollback.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	fromArchive := rollback.ParseDecisionsFromRound(string(files[rollback.DecisionsFileName(6)]))
	if diff := cmp.Diff(res.Records[0].Decisions, fromArchive, cmpopts.IgnoreFields(rollback.RoundDecision{}, "Text")); diff != "" {
		t.Errorf("archive vs history decisions (-want +got):\n%s", diff)
	}

	p := RecoveryQuestion(6, res.Records[0].Decisions)
	wantBody := `Round 6 decisions were archived. Found 2 decisions:

1. DECISION-R6-001: Error threshold weights
   Choice: "CRITICAL=16, HIGH=4, MEDIUM=2, LOW=1"
   Rationale: "Matches GAP-FLOW-012 severity definitions"

2. DECISION-R6-002: Stall detection threshold
   Choice: "2 consecutive FLAT rounds"
   Rationale: "Balances sensitivity and false positives"
`
	if diff := cmp.Diff(wantBody, p.Body); diff != "" {
		t.Errorf("recovery body (-want +got):\n%s", diff)
	}
	wantOpts := []question.Option{
		{Key: "1", Label: "Re-apply DECISION-R6-001 only", Effect: "reapply:DECISION-R6-001"},
		{Key: "2", Label: "Re-apply DECISION-R6-002 only", Effect: "reapply:DECISION-R6-002"},
		{Key: "3", Label: "Re-apply both decisions", Effect: EffectReapplyAll},
		{Key: "4", Label: "Modify before re-applying", Effect: EffectModify},
		{Key: "5", Label: "Leave archived (don't re-apply)", Effect: EffectIgnore},
	}
	if diff := cmp.Diff(wantOpts, p.Options); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if p.Title != "DECISION RECOVERY" || p.Default != "5" {
		t.Errorf("title %q default %q", p.Title, p.Default)
	}

	// User selects 1.
	opt, _ := p.Option("1")
	rec, err := ResolveRecovery(decisions, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Reapply) != 1 || rec.Modify {
		t.Fatalf("recovery = %+v", rec)
	}
	got := Reapply(rec.Reapply[0], 6).Entry()
	want := `### DECISION-R6-001: Error threshold weights
- **Choice:** CRITICAL=16, HIGH=4, MEDIUM=2, LOW=1
- **Rationale:** Matches GAP-FLOW-012 severity definitions
- **Note:** Re-applied from rolled-back Round 6
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("re-applied entry (-want +got):\n%s", diff)
	}
}
