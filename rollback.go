package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/examples"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/rollback"
)

// RollbackRequest asks to undo rounds To+1 … current, restoring the session
// as it was after round To (0: before round 1).
type RollbackRequest struct {
	To     int
	Reason string
	// Adjustments are instructions for the retried rounds; they are recorded
	// in the archive metadata and carried into later prompts.
	Adjustments []string
	// Trigger says what asked for the rollback (default: the user).
	Trigger rollback.Trigger
}

// RollbackReport says what a rollback did.
type RollbackReport struct {
	// Undone are the rounds rolled back, newest first.
	Undone []int
	// Archives are the archive keys written, one per undone round.
	Archives []string
	// Round is the last completed round after the rollback (= To).
	Round int
	// Analysis is the root-cause report when a round reached the analysis
	// threshold ("" otherwise).
	Analysis string
	// Adjustments are the adjustments the detected patterns recommend;
	// AutoApplied says whether they were carried into later prompts
	// (AUTO_RETRY) or left to the user (INTERACTIVE, STRICT).
	Adjustments []string
	AutoApplied bool
	// Remaining is how many rollbacks the session has left.
	Remaining int
}

// Rollback undoes whole rounds as one atomic Store commit: each undone
// round's folder goes into round_NNN_rolled_back_K.tar.gz with its metadata,
// its decisions and, after repeated rollbacks, a root-cause analysis; the
// state, status.md and decisions.md are restored from the target round's
// backups; the convergence history is exactly the restored snapshot's. A
// rollback of a finished session reopens it. It fails with an error
// wrapping ErrRollbackLimit when the session limit is used up, and names
// the available targets when the target's backups were rotated out.
func (s *Session) Rollback(ctx context.Context, req RollbackRequest) (RollbackReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return RollbackReport{}, err
	}
	return s.rollback(ctx, req)
}

func (s *Session) rollback(ctx context.Context, req RollbackRequest) (RollbackReport, error) {
	if req.Trigger == "" {
		req.Trigger = rollback.TriggerUser
	}
	current := s.st.Round
	if s.st.Current != nil {
		current = s.st.Current.N
	}
	if err := s.flush(ctx); err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: %w", err)
	}
	keys, err := s.cfg.Store.List(ctx, "")
	if err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: list session: %w", err)
	}
	plan, err := rollback.PlanRollback(rollback.Request{Current: current, To: req.To, Keys: keys, History: s.st.Rollbacks,
		Limit: s.cfg.RollbackLimit, Retention: s.cfg.BackupRetention})
	if err != nil {
		return RollbackReport{}, err
	}
	files := map[string][]byte{}
	for _, k := range plan.Reads() {
		b, err := s.cfg.Store.Get(ctx, k)
		if err != nil {
			return RollbackReport{}, fmt.Errorf("rollback: read %s: %w", k, err)
		}
		files[k] = b
	}

	now := s.now()
	threshold := s.cfg.RollbackAnalysisThreshold
	if s.cfg.RollbackMode == rollback.ModeStrict {
		threshold = 1 // STRICT: analyse after the first failure
	}
	policy := rollback.Policy{Mode: s.cfg.RollbackMode, AnalysisThreshold: threshold, Limit: s.rollbackLimit()}
	step := policy.Next(current, s.st.Rollbacks, false, len(plan.Rounds) > 1)
	exec := rollback.Execution{Files: files, At: now, Reason: req.Reason, Mode: step.Mode, Trigger: req.Trigger,
		Adjustments: slices.Clone(req.Adjustments), Decisions: map[int][]rollback.Decision{}, Analyses: map[int]string{}, Patterns: map[int][]rollback.Pattern{}}
	report := RollbackReport{Round: req.To}
	spec, err := s.source(ctx)
	if err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: %w", err)
	}
	var autoAdj []string
	for _, rp := range plan.Rounds {
		report.Undone = append(report.Undone, rp.Round)
		report.Archives = append(report.Archives, rp.Archive)
		det := rollback.DetectPatterns(rollback.Input{
			Engineer: string(files[outputKey(rp.Round, Engineer)]), Reviewer: string(files[outputKey(rp.Round, Reviewer)]),
			Assigned: s.assignedIn(rp.Round), Known: s.st.Ledger.IDs(), Context: spec,
		})
		exec.Patterns[rp.Round] = det.Patterns()
		for _, a := range rollback.Summaries(rollback.AutoAdjustments(det)) {
			if !slices.Contains(autoAdj, a) {
				autoAdj = append(autoAdj, a)
			}
		}
		if rp.Attempt >= threshold {
			var prev [][]rollback.Pattern
			for _, r := range s.st.Rollbacks.ForRound(rp.Round) {
				prev = append(prev, r.Patterns)
			}
			a := rollback.AnalysisReport(rollback.ReportInput{Round: rp.Round, Attempt: rp.Attempt, Reason: req.Reason, At: now, Detection: det, Previous: prev})
			exec.Analyses[rp.Round] = a
			report.Analysis += a
		}
		for _, d := range s.st.Decisions {
			if d.Round == rp.Round {
				exec.Decisions[rp.Round] = append(exec.Decisions[rp.Round], rollback.Decision{ID: d.ID, Issue: d.Issue, Summary: d.Question, Option: d.Option, Choice: d.Decision, Rationale: d.Text})
			}
		}
	}
	res, err := plan.Execute(exec)
	if err != nil {
		return RollbackReport{}, err
	}
	restored, err := parseState(res.State)
	if err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: restore %s: %w", rollback.StateBackupKey(req.To), err)
	}
	// Session-level facts outlive the rounds they happened in: tokens were
	// spent, the rollbacks happened, the questions were asked.
	old := s.st
	restored.SessionID, restored.CreatedAt = old.SessionID, old.CreatedAt
	restored.Usage = old.Usage
	restored.Asked = old.Asked
	restored.Rollbacks = old.Rollbacks
	for _, r := range res.Records {
		if a := exec.Analyses[r.Round]; a != "" {
			r.Analysis = &rollback.AnalysisRecord{Detected: strings.Join(patternNames(r.Patterns), ", "), Recommendation: strings.Join(autoAdj, "; ")}
		}
		restored.Rollbacks.Records = append(restored.Rollbacks.Records, r)
	}
	restored.Adjustments = append(slices.Clone(old.Adjustments), req.Adjustments...)
	if step.AutoRetry {
		// AUTO_RETRY: the first rollback of a round retries with the
		// adjustments the detected patterns call for, without asking.
		restored.Adjustments = append(restored.Adjustments, autoAdj...)
	}
	keepRound := func(n int) bool { return n <= req.To }
	restored.Validation = slices.DeleteFunc(slices.Clone(old.Validation), func(v validationEntry) bool { return !keepRound(v.Round) })
	restored.Retries = slices.DeleteFunc(slices.Clone(old.Retries), func(v retryDetail) bool { return !keepRound(v.Round) })
	restored.Errors = slices.DeleteFunc(slices.Clone(old.Errors), func(v errorEntry) bool { return !keepRound(v.Round) })
	restored.ExampleLog = slices.DeleteFunc(slices.Clone(old.ExampleLog), func(e examples.LogEntry) bool { return !keepRound(e.Round) })
	restored.Recover = nil
	for _, rp := range plan.Rounds {
		restored.Recover = append(restored.Recover, exec.Decisions[rp.Round]...)
	}
	// A rollback reopens a finished session.
	restored.Outcome, restored.OutcomeReason, restored.FinishedAt = "", "", time.Time{}
	restored.CleanupDone = false
	restored.Pending, restored.Answers = nil, nil

	var ops []Op
	for _, op := range res.Ops() {
		switch op.Key {
		case rollback.StateKey, rollback.StatusKey, rollback.DecisionsKey:
			continue // re-rendered from the restored state by commit
		}
		if op.Delete {
			ops = append(ops, Delete(op.Key))
		} else {
			ops = append(ops, Put(op.Key, op.Value))
		}
	}
	s.st = restored
	if err := s.commit(ctx, append(ops, s.convergenceOps()...)...); err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: %w", err)
	}
	s.log.Info("rolled back", "to", req.To, "undone", report.Undone, "archives", report.Archives)
	report.Adjustments = autoAdj
	report.AutoApplied = step.AutoRetry
	report.Remaining = max(0, s.rollbackLimit()-s.st.Rollbacks.Used())
	return report, nil
}

func (s *Session) rollbackLimit() int {
	if s.cfg.RollbackLimit <= 0 {
		return rollback.DefaultLimit
	}
	return s.cfg.RollbackLimit
}

func patternNames(ps []rollback.Pattern) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// assignedIn returns the gaps round n was assigned, from its record or the
// round in progress.
func (s *Session) assignedIn(n int) []gap.ID {
	if s.st.Current != nil && s.st.Current.N == n {
		return s.st.Current.Assigned
	}
	for _, r := range s.st.Rounds {
		if r.N == n {
			return r.Assigned
		}
	}
	return nil
}

// rollbackAvailable reports whether a rollback could undo the current round
// now: a target is available and the limit allows one more. A Store that
// cannot list makes it unavailable rather than failing the question.
func (s *Session) rollbackAvailable(ctx context.Context) bool {
	return s.rollbackTarget(ctx) >= 0
}

// rollbackTarget is the target the divergence question's "roll back" uses:
// undo the trailing non-progressing rounds (at least the current one),
// limited by the backups and the session limit; -1 when none is possible.
func (s *Session) rollbackTarget(ctx context.Context) int {
	current := s.st.Round
	if s.st.Current != nil {
		current = s.st.Current.N
	}
	if s.st.Rollbacks.Used() >= s.rollbackLimit() || current < 1 {
		return -1
	}
	if err := s.flush(ctx); err != nil {
		return -1
	}
	keys, err := s.cfg.Store.List(ctx, "")
	if err != nil {
		return -1
	}
	avail := rollback.AvailableTargets(current, keys)
	if len(avail) == 0 {
		return -1
	}
	k := 1
	if t := s.st.Tracker; t != nil {
		if n := t.StallCount(); n > k {
			k = n
		}
	}
	want := max(current-k, current-(s.rollbackLimit()-s.st.Rollbacks.Used()))
	best := -1
	for _, a := range avail { // newest first
		if a >= want {
			best = a
		}
	}
	if best < 0 {
		best = avail[0]
	}
	return best
}

// rollbackFromQuestion carries out "roll back" chosen in a question. The
// answer text may name the target round.
func (s *Session) rollbackFromQuestion(ctx context.Context, a Answer, trigger rollback.Trigger, reason string) error {
	to := s.rollbackTarget(ctx)
	if n, ok := firstInt(a.Text); ok {
		to = n
	}
	if to < 0 {
		return fmt.Errorf("rollback chosen but no rollback is possible: %w", ErrRollbackLimit)
	}
	var adj []string
	if t := strings.TrimSpace(a.Text); t != "" && strings.Trim(t, "0123456789 ") != "" {
		adj = append(adj, t) // text beyond a bare round number instructs the retry
	}
	_, err := s.rollback(ctx, RollbackRequest{To: to, Reason: reason, Adjustments: adj, Trigger: trigger})
	if errors.Is(err, rollback.ErrLimit) {
		return fmt.Errorf("%w: %w", ErrRollbackLimit, err)
	}
	return err
}

func firstInt(s string) (int, bool) {
	n, digits := 0, 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n = n*10 + int(r-'0')
			digits++
		} else if digits > 0 {
			break
		}
	}
	return n, digits > 0 && digits < 4
}
