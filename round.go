package refine

import (
	"context"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// playRound plays the round in progress, or starts the next one, until it
// is done or pauses at a question.
func (s *Session) playRound(ctx context.Context) (RoundReport, error) {
	// A rollback waiting in its dialogs comes first (rollback_dialogs.go);
	// once it is done the session plays on from where it put it.
	flow := s.st.RollbackFlow != nil
	if st, err := s.continueRollback(ctx); err != nil || st == waitForAnswer || s.st.Outcome.Terminal() {
		return s.report(), err
	}
	if flow && s.st.RollbackFlow == nil {
		// The rollback replaced the round in progress: a Step ends here,
		// as it does when the rollback is chosen inside the round (Run
		// plays on). A crash in the dialog then resumes to the same stop.
		return s.report(), nil
	}
	if s.st.Current == nil {
		if done, err := s.checkTermination(ctx); err != nil || done {
			return s.report(), err
		}
		if s.unansweredPending() {
			return s.report(), nil
		}
		s.st.EndChecked = s.st.Round
		if paused, err := s.recoverDecisions(ctx); err != nil || paused {
			return s.report(), err
		}
		if err := s.startRound(ctx); err != nil {
			return s.report(), err
		}
	}
	// Each phase's handler decides how it ended (a stop); only this loop
	// changes the phase.
	for {
		cur := s.st.Current
		s.tel.openRoundScope(ctx, nil)
		if err := ctx.Err(); err != nil {
			return s.report(), err
		}
		st, err := goOn, error(nil)
		next := cur.Phase
		switch cur.Phase {
		case PhaseBegin:
			next = PhaseEngineer
		case PhaseEngineer:
			st, err = s.runEngineer(ctx)
			next = PhaseDisagree
		case PhaseDisagree:
			st, err = s.disagreement(ctx)
			next = PhaseReviewer
		case PhaseReviewer:
			st, err = s.runReviewer(ctx)
			next = PhaseSynthesize
		case PhaseSynthesize:
			err = s.synthesize(ctx)
			next = PhaseConverge
		case PhaseConverge:
			if st, err = s.converge(ctx); err == nil && st == goOn {
				return s.finishRound(ctx)
			}
		}
		if st == backToEngineer {
			st, next = goOn, PhaseEngineer
		}
		if err != nil || st != goOn {
			// Waiting for an answer, or a rollback chosen in a question
			// replaced the round.
			return s.report(), err
		}
		// The phase change rides on the next commit: every phase is
		// idempotent on resume (a finished role phase returns at once).
		s.tel.emit(Event{Kind: EventPhaseFinished, Phase: cur.Phase})
		cur.Phase = next
		s.tel.emit(Event{Kind: EventPhaseStarted, Phase: next})
	}
}

// unansweredPending reports whether a pending question has no answer yet.
// An answer given through Answer waits in state until the question's own
// step takes it, so a question answered from another process does not
// hold the session up.
func (s *Session) unansweredPending() bool {
	for _, q := range s.st.Pending {
		if _, ok := s.st.Answers[q.ID]; !ok {
			return true
		}
	}
	return false
}

// report describes the current round (or the last one) for Step.
func (s *Session) report() RoundReport {
	o := s.outcome()
	r := RoundReport{Round: s.st.Round, Outcome: o.Status, Pending: o.Pending}
	if s.st.Current != nil {
		r.Round = s.st.Current.N
		return r
	}
	if n := len(s.st.Rounds); n > 0 {
		rec := s.st.Rounds[n-1]
		r.Engineer, r.Reviewer, r.Verdict = rec.Engineer, rec.Reviewer, rec.Verdict
		r.Accepted, r.Revise, r.NewGaps = rec.Accepted, rec.Revise, rec.NewGaps
	}
	return r
}

// startRound rotates backups, assigns gaps and commits the new round.
func (s *Session) startRound(ctx context.Context) error {
	n := s.st.Round + 1
	ops, err := s.backupOps(ctx, n)
	if err != nil {
		return fmt.Errorf("round %d: backups: %w", n, err)
	}
	cur := &roundState{N: n, Phase: PhaseBegin, StartedAt: s.now()}
	s.chosenExamples = nil // the last round's retries are done
	s.st.Current = cur
	cands := s.assignable()
	gap.AssignmentOrder(cands)
	cands = planAssignment(s.st, cands) // a rollback dialog may narrow or reassign
	for i := 0; i < len(cands) && i < s.cfg.GapsPerRound; i++ {
		cur.Assigned = append(cur.Assigned, cands[i].ID)
		if err := s.st.Ledger.Transition(cands[i].ID, gap.InProgress, n, s.now(), "assigned to round"); err != nil {
			return fmt.Errorf("round %d: assign: %w", n, err)
		}
	}
	cur.Engineer = rolePhase{Gaps: slices.Clone(cur.Assigned), Budget: 1 + s.cfg.MaxRetries}
	cur.Instructions, s.st.Instructions = s.st.Instructions, nil
	cur.Reviewer = rolePhase{Budget: 1 + s.cfg.MaxRetries}
	s.tel.openRoundScope(ctx, &Event{Kind: EventRoundStarted, Round: n, Phase: cur.Phase, Message: fmt.Sprintf("assigned %v", cur.Assigned)})
	s.log.Info("round started", "round", n, "assigned", cur.Assigned)
	s.stage(ops...)
	return nil
}

// assignable returns the gaps a round may take on: OPEN or NEEDS_REVISION.
func (s *Session) assignable() []gap.Gap {
	var out []gap.Gap
	for _, g := range s.st.Ledger.Gaps {
		if g.State == gap.Open || g.State == gap.NeedsRevision {
			out = append(out, g)
		}
	}
	return out
}

// backupOps snapshots the state after round n-1 and drops the backup that
// falls out of the retention window (Settings.BackupRetention), at the
// start of round n.
func (s *Session) backupOps(ctx context.Context, n int) ([]Op, error) {
	prev := n - 1
	ops, err := s.j.stateBackupOps(s.st, prev)
	if err != nil {
		return nil, err
	}
	// status.md and decisions.md as the round ended are written between
	// rounds, and the backups are copies of them.
	status, decisions := renderStatus(s.st, s.rollbackLimit(), s.cfg.Backend), renderDecisions(s.st)
	ops = append(ops, s.renderingOps(status, decisions)...)
	ops = append(ops,
		s.copyOp(backupKeyStatus(prev), keyStatus, []byte(status)),
		s.copyOp(backupKeyDecisions(prev), keyDecisions, []byte(decisions)),
	)
	if old := prev - s.cfg.BackupRetention; old >= 0 {
		ops = append(ops, Delete(backupKeyState(old)), Delete(backupKeyStatus(old)), Delete(backupKeyDecisions(old)))
	}
	return ops, nil
}

func backupKeyState(n int) string     { return fmt.Sprintf("state_backup_round_%d.json", n) }
func backupKeyStatus(n int) string    { return fmt.Sprintf("status_backup_round_%d.md", n) }
func backupKeyDecisions(n int) string { return fmt.Sprintf("decisions_backup_round_%d.md", n) }

// runEngineer plays the Engineer phase.
func (s *Session) runEngineer(ctx context.Context) (stop, error) {
	cur := s.st.Current
	rp := &cur.Engineer
	if rp.Status != roleRunning {
		return goOn, nil
	}
	if len(rp.Gaps) == 0 {
		rp.Status, rp.SkipNote = roleNotNeeded, "no gap to assign"
		return goOn, nil
	}
	if s.cfg.ParallelGaps > 1 && len(rp.Gaps) > 1 && !rp.ParallelDone && len(rp.Attempts) == 0 {
		done, err := s.runParallel(ctx)
		if err != nil || done {
			return goOn, err
		}
	}
	return s.runRole(ctx, Engineer)
}

// runReviewer plays the Reviewer phase over every PROPOSED gap.
func (s *Session) runReviewer(ctx context.Context) (stop, error) {
	cur := s.st.Current
	rp := &cur.Reviewer
	if rp.Status != roleRunning {
		// Resumed after the Reviewer's phase ended: a both-roles-failed
		// question may still wait (answered from another process).
		return s.roundFailed(ctx)
	}
	if cur.Reviewed == nil {
		for _, g := range s.st.Ledger.InState(gap.Proposed) {
			cur.Reviewed = append(cur.Reviewed, g.ID)
		}
		rp.Gaps = slices.Clone(cur.Reviewed)
	}
	if len(cur.Reviewed) == 0 {
		rp.Status = roleNotNeeded
		rp.SkipNote = "no proposal to review"
		if cur.Engineer.Status == roleSkipped {
			rp.SkipNote = "Engineer skipped"
		}
		return goOn, nil
	}
	st, err := s.runRole(ctx, Reviewer)
	if err != nil || st != goOn {
		return st, err
	}
	return s.roundFailed(ctx)
}

// roundFailed asks the both-roles-failed question when both roles were
// skipped and it has not been answered yet.
func (s *Session) roundFailed(ctx context.Context) (stop, error) {
	cur := s.st.Current
	if cur.Reviewer.Status != roleSkipped || cur.Engineer.Status != roleSkipped || cur.RoundFailedDone {
		return goOn, nil
	}
	return s.askRoundFailed(ctx)
}

// runRole runs attempts until one validates, escalating when the budget is
// spent.
func (s *Session) runRole(ctx context.Context, role RoleName) (stop, error) {
	cur := s.st.Current
	rp := cur.role(role)
	for rp.Status == roleRunning {
		if len(rp.Attempts) >= rp.Budget {
			st, err := s.escalate(ctx, role)
			if err != nil || st != goOn {
				return st, err
			}
			continue
		}
		k := len(rp.Attempts) + 1
		out, err := s.attempt(ctx, role, k, rp)
		if err != nil {
			return goOn, err
		}
		ops := out.ops
		if out.rec.Success {
			// The accepted output is the response its attempt journaled.
			_, respKey := attemptKeys(cur.N, role, "", k)
			ops = append(ops, s.copyOp(outputKey(cur.N, role), respKey, []byte(out.content)))
			if err := s.accept(role, rp, out.result); err != nil {
				return goOn, err
			}
		}
		s.stage(ops...)
	}
	return goOn, nil
}

func (c *roundState) role(r RoleName) *rolePhase {
	if r == Reviewer {
		return &c.Reviewer
	}
	return &c.Engineer
}

// accept records a valid output and applies the Engineer's lifecycle
// transitions at once, so the Reviewer sees PROPOSED gaps.
func (s *Session) accept(role RoleName, rp *rolePhase, res validate.Result) error {
	rp.Status = roleAccepted
	acc := s.acceptedFrom(role, res)
	if role != Engineer {
		rp.Result = acc
		return nil
	}
	return s.applyEngineer(rp, acc)
}

// acceptedFrom keeps what the Mediator needs of a valid output.
func (s *Session) acceptedFrom(role RoleName, res validate.Result) *acceptedOutput {
	cur := s.st.Current
	acc := &acceptedOutput{GapsAddressed: res.GapsAddressed, Warnings: res.Warnings}
	for _, ng := range res.NewGaps {
		acc.NewGaps = append(acc.NewGaps, newGap{ID: ng.ID, Severity: ng.Severity, Title: ng.Title})
	}
	for _, d := range res.Disagreements {
		acc.Disagreements = append(acc.Disagreements, d.IssueID)
	}
	if role == Reviewer {
		acc.Verdict, acc.NoIssues = string(res.Verdict), res.NoIssuesFound
		for _, is := range res.Issues {
			acc.Issues = append(acc.Issues, issueRecord{ID: is.ID, Round: cur.N, Severity: is.Severity, Gap: is.Gap,
				Summary: is.Summary, Location: is.Location, Impact: is.Impact, Suggestion: is.Suggestion})
		}
		for _, h := range res.ReviewHeaders {
			for _, id := range gap.FindIDs(h) {
				if !slices.Contains(acc.ReviewedGaps, id) {
					acc.ReviewedGaps = append(acc.ReviewedGaps, id)
				}
			}
		}
	}
	return acc
}

// applyEngineer moves the Engineer's gaps: addressed → PROPOSED, assigned
// but unaddressed → OPEN (a partial round), and adds its new gaps.
func (s *Session) applyEngineer(rp *rolePhase, acc *acceptedOutput) error {
	cur := s.st.Current
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
		if err := s.st.Ledger.Transition(id, to, cur.N, s.now(), why); err != nil {
			return fmt.Errorf("round %d engineer: %w", cur.N, err)
		}
	}
	for _, id := range acc.GapsAddressed {
		if !slices.Contains(rp.Gaps, id) {
			acc.Warnings = append(acc.Warnings, fmt.Sprintf("%s was addressed but not assigned this round; ignored", id))
		}
	}
	s.addNewGaps(acc.NewGaps, "introduced by the Engineer")
	return nil
}

func (s *Session) addNewGaps(gs []newGap, why string) {
	for _, ng := range gs {
		if s.st.Ledger.Has(ng.ID) {
			continue
		}
		title := ng.Title
		if title == "" {
			title = why
		}
		_ = s.st.Ledger.Add(gap.Gap{ID: ng.ID, Title: title, Severity: ng.Severity, Round: s.st.Current.N})
	}
}

// synthesize applies the Reviewer's verdicts and writes summary.md.
func (s *Session) synthesize(ctx context.Context) error {
	cur := s.st.Current
	n := cur.N
	rev := cur.Reviewer.Result
	if cur.Reviewer.Status == roleAccepted && rev != nil {
		reviewed := cur.Reviewed
		if len(rev.ReviewedGaps) > 0 {
			reviewed = nil
			for _, id := range cur.Reviewed {
				if slices.Contains(rev.ReviewedGaps, id) || slices.ContainsFunc(rev.Issues, func(is issueRecord) bool { return is.Gap == id }) {
					reviewed = append(reviewed, id)
				}
			}
		}
		blocking := map[gap.ID][]string{}
		for _, is := range rev.Issues {
			if is.Severity.AtLeastHigh() && is.Gap != "" {
				blocking[is.Gap] = append(blocking[is.Gap], is.ID)
			}
		}
		for _, id := range reviewed {
			g, ok := s.st.Ledger.Get(id)
			if !ok || g.State != gap.Proposed {
				continue
			}
			to, why := gap.Accepted, "reviewed: no open HIGH/CRITICAL issue"
			if ids := blocking[id]; len(ids) > 0 {
				to, why = gap.NeedsRevision, "reviewer raised "+joinIDs(ids)
			}
			if err := s.st.Ledger.Transition(id, to, n, s.now(), why); err != nil {
				return fmt.Errorf("round %d synthesize: %w", n, err)
			}
		}
		for id, ids := range blocking {
			if g, ok := s.st.Ledger.Get(id); ok && g.State == gap.Accepted && !slices.Contains(reviewed, id) {
				if err := s.st.Ledger.Transition(id, gap.NeedsRevision, n, s.now(), "reopened by "+joinIDs(ids)); err != nil {
					return fmt.Errorf("round %d synthesize: %w", n, err)
				}
			}
		}
		s.st.Issues = append(s.st.Issues, rev.Issues...)
		s.addNewGaps(rev.NewGaps, "identified by the Reviewer")
	}
	return nil
}

// finishRound records the round, commits its summary and checks termination.
func (s *Session) finishRound(ctx context.Context) (RoundReport, error) {
	cur := s.st.Current
	rec := roundRecord{N: cur.N, StartedAt: cur.StartedAt, FinishedAt: s.now(), Assigned: cur.Assigned,
		Engineer: roleSummary(Engineer, &cur.Engineer), Reviewer: roleSummary(Reviewer, &cur.Reviewer)}
	if r := cur.Engineer.Result; r != nil {
		rec.GapsAddressed = r.GapsAddressed
	}
	if r := cur.Reviewer.Result; r != nil {
		rec.Verdict = r.Verdict
	}
	if cur.Reviewer.Status == roleSkipped {
		for _, id := range cur.Reviewed {
			if g, ok := s.st.Ledger.Get(id); ok && g.State == gap.Proposed {
				rec.Unreviewed = append(rec.Unreviewed, id)
			}
		}
	}
	for _, g := range s.st.Ledger.Gaps {
		for _, t := range g.History {
			if t.Round != cur.N {
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
		if g.Round == cur.N {
			rec.NewGaps = append(rec.NewGaps, g.ID)
		}
	}
	s.st.Rounds = append(s.st.Rounds, rec)
	summary := renderSummary(s.st, rec)
	s.st.Round = cur.N
	s.st.Current = nil
	s.st.PrevLedger = snapshotLedger(&s.st.Ledger)
	s.tel.endRoundScope(Event{Kind: EventRoundFinished, Round: rec.N, Message: fmt.Sprintf("engineer %s, reviewer %s", rec.Engineer, rec.Reviewer)})
	s.stage(append(convergenceOps(tracker(s.st, &s.cfg)), Put(summaryKey(rec.N), []byte(summary)))...)
	if done, err := s.checkTermination(ctx); err != nil || done {
		return s.report(), err
	}
	if !s.unansweredPending() {
		s.st.EndChecked = s.st.Round
	}
	return s.report(), nil
}

// endOfRoundDue reports whether the last round ended but its
// end-of-round termination check did not (a crash between the two, or a
// question answered later): for Step, that check is the rest of the
// round in progress.
func (s *Session) endOfRoundDue() bool {
	return s.st.Current == nil && s.st.RollbackFlow == nil && s.st.Round > 0 && s.st.EndChecked < s.st.Round && !s.st.Outcome.Terminal()
}

// snapshotLedger copies the gaps without their transition history: the
// next convergence row compares states, not histories.
func snapshotLedger(l *gap.Ledger) *gap.Ledger {
	c := l.Clone()
	for i := range c.Gaps {
		c.Gaps[i].History = nil
	}
	return c
}

func roleSummary(role RoleName, rp *rolePhase) string {
	switch rp.Status {
	case roleAccepted:
		n := len(rp.Attempts)
		for _, p := range rp.Parts {
			n += len(p.Attempts)
		}
		return fmt.Sprintf("OK (%d attempt%s)", n, plural(n))
	case roleSkipped:
		return "SKIP"
	case roleNotNeeded:
		return "not needed (" + rp.SkipNote + ")"
	case roleRunning:
		return "in progress"
	}
	return fmt.Sprintf("unknown status %q", string(rp.Status)) // a state.json of a newer refine
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func joinIDs[T ~string](ids []T) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += string(id)
	}
	return out
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
