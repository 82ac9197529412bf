package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
)

// The decisions of a round's disagreement phase (docs/workflow.md#one-round)
// as functions of the state and the inputs they need: what to log, what to
// ask, what an answer changes. The Session reads the outputs, asks, and
// stages (disagree.go). Time comes in as a clock reading function, read
// where the record it stamps is made.

// conflictLimits are the DISAGREE rate limits from Config.
func conflictLimits(cfg *Params) conflict.Limits {
	return conflict.Limits{RoundRate: cfg.DisagreeRoundLimit, SessionRate: cfg.DisagreeSessionLimit,
		SessionRounds: cfg.DisagreeWindow, MaxPerRound: cfg.DisagreeMaxPerRound}
}

// issuesOf returns round n's Reviewer issues as the conflict package sees
// them, with the user's severity overrides applied.
func issuesOf(st *state.State, n int) []conflict.Issue {
	var out []conflict.Issue
	for _, is := range st.Issues {
		if is.Round == n {
			out = append(out, is)
		}
	}
	return conflict.ApplyOverrides(out, st.Overrides)
}

// issuesBefore returns the session's issues of the rounds before n, with
// severity overrides applied.
func issuesBefore(st *state.State, n int) []conflict.Issue {
	var out []conflict.Issue
	for _, is := range st.Issues {
		if is.Round < n {
			out = append(out, is)
		}
	}
	return conflict.ApplyOverrides(out, st.Overrides)
}

// disagreeDetection is what the detection step decides for the round in
// progress: the implicit findings to ask about, the events to log, the
// checks to add to the Reviewer's prompt and the conflicts to open.
type disagreeDetection struct {
	Findings        []conflict.Finding
	Logged          []state.LoggedEvent
	ReviewerContext []string
	Conflicts       []conflict.Conflict
	Submitted       int
}

// DetectDisagreement finds explicit and implicit disagreement of the
// round's Engineer output (out) with the review of round prev; previous is
// the Engineer output that review answered ("" when there is none).
func DetectDisagreement(st *state.State, cur *state.RoundState, prev int, out, previous string, now func() time.Time) disagreeDetection {
	var d disagreeDetection
	issues := issuesOf(st, prev)
	ex := conflict.DetectExplicit(conflict.ExplicitInput{Round: cur.N, EngineerOutput: out, Issues: issues, Earlier: issuesBefore(st, prev), At: now()})
	for _, f := range conflict.DetectImplicit(conflict.ImplicitInput{Round: cur.N, EngineerOutput: out, PreviousOutput: previous,
		Issues: issues, Assigned: cur.Assigned, Ignore: st.Ignore}) {
		if f.Escalate {
			d.Findings = append(d.Findings, f)
			continue
		}
		d.Logged = append(d.Logged, state.LoggedEvent{Kind: state.LoggedImplicitDisagreement, Round: cur.N, At: now(), Issue: f.IssueID,
			Severity: f.Issue.Severity, Confidence: f.Confidence, Heuristics: f.Heuristics, Evidence: f.Evidence})
		if f.Issue.Severity.AtLeastHigh() {
			// A flag does not discard a fix: the fix is reviewed as usual,
			// and the Reviewer checks the issue explicitly.
			d.ReviewerContext = append(d.ReviewerContext, fmt.Sprintf(
				"Check explicitly whether this round's Engineer output resolves %s (%s): %s. The Engineer revised the gap without naming the issue; if the concern remains, raise it again as a new issue.",
				f.IssueID, f.Issue.Severity, render.OneLine(f.Issue.Summary)))
		}
	}
	for _, e := range ex.Logged {
		d.Logged = append(d.Logged, state.LoggedEvent{Kind: state.LoggedDisagree, Round: cur.N, At: now(), Issue: e.IssueID, Position: render.OneLine(e.EngineerPosition)})
	}
	// A "## DISAGREE:" block naming an issue that does not exist never
	// gets here: validation rejects it (INVALID_DISAGREE_REF, round-10
	// §2) and the Engineer retries. What is left unmatched is an
	// informal disagreement ("## Disagree: …", "**Engineer Position:**
	// DISAGREE") that names no issue of the session and soft-matches
	// none of the issues answered: logged, not a conflict.
	for _, u := range ex.Unmatched {
		d.Logged = append(d.Logged, state.LoggedEvent{Kind: state.LoggedUnmatchedDisagree, Round: cur.N, At: now(), Issue: u.IssueID,
			Line: u.Line, Against: prev, Position: render.OneLine(u.EngineerPosition)})
	}
	d.Conflicts = ex.Conflicts
	d.Submitted = ex.Submitted
	return d
}

// ApplyDetection files a detection in the state: the round's disagreement
// phase is detected.
func ApplyDetection(st *state.State, cur *state.RoundState, d disagreeDetection) {
	ds := &cur.Disagree
	ds.Findings = append(ds.Findings, d.Findings...)
	st.Logged = append(st.Logged, d.Logged...)
	cur.Reviewer.Context = append(cur.Reviewer.Context, d.ReviewerContext...)
	st.Conflicts = append(st.Conflicts, d.Conflicts...)
	ds.Submitted = d.Submitted
	ds.Detected = true
}

// applyImplicit applies the user's answer to an implicit-disagreement
// finding (conflict.ResolveImplicit decided it): the ignore set, the
// Engineer instruction, the gap sent back for revision, the conflict and
// decision it opens.
func applyImplicit(st *state.State, round int, f conflict.Finding, o conflict.ImplicitOutcome, now func() time.Time) error {
	st.Ignore = o.Ignore
	if o.Instruction != "" {
		st.Instructions = append(st.Instructions, o.Instruction)
	}
	if o.GapState == gap.NeedsRevision {
		if g, ok := st.Ledger.Get(f.Issue.Gap); ok && g.State == gap.Proposed {
			if err := st.Ledger.Transition(g.ID, gap.NeedsRevision, round, now(), f.IssueID+" not addressed: the Engineer must address it explicitly"); err != nil {
				return err
			}
		}
	}
	if o.Conflict != nil {
		st.Conflicts = append(st.Conflicts, *o.Conflict)
	}
	if o.Decision != nil {
		st.ConflictDecisions = append(st.ConflictDecisions, *o.Decision)
	}
	return nil
}

// checkRate runs the DISAGREE rate check of the round in progress, once
// its implicit findings are answered, and keeps the alerts to ask.
func checkRate(st *state.State, cur *state.RoundState, prev int, limits conflict.Limits) {
	var thisRound []conflict.Conflict
	for _, c := range st.Conflicts {
		if c.Round == cur.N {
			thisRound = append(thisRound, c)
		}
	}
	st.RateHistory, cur.Disagree.Alerts = conflict.CheckRate(st.RateHistory, conflict.RateInputFor(cur.N, issuesOf(st, prev), thisRound, cur.Disagree.Submitted), limits)
	cur.Disagree.RateChecked = true
}

// AlertAnswer is what an answer to a DISAGREE rate alert changes.
type AlertAnswer struct {
	// Redo is the instruction the Engineer redoes the round with ("" for
	// no redo).
	Redo string
	// Adjustment and ReviewerAdjustment are standing guidance for the
	// Engineer and the Reviewer ("" for none).
	Adjustment, ReviewerAdjustment string
	// Overrides is the user's severity re-grading text, applied to the
	// open conflicts ("" for none).
	Overrides string
}

// DecideAlert decides what the chosen option of a rate alert's question
// does, with the user's text.
func DecideAlert(alert conflict.RateAlert, effect, text string) AlertAnswer {
	switch effect {
	case conflict.EffectRequestRevision:
		return AlertAnswer{Redo: conflict.BlockInstruction(alert)}
	case conflict.EffectAdjustEngineer, conflict.EffectMediateScope:
		return AlertAnswer{Adjustment: strings.TrimSpace(text)}
	case conflict.EffectReviewReviewer:
		// FLOW-006 Example 3: the user re-grades issues ("ISSUE-R7-001:
		// LOW"); one downgraded below HIGH no longer blocks, and one
		// downgraded to LOW is no longer a conflict.
		return AlertAnswer{Overrides: text}
	case conflict.EffectAdjustReviewer:
		return AlertAnswer{ReviewerAdjustment: strings.TrimSpace(text)}
	}
	return AlertAnswer{}
}

// applyAlert applies an alert's answer other than a redo.
func applyAlert(st *state.State, round int, aa AlertAnswer) error {
	if aa.Adjustment != "" {
		st.Adjustments = append(st.Adjustments, aa.Adjustment)
	}
	if aa.ReviewerAdjustment != "" {
		st.ReviewerAdjustments = append(st.ReviewerAdjustments, aa.ReviewerAdjustment)
	}
	if aa.Overrides != "" {
		return ApplyOverrides(st, round, aa.Overrides)
	}
	return nil
}

// applyConflictDecision files the user's decision d of conflict c: the
// conflict is resolved, the decision recorded, and its gap moved.
func applyConflictDecision(st *state.State, round int, c, resolved conflict.Conflict, d conflict.Ruling, now func() time.Time) error {
	for i := range st.Conflicts {
		if st.Conflicts[i].IssueID == c.IssueID && st.Conflicts[i].Open() {
			st.Conflicts[i] = resolved
		}
	}
	st.ConflictDecisions = append(st.ConflictDecisions, d)
	to, why, ok := DecisionMove(st, d)
	if !ok {
		return nil
	}
	return st.Ledger.Transition(d.Gap, to, round, now(), why)
}

// DecisionMove decides where a conflict decision moves the decided issue's
// gap: out of BLOCKED to the state the decision suggests (OPEN to revise
// per the decision, ACCEPTED when the Engineer's proposal stands), unless
// another conflict still holds it. ok is false when the gap stays.
func DecisionMove(st *state.State, d conflict.Ruling) (to gap.State, why string, ok bool) {
	g, found := st.Ledger.Get(d.Gap)
	if !found || d.NextState == "" {
		return "", "", false
	}
	if slices.Contains(conflict.BlockedGaps(st.Conflicts), g.ID) {
		return "", "", false
	}
	to = d.NextState
	if to == gap.Accepted && !d.Severity.AtLeastHigh() {
		// Keeping the Engineer's position on a MEDIUM/LOW issue settles
		// that issue, not the gap: the proposal is reviewed as usual (the
		// round may have revised it for other issues).
		return "", "", false
	}
	switch {
	case g.State == to:
		return "", "", false
	case g.State == gap.Proposed && to == gap.Open:
		to = gap.NeedsRevision // the proposal must be revised per the decision
	case !gap.CanTransition(g.State, to):
		return "", "", false
	}
	return to, fmt.Sprintf("%s: option %s chosen for %s", d.ID, d.ChosenOption, d.IssueID), true
}

// IssueSeverity is one severity override the user's text names.
type IssueSeverity struct {
	ID       string
	Severity gap.Severity
}

// SeverityOverrides reads severity overrides from the user's text: each
// issue ID takes the first severity named after it (so "ISSUE-R7-001 and
// ISSUE-R7-002 to LOW" downgrades both).
func SeverityOverrides(text string) []IssueSeverity {
	var out []IssueSeverity
	for _, m := range gap.FindIssueMatches(text) {
		if sev, ok := firstSeverity(text[m.End:]); ok {
			out = append(out, IssueSeverity{ID: m.ID, Severity: sev})
		}
	}
	return out
}

// ApplyOverrides applies the severity overrides of the user's text to the
// session and to its open conflicts.
func ApplyOverrides(st *state.State, round int, text string) error {
	for _, o := range SeverityOverrides(text) {
		if st.Overrides == nil {
			st.Overrides = conflict.Overrides{}
		}
		st.Overrides[o.ID] = o.Severity
		for j, c := range st.Conflicts {
			if c.IssueID == o.ID && c.Open() {
				nc, err := conflict.OverrideSeverity(c, o.Severity)
				if err != nil {
					return fmt.Errorf("round %d: override %s: %w", round, o.ID, err)
				}
				st.Conflicts[j] = nc
			}
		}
	}
	return nil
}

// firstSeverity finds the first severity word in text.
func firstSeverity(text string) (gap.Severity, bool) {
	best, at := gap.Severity(0), -1
	upper := strings.ToUpper(text)
	for _, sv := range gap.All() {
		if i := strings.Index(upper, sv.String()); i >= 0 && (at < 0 || i < at) {
			best, at = sv, i
		}
	}
	return best, at >= 0
}

// blockConflictGaps marks the gaps of unresolved HIGH/CRITICAL conflicts BLOCKED.
func blockConflictGaps(st *state.State, now func() time.Time) error {
	for _, id := range conflict.BlockedGaps(st.Conflicts) {
		g, ok := st.Ledger.Get(id)
		if !ok || !g.State.IsOpen() || g.State == gap.Blocked {
			continue
		}
		if err := st.Ledger.Transition(id, gap.Blocked, roundNow(st), now(), "unresolved HIGH/CRITICAL conflict"); err != nil {
			return err
		}
	}
	return nil
}

// redoPath is the way a gap of the round goes back to IN_PROGRESS when the
// Engineer redoes the round: the states it passes through, in order.
func redoPath(from gap.State) []gap.State {
	var path []gap.State
	at := from
	for _, to := range []gap.State{gap.NeedsRevision, gap.InProgress} {
		if (at == gap.Proposed || at == gap.NeedsRevision || at == gap.Blocked) && gap.CanTransition(at, to) {
			path = append(path, to)
			at = to
		}
	}
	if at == gap.Open {
		path = append(path, gap.InProgress)
	}
	return path
}

// RedoEngineer readies the round to go back to the Engineer with an
// instruction (the DISAGREE limit's "request revision"): its proposals
// return to IN_PROGRESS and this round's conflicts are dropped, to be
// detected again. The Engineer gets maxRetries retries afresh.
func RedoEngineer(st *state.State, instruction string, maxRetries int, now func() time.Time) error {
	cur := st.Current
	for _, id := range cur.Engineer.Gaps {
		g, ok := st.Ledger.Get(id)
		if !ok {
			continue
		}
		for _, to := range redoPath(g.State) {
			if err := st.Ledger.Transition(id, to, cur.N, now(), "DISAGREE limit: Engineer asked to revise"); err != nil {
				return err
			}
		}
	}
	st.Conflicts = slices.DeleteFunc(st.Conflicts, func(c conflict.Conflict) bool { return c.Round == cur.N && c.Open() })
	cur.Engineer.Status = state.RoleRunning
	cur.Engineer.Result = nil
	cur.Engineer.Context = append(cur.Engineer.Context, instruction)
	cur.Engineer.Budget = len(cur.Engineer.Attempts) + 1 + maxRetries
	cur.Engineer.ParallelDone = true
	cur.Disagree = state.DisagreeState{}
	return nil
}

// conflictBlock counts unresolved HIGH/CRITICAL conflicts for the
// termination tree (FLOW-006 §8).
func conflictBlock(st *state.State) convergence.ConflictBlock {
	crit, high := conflict.Blocking(st.Conflicts)
	return convergence.ConflictBlock{UnresolvedCritical: crit, UnresolvedHigh: high}
}

// extraLimitations lists unresolved MEDIUM/LOW conflicts and waived issues
// as known limitations of the final spec.
func extraLimitations(st *state.State) []convergence.Limitation {
	var out []convergence.Limitation
	for _, c := range st.Conflicts {
		if c.Open() {
			out = append(out, convergence.Limitation{ID: c.IssueID, Severity: c.Issue.Severity, Title: c.Subject, Note: "unresolved conflict"})
		}
	}
	for _, d := range st.ConflictDecisions {
		if d.ChosenOption == conflict.OptionWaive {
			out = append(out, convergence.Limitation{ID: d.IssueID, Severity: d.Severity, Title: d.Subject, Note: "waived by the user"})
		}
	}
	return out
}

// NextDecisionID numbers decisions per round across every kind of
// decision (gap.NextDecisionID over the session's decisions and conflict
// decisions), so a decision re-applied after a rollback, which keeps its ID
// and may be filed under another round, is never issued twice.
func NextDecisionID(st *state.State, round int) string {
	ids := make([]string, 0, len(st.Decisions)+len(st.ConflictDecisions))
	for _, d := range st.Decisions {
		ids = append(ids, d.ID)
	}
	for _, d := range st.ConflictDecisions {
		ids = append(ids, d.ID)
	}
	return gap.NextDecisionID(ids, round)
}

// roundNow is the round in progress, or the last completed one between
// rounds.
func roundNow(st *state.State) int {
	if st.Current != nil {
		return st.Current.N
	}
	return st.Round
}
