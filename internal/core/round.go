package core

import (
	"fmt"
	"slices"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// playRound plays the round in progress, or starts the next one, until it
// is done or pauses at a question.
func (s *Engine) playRound() (RoundReport, error) {
	// A rollback waiting in its dialogs comes first (rollback_dialogs.go);
	// once it is done the session plays on from where it put it.
	flow := s.st.RollbackFlow != nil
	if st, err := s.continueRollback(); err != nil || st == waitForAnswer || s.st.Outcome.Terminal() {
		return roundReport(s.st, outcomeOf(s.st)), err
	}
	if flow && s.st.RollbackFlow == nil {
		// The rollback replaced the round in progress: a Step ends here,
		// as it does when the rollback is chosen inside the round (Run
		// plays on). A crash in the dialog then resumes to the same stop.
		return roundReport(s.st, outcomeOf(s.st)), nil
	}
	if d := s.st.Discovery; d != nil && d.Step != state.DiscoverDone && s.st.Current == nil {
		// The session's first step: discovery of its gaps (discover.go).
		st, err := s.discover()
		if err != nil || st != goOn || s.run.mode == modeStep {
			// A Step ends with discovery, the session's round 0.
			return roundReport(s.st, outcomeOf(s.st)), err
		}
	}
	if s.st.Current == nil {
		if done, err := s.checkTermination(); err != nil || done {
			return roundReport(s.st, outcomeOf(s.st)), err
		}
		if s.st.UnansweredPending() {
			return roundReport(s.st, outcomeOf(s.st)), nil
		}
		s.st.EndChecked = s.st.Round
		if paused, err := s.recoverDecisions(); err != nil || paused {
			return roundReport(s.st, outcomeOf(s.st)), err
		}
		if err := s.startRound(); err != nil {
			return roundReport(s.st, outcomeOf(s.st)), err
		}
	}
	return s.playPhases()
}

// playPhases plays the round's phases in order from the one in progress.
// Each phase's handler decides how it ended (a stop); only this loop
// changes the phase.
func (s *Engine) playPhases() (RoundReport, error) {
	for {
		cur := s.st.Current
		if s.scopeRound != cur.N {
			s.scopeRound = cur.N
			s.emit(Event{Kind: EventRoundResumed, Round: cur.N})
		}
		if s.yieldHere() {
			return roundReport(s.st, outcomeOf(s.st)), errYield
		}
		st, err := goOn, error(nil)
		next := phaseAfter(cur.Phase)
		switch cur.Phase {
		case state.PhaseEngineer:
			st, err = s.runEngineer()
		case state.PhaseDisagree:
			st, err = s.disagreement()
		case state.PhaseReviewer:
			st, err = s.runReviewer()
		case state.PhaseSynthesize:
			err = synthesize(s.st, s.at)
		case state.PhaseConverge:
			if st, err = s.converge(); err == nil && st == goOn {
				return s.finishRound()
			}
		}
		if st == backToEngineer {
			st, next = goOn, state.PhaseEngineer
		}
		if err != nil || st != goOn {
			// Waiting for an answer, or a rollback chosen in a question
			// replaced the round.
			return roundReport(s.st, outcomeOf(s.st)), err
		}
		// The phase change rides on the next commit: every phase is
		// idempotent on resume (a finished role phase returns at once).
		s.emit(Event{Kind: EventPhaseFinished, Phase: cur.Phase})
		cur.Phase = next
		s.emit(Event{Kind: EventPhaseStarted, Phase: next})
	}
}

// phaseAfter is the phase that follows p once p's handler went on; the
// converge phase has none (its end finishes the round).
func phaseAfter(p state.Phase) state.Phase {
	switch p {
	case state.PhaseBegin:
		return state.PhaseEngineer
	case state.PhaseEngineer:
		return state.PhaseDisagree
	case state.PhaseDisagree:
		return state.PhaseReviewer
	case state.PhaseReviewer:
		return state.PhaseSynthesize
	case state.PhaseSynthesize:
		return state.PhaseConverge
	}
	return p
}

// Report describes the current round (or the last one) for Step, with
// the session's outcome o.
func roundReport(st *state.State, o Outcome) RoundReport {
	r := RoundReport{Round: st.Round, Outcome: o.Status, Pending: o.Pending}
	if st.Current != nil {
		r.Round = st.Current.N
		return r
	}
	if n := len(st.Rounds); n > 0 {
		rec := st.Rounds[n-1]
		r.Engineer, r.Reviewer, r.Verdict = rec.Engineer, rec.Reviewer, rec.Verdict
		r.Accepted, r.Revise, r.NewGaps = rec.Accepted, rec.Revise, rec.NewGaps
	}
	return r
}

// startRound rotates backups, assigns gaps and commits the new round.
func (s *Engine) startRound() error {
	n := s.st.Round + 1
	ops, err := s.backupOps(n)
	if err != nil {
		return fmt.Errorf("round %d: backups: %w", n, err)
	}
	cur := &state.RoundState{N: n, Phase: state.PhaseBegin, StartedAt: s.at()}
	s.chosenExamples = nil // the last round's retries are done
	s.st.Current = cur
	cands := assignable(s.st)
	gap.AssignmentOrder(cands)
	cands = planAssignment(s.st, cands) // a rollback dialog may narrow or reassign
	for i := 0; i < len(cands) && i < s.cfg.GapsPerRound; i++ {
		cur.Assigned = append(cur.Assigned, cands[i].ID)
		if err := s.st.Ledger.Transition(cands[i].ID, gap.InProgress, n, s.at(), "assigned to round"); err != nil {
			return fmt.Errorf("round %d: assign: %w", n, err)
		}
	}
	cur.Engineer = state.RolePhase{Gaps: slices.Clone(cur.Assigned), Budget: 1 + s.cfg.MaxRetries}
	cur.Instructions, s.st.Instructions = s.st.Instructions, nil
	cur.Reviewer = state.RolePhase{Budget: 1 + s.cfg.MaxRetries}
	s.emit(Event{Kind: EventRoundStarted, Round: n, Phase: cur.Phase, Message: fmt.Sprintf("assigned %v", cur.Assigned)})
	s.log.Info("round started", "round", n, "assigned", cur.Assigned)
	s.stage(ops...)
	return nil
}

// assignable returns the gaps a round may take on: OPEN or NEEDS_REVISION.
func assignable(st *state.State) []gap.Gap {
	var out []gap.Gap
	for _, g := range st.Ledger.Gaps {
		if g.State == gap.Open || g.State == gap.NeedsRevision {
			out = append(out, g)
		}
	}
	return out
}

// backupOps snapshots the state after round n-1 and drops the backup that
// falls out of the retention window (Settings.BackupRetention), at the
// start of round n.
func (s *Engine) backupOps(n int) ([]store.Op, error) {
	prev := n - 1
	ops, err := s.journal.StateBackupOps(s.st, prev)
	if err != nil {
		return nil, err
	}
	// status.md and decisions.md as the round ended are written between
	// rounds, and the backups are copies of them.
	status, decisions := render.Status(s.st, s.cfg.setup()), render.Decisions(s.st)
	ops = append(ops, s.renderingOps(status, decisions)...)
	ops = append(ops,
		s.copyOp(state.BackupKeyStatus(prev), state.KeyStatus, []byte(status)),
		s.copyOp(state.BackupKeyDecisions(prev), state.KeyDecisions, []byte(decisions)),
	)
	if old := prev - s.cfg.BackupRetention; old >= 0 {
		ops = append(ops, store.Delete(state.BackupKeyState(old)), store.Delete(state.BackupKeyStatus(old)), store.Delete(state.BackupKeyDecisions(old)))
	}
	return ops, nil
}

// runEngineer plays the Engineer phase.
func (s *Engine) runEngineer() (stop, error) {
	cur := s.st.Current
	rp := &cur.Engineer
	if rp.Status != state.RoleRunning {
		return goOn, nil
	}
	if len(rp.Gaps) == 0 {
		rp.Status, rp.SkipNote = state.RoleNotNeeded, "no gap to assign"
		return goOn, nil
	}
	if s.cfg.ParallelGaps > 1 && len(rp.Gaps) > 1 && !rp.ParallelDone && len(rp.Attempts) == 0 {
		done, err := s.runParallel()
		if err != nil || done {
			return goOn, err
		}
	}
	return s.runRole(llm.Engineer)
}

// runReviewer plays the Reviewer phase over every PROPOSED gap, then asks
// the both-roles-failed question when both roles were skipped and it has
// not been answered yet (also when resumed after the phase ended: the
// question may still wait, answered from another process).
func (s *Engine) runReviewer() (stop, error) {
	cur := s.st.Current
	if rp := &cur.Reviewer; rp.Status == state.RoleRunning {
		if cur.Reviewed == nil {
			for _, g := range s.st.Ledger.InState(gap.Proposed) {
				cur.Reviewed = append(cur.Reviewed, g.ID)
			}
			rp.Gaps = slices.Clone(cur.Reviewed)
		}
		if len(cur.Reviewed) == 0 {
			rp.Status = state.RoleNotNeeded
			rp.SkipNote = "no proposal to review"
			if cur.Engineer.Status == state.RoleSkipped {
				rp.SkipNote = "Engineer skipped"
			}
			return goOn, nil
		}
		if st, err := s.runRole(llm.Reviewer); err != nil || st != goOn {
			return st, err
		}
	}
	if cur = s.st.Current; cur.Reviewer.Status != state.RoleSkipped || cur.Engineer.Status != state.RoleSkipped || cur.RoundFailedDone {
		return goOn, nil
	}
	return s.askRoundFailed()
}

// runRole runs attempts until one validates, escalating when the budget is
// spent.
func (s *Engine) runRole(role llm.RoleName) (stop, error) {
	cur := s.st.Current
	rp := cur.Role(role)
	for rp.Status == state.RoleRunning {
		if len(rp.Attempts) >= rp.Budget {
			st, err := s.escalate(role)
			if err != nil || st != goOn {
				return st, err
			}
			continue
		}
		k := len(rp.Attempts) + 1
		out, err := s.attempt(role, k, rp)
		if err != nil {
			return goOn, err
		}
		ops := out.ops
		if out.rec.Success {
			// The accepted output is the response its attempt journaled.
			_, respKey := state.AttemptKeys(cur.N, role, "", k)
			ops = append(ops, s.acceptOp(state.OutputKey(cur.N, role), respKey, out.content, out.result))
			if err := acceptOutput(s.st, role, rp, out.result, s.at); err != nil {
				return goOn, err
			}
		}
		s.stage(ops...)
	}
	return goOn, nil
}

// accept records a valid output and applies the Engineer's lifecycle
// transitions at once, so the Reviewer sees PROPOSED gaps. now stamps each
// transition.
func acceptOutput(st *state.State, role llm.RoleName, rp *state.RolePhase, res validate.Result, now func() time.Time) error {
	rp.Status = state.RoleAccepted
	acc := acceptedFrom(role, st.Current.N, res)
	if role != llm.Engineer {
		rp.Result = acc
		return nil
	}
	return applyEngineer(st, rp, acc, now)
}

// acceptedFrom keeps what the Mediator needs of a valid output of round n.
func acceptedFrom(role llm.RoleName, n int, res validate.Result) *state.AcceptedOutput {
	acc := &state.AcceptedOutput{GapsAddressed: res.GapsAddressed, Warnings: res.Warnings}
	for _, ng := range res.NewGaps {
		acc.NewGaps = append(acc.NewGaps, state.NewGap{ID: ng.ID, Severity: ng.Severity, Title: ng.Title})
	}
	for _, d := range res.Disagreements {
		acc.Disagreements = append(acc.Disagreements, d.IssueID)
	}
	if role == llm.Reviewer {
		acc.Verdict, acc.NoIssues = string(res.Verdict), res.NoIssuesFound
		for _, is := range res.Issues {
			acc.Issues = append(acc.Issues, conflict.Issue{ID: is.ID, Round: n, Severity: is.Severity, Gap: is.Gap,
				Summary: is.Summary, Location: is.Location, Impact: is.Impact, Suggestion: is.Suggestion})
		}
		acc.ReviewedGaps = reviewHeaderGaps(res.ReviewHeaders)
	}
	return acc
}

// reviewHeaderGaps are the gap IDs the Reviewer's review headers name, in
// order, each once.
func reviewHeaderGaps(headers []string) []gap.ID {
	var out []gap.ID
	for _, h := range headers {
		for _, id := range gap.FindIDs(h) {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// applyEngineer moves the Engineer's gaps: addressed → PROPOSED, assigned
// but unaddressed → OPEN (a partial round), and adds its new gaps.
func applyEngineer(st *state.State, rp *state.RolePhase, acc *state.AcceptedOutput, now func() time.Time) error {
	cur := st.Current
	rp.Result = acc
	addressed := map[gap.ID]bool{}
	for _, id := range acc.GapsAddressed {
		addressed[id] = true
	}
	for _, id := range rp.Gaps {
		to, why := gap.Open, "assigned but not addressed by the Engineer"
		if addressed[id] {
			to, why = gap.Proposed, "Engineer proposed a resolution"
		}
		if err := st.Ledger.Transition(id, to, cur.N, now(), why); err != nil {
			return fmt.Errorf("round %d engineer: %w", cur.N, err)
		}
	}
	for _, id := range acc.GapsAddressed {
		if !slices.Contains(rp.Gaps, id) {
			acc.Warnings = append(acc.Warnings, fmt.Sprintf("%s was addressed but not assigned this round; ignored", id))
		}
	}
	addNewGaps(st, acc.NewGaps, "introduced by the Engineer")
	return nil
}

// addNewGaps adds the gaps a role introduced this round, each once; why
// stands in for a missing title.
func addNewGaps(st *state.State, gs []state.NewGap, why string) {
	for _, ng := range gs {
		if st.Ledger.Has(ng.ID) {
			continue
		}
		title := ng.Title
		if title == "" {
			title = why
		}
		_ = st.Ledger.Add(gap.Gap{ID: ng.ID, Title: title, Severity: ng.Severity, Round: st.Current.N})
	}
}

// synthesize applies the Reviewer's verdicts: what the review decides
// (verdictTransitions), then its transitions, each stamped by now.
func synthesize(st *state.State, now func() time.Time) error {
	cur := st.Current
	rev := cur.Reviewer.Result
	if cur.Reviewer.Status != state.RoleAccepted || rev == nil {
		return nil
	}
	for _, t := range VerdictTransitions(&st.Ledger, cur.Reviewed, rev) {
		if err := st.Ledger.Transition(t.id, t.to, cur.N, now(), t.why); err != nil {
			return fmt.Errorf("round %d synthesize: %w", cur.N, err)
		}
	}
	st.Issues = append(st.Issues, rev.Issues...)
	addNewGaps(st, rev.NewGaps, "identified by the Reviewer")
	return nil
}

// Transition is a lifecycle move decided before it is applied.
type Transition struct {
	id  gap.ID
	to  gap.State
	why string
}

// VerdictTransitions decides the review's moves: each reviewed PROPOSED
// gap is ACCEPTED, or NEEDS_REVISION when a HIGH/CRITICAL issue names it;
// an ACCEPTED gap outside the review that such an issue names is reopened.
func VerdictTransitions(l *gap.Ledger, underReview []gap.ID, rev *state.AcceptedOutput) []Transition {
	reviewed := reviewedGaps(underReview, rev)
	blocking := blockingIssues(rev.Issues)
	var out []Transition
	for _, id := range reviewed {
		g, ok := l.Get(id)
		if !ok || g.State != gap.Proposed {
			continue
		}
		t := Transition{id, gap.Accepted, "reviewed: no open HIGH/CRITICAL issue"}
		if ids := blocking[id]; len(ids) > 0 {
			t.to, t.why = gap.NeedsRevision, "reviewer raised "+render.JoinIDs(ids)
		}
		out = append(out, t)
	}
	for id, ids := range blocking {
		if g, ok := l.Get(id); ok && g.State == gap.Accepted && !slices.Contains(reviewed, id) {
			out = append(out, Transition{id, gap.NeedsRevision, "reopened by " + render.JoinIDs(ids)})
		}
	}
	return out
}

// reviewedGaps are the gaps under review the Reviewer's output covers:
// all of them, unless its review headers name gaps; then those it named
// or raised an issue against.
func reviewedGaps(underReview []gap.ID, rev *state.AcceptedOutput) []gap.ID {
	if len(rev.ReviewedGaps) == 0 {
		return underReview
	}
	var out []gap.ID
	for _, id := range underReview {
		if slices.Contains(rev.ReviewedGaps, id) || slices.ContainsFunc(rev.Issues, func(is conflict.Issue) bool { return is.Gap == id }) {
			out = append(out, id)
		}
	}
	return out
}

// blockingIssues maps each gap to the IDs of the HIGH/CRITICAL issues
// raised against it.
func blockingIssues(issues []conflict.Issue) map[gap.ID][]string {
	blocking := map[gap.ID][]string{}
	for _, is := range issues {
		if is.Severity.AtLeastHigh() && is.Gap != "" {
			blocking[is.Gap] = append(blocking[is.Gap], is.ID)
		}
	}
	return blocking
}

// finishRound records the round, commits its summary and checks termination.
func (s *Engine) finishRound() (RoundReport, error) {
	rec := newRoundRecord(s.st, s.at())
	s.st.Rounds = append(s.st.Rounds, rec)
	summary := render.RoundSummary(s.st, rec)
	s.st.Round = rec.N
	s.st.Current = nil
	s.st.PrevLedger = SnapshotLedger(&s.st.Ledger)
	s.emit(Event{Kind: EventRoundFinished, Round: rec.N, Message: fmt.Sprintf("engineer %s, reviewer %s", rec.Engineer, rec.Reviewer)})
	s.stage(append(convergenceOps(Tracker(s.st, &s.cfg)), store.Put(state.SummaryKey(rec.N), []byte(summary)))...)
	if done, err := s.checkTermination(); err != nil || done {
		return roundReport(s.st, outcomeOf(s.st)), err
	}
	if !s.st.UnansweredPending() {
		s.st.EndChecked = s.st.Round
	}
	return roundReport(s.st, outcomeOf(s.st)), nil
}

// roundRecord is the record of the round in progress, finished at
// finishedAt: what its roles did and how its gaps moved.
func newRoundRecord(st *state.State, finishedAt time.Time) state.RoundRecord {
	cur := st.Current
	rec := state.RoundRecord{N: cur.N, StartedAt: cur.StartedAt, FinishedAt: finishedAt, Assigned: cur.Assigned,
		Engineer: RoleSummary(llm.Engineer, &cur.Engineer), Reviewer: RoleSummary(llm.Reviewer, &cur.Reviewer)}
	if r := cur.Engineer.Result; r != nil {
		rec.GapsAddressed = r.GapsAddressed
	}
	if r := cur.Reviewer.Result; r != nil {
		rec.Verdict = r.Verdict
	}
	if cur.Reviewer.Status == state.RoleSkipped {
		for _, id := range cur.Reviewed {
			if g, ok := st.Ledger.Get(id); ok && g.State == gap.Proposed {
				rec.Unreviewed = append(rec.Unreviewed, id)
			}
		}
	}
	for _, g := range st.Ledger.Gaps {
		recordMoves(&rec, g)
	}
	return rec
}

// recordMoves adds to rec how g moved in rec's round: accepted, reopened,
// sent back for revision, or new.
func recordMoves(rec *state.RoundRecord, g gap.Gap) {
	for _, t := range g.History {
		if t.Round != rec.N {
			continue
		}
		switch {
		case t.To == gap.Accepted:
			rec.Accepted = append(rec.Accepted, g.ID)
		case t.To == gap.NeedsRevision && t.From == gap.Accepted:
			rec.Reopened = append(rec.Reopened, g.ID)
		case t.To == gap.NeedsRevision:
			rec.Revise = append(rec.Revise, g.ID)
		}
	}
	if g.Round == rec.N {
		rec.NewGaps = append(rec.NewGaps, g.ID)
	}
}

// SnapshotLedger copies the gaps without their transition history: the
// next convergence row compares states, not histories.
func SnapshotLedger(l *gap.Ledger) *gap.Ledger {
	c := l.Clone()
	for i := range c.Gaps {
		c.Gaps[i].History = nil
	}
	return c
}

// RoleSummary is how a round report shows role's phase: "OK (1 attempt)",
// "SKIP", ….
func RoleSummary(role llm.RoleName, rp *state.RolePhase) string {
	switch rp.Status {
	case state.RoleAccepted:
		n := len(rp.Attempts)
		for _, p := range rp.Parts {
			n += len(p.Attempts)
		}
		return fmt.Sprintf("OK (%d attempt%s)", n, render.Plural(n))
	case state.RoleSkipped:
		return "SKIP"
	case state.RoleNotNeeded:
		return "not needed (" + rp.SkipNote + ")"
	case state.RoleRunning:
		return "in progress"
	}
	return fmt.Sprintf("unknown status %q", string(rp.Status)) // a state.json of a newer refine
}

// A stop says how a phase's handler (or a question inside it) ended: the
// round goes on, waits for an answer, goes back to its Engineer, or was
// replaced by a rollback chosen in a question. Handlers return it and
// playRound alone changes the phase: none sets it behind the loop's back.
type stop int

const (
	goOn stop = iota
	waitForAnswer
	backToEngineer
	roundReplaced
	// sessionEnded: an answer ended the session (abandon) mid-round.
	sessionEnded
)

// waitIf is waitForAnswer when a question paused the session.
func waitIf(paused bool) stop {
	if paused {
		return waitForAnswer
	}
	return goOn
}
