package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
)

// disagreeState is the progress of a round's disagreement phase (the step
// after validation that handles DISAGREE blocks and implicit disagreement;
// docs/workflow.md#one-round), so a deferred question resumes exactly where
// it stopped.
type disagreeState struct {
	Detected bool                 `json:"detected,omitempty"`
	Findings []conflict.Finding   `json:"findings,omitempty"`
	Alerts   []conflict.RateAlert `json:"alerts,omitempty"`
	// NextFinding and NextAlert count the questions already answered.
	NextFinding int  `json:"next_finding,omitempty"`
	NextAlert   int  `json:"next_alert,omitempty"`
	Done        bool `json:"done,omitempty"`
	// Submitted is the number of DISAGREE blocks written; RateChecked is
	// set once the rate check ran, after the implicit findings were
	// answered (converted ones count as DISAGREEs: round-10 §9 Phase 2).
	Submitted   int  `json:"submitted,omitempty"`
	RateChecked bool `json:"rate_checked,omitempty"`
}

// conflictLimits are the DISAGREE rate limits from Config.
func (s *Session) conflictLimits() conflict.Limits {
	return conflict.Limits{RoundRate: s.cfg.DisagreeRoundLimit, SessionRate: s.cfg.DisagreeSessionLimit,
		SessionRounds: s.cfg.DisagreeWindow, MaxPerRound: s.cfg.DisagreeMaxPerRound}
}

// issuesOf returns round n's Reviewer issues as the conflict package sees
// them, with the user's severity overrides applied.
func (s *Session) issuesOf(n int) []conflict.Issue {
	var out []conflict.Issue
	for _, is := range s.st.Issues {
		if is.Round == n {
			out = append(out, is)
		}
	}
	return conflict.ApplyOverrides(out, s.st.Overrides)
}

// issuesBefore returns the session's issues of the rounds before n, with
// severity overrides applied.
func (s *Session) issuesBefore(n int) []conflict.Issue {
	var out []conflict.Issue
	for _, is := range s.st.Issues {
		if is.Round < n {
			out = append(out, is)
		}
	}
	return conflict.ApplyOverrides(out, s.st.Overrides)
}

// disagreement detects explicit and implicit disagreement with the previous
// review, checks the DISAGREE rate, and asks the user to resolve each
// conflict; unresolved HIGH/CRITICAL conflicts keep their gaps BLOCKED.
func (s *Session) disagreement(ctx context.Context) (stop, error) {
	cur := s.st.Current
	ds := &cur.Disagree
	if ds.Done || cur.Engineer.Status != roleAccepted {
		return goOn, nil
	}
	prev := s.st.Round // the review being answered is the last completed round's
	if !ds.Detected {
		out, err := s.get(ctx, outputKey(cur.N, Engineer))
		if err != nil {
			return goOn, fmt.Errorf("round %d disagreement: read engineer.md: %w", cur.N, err)
		}
		var previous string
		if b, err := s.get(ctx, outputKey(prev, Engineer)); err == nil {
			previous = string(b)
		} else if !errors.Is(err, ErrNotFound) {
			return goOn, fmt.Errorf("round %d disagreement: read %s: %w", cur.N, outputKey(prev, Engineer), err)
		}
		issues := s.issuesOf(prev)
		ex := conflict.DetectExplicit(conflict.ExplicitInput{Round: cur.N, EngineerOutput: string(out), Issues: issues, Earlier: s.issuesBefore(prev), At: s.now()})
		for _, f := range conflict.DetectImplicit(conflict.ImplicitInput{Round: cur.N, EngineerOutput: string(out), PreviousOutput: previous,
			Issues: issues, Assigned: cur.Assigned, Ignore: s.st.Ignore}) {
			if f.Escalate {
				ds.Findings = append(ds.Findings, f)
				continue
			}
			s.st.Logged = append(s.st.Logged, loggedEvent{Kind: loggedImplicitDisagreement, Round: cur.N, At: s.now(), Issue: f.IssueID,
				Severity: f.Issue.Severity, Confidence: f.Confidence, Heuristics: f.Heuristics, Evidence: f.Evidence})
			if f.Issue.Severity.AtLeastHigh() {
				// A flag does not discard a fix: the fix is reviewed as usual,
				// and the Reviewer checks the issue explicitly.
				cur.Reviewer.Context = append(cur.Reviewer.Context, fmt.Sprintf(
					"Check explicitly whether this round's Engineer output resolves %s (%s): %s. The Engineer revised the gap without naming the issue; if the concern remains, raise it again as a new issue.",
					f.IssueID, f.Issue.Severity, oneLine(f.Issue.Summary)))
			}
		}
		for _, d := range ex.Logged {
			s.st.Logged = append(s.st.Logged, loggedEvent{Kind: loggedDisagree, Round: cur.N, At: s.now(), Issue: d.IssueID, Position: oneLine(d.EngineerPosition)})
		}
		// A "## DISAGREE:" block naming an issue that does not exist never
		// gets here: validation rejects it (INVALID_DISAGREE_REF, round-10
		// §2) and the Engineer retries. What is left unmatched is an
		// informal disagreement ("## Disagree: …", "**Engineer Position:**
		// DISAGREE") that names no issue of the session and soft-matches
		// none of the issues answered: logged, not a conflict.
		for _, d := range ex.Unmatched {
			s.st.Logged = append(s.st.Logged, loggedEvent{Kind: loggedUnmatchedDisagree, Round: cur.N, At: s.now(), Issue: d.IssueID,
				Line: d.Line, Against: prev, Position: oneLine(d.EngineerPosition)})
		}
		s.st.Conflicts = append(s.st.Conflicts, ex.Conflicts...)
		ds.Submitted = ex.Submitted
		ds.Detected = true
		s.stage()
	}

	// Ignored feedback first: the answers may add conflicts.
	for ds.NextFinding < len(ds.Findings) {
		f := ds.Findings[ds.NextFinding]
		q := conflict.ImplicitQuestion(f)
		q.Round = cur.N
		a, paused, err := s.ask(ctx, q)
		if err != nil || paused {
			return waitIf(paused), err
		}
		o, err := conflict.ResolveImplicit(f, a.Key, a.Text, s.nextDecisionID(cur.N), s.now(), s.st.Ignore)
		if err != nil {
			return goOn, fmt.Errorf("round %d: %s: %w", cur.N, q.ID, err)
		}
		s.st.Ignore = o.Ignore
		if o.Instruction != "" {
			s.st.Instructions = append(s.st.Instructions, o.Instruction)
		}
		if o.GapState == gap.NeedsRevision {
			if g, ok := s.st.Ledger.Get(f.Issue.Gap); ok && g.State == gap.Proposed {
				if err := s.st.Ledger.Transition(g.ID, gap.NeedsRevision, cur.N, s.now(), f.IssueID+" not addressed: the Engineer must address it explicitly"); err != nil {
					return goOn, err
				}
			}
		}
		if o.Conflict != nil {
			s.st.Conflicts = append(s.st.Conflicts, *o.Conflict)
		}
		if o.Decision != nil {
			s.st.ConflictDecisions = append(s.st.ConflictDecisions, *o.Decision)
		}
		ds.NextFinding++
		s.stage()
	}

	// A session paused by refine 0.1 computed its alerts before the implicit
	// findings and has no RateChecked: its alerts stand.
	if !ds.RateChecked && len(ds.Alerts) == 0 {
		var thisRound []conflict.Conflict
		for _, c := range s.st.Conflicts {
			if c.Round == cur.N {
				thisRound = append(thisRound, c)
			}
		}
		s.st.RateHistory, ds.Alerts = conflict.CheckRate(s.st.RateHistory, conflict.RateInputFor(cur.N, s.issuesOf(prev), thisRound, ds.Submitted), s.conflictLimits())
		ds.RateChecked = true
		s.stage()
	}

	for ds.NextAlert < len(ds.Alerts) {
		alert := ds.Alerts[ds.NextAlert]
		q := conflict.RateQuestion(alert)
		q.Round = cur.N
		a, paused, err := s.ask(ctx, q)
		if err != nil || paused {
			return waitIf(paused), err
		}
		opt, _ := q.Option(a.Key)
		ds.NextAlert++
		s.recordDecision(cur.N, "", q, a, opt.Label)
		switch opt.Effect {
		case conflict.EffectRequestRevision:
			return backToEngineer, s.redoEngineer(conflict.BlockInstruction(alert))
		case conflict.EffectAdjustEngineer, conflict.EffectMediateScope:
			if t := strings.TrimSpace(a.Text); t != "" {
				s.st.Adjustments = append(s.st.Adjustments, t)
			}
		case conflict.EffectReviewReviewer:
			// FLOW-006 Example 3: the user re-grades issues ("ISSUE-R7-001:
			// LOW"); one downgraded below HIGH no longer blocks, and one
			// downgraded to LOW is no longer a conflict.
			if err := s.applyOverrides(cur.N, a.Text); err != nil {
				return goOn, err
			}
		case conflict.EffectAdjustReviewer:
			if t := strings.TrimSpace(a.Text); t != "" {
				s.st.ReviewerAdjustments = append(s.st.ReviewerAdjustments, t)
			}
		}
		s.stage()
	}

	paused, err := s.resolveConflicts(ctx, cur.N)
	if err != nil || paused {
		return waitIf(paused), err
	}
	ds.Done = true
	return goOn, nil
}

// resolveConflicts asks the user to decide every unresolved conflict, most
// severe first (FLOW-006 §4), and applies each decision to its gap. The
// gaps of unresolved HIGH/CRITICAL conflicts are BLOCKED meanwhile.
func (s *Session) resolveConflicts(ctx context.Context, round int) (bool, error) {
	if err := s.blockConflictGaps(); err != nil {
		return false, err
	}
	for {
		pending := conflict.Pending(s.st.Conflicts)
		if len(pending) == 0 {
			return false, nil
		}
		c := pending[0]
		q := conflict.ConflictQuestion(c)
		q.Round = round // a conflict of an earlier round may be decided now
		a, paused, err := s.ask(ctx, q)
		if err != nil || paused {
			return paused, err
		}
		d, resolved, err := conflict.Decide(c, conflict.Resolution{Option: a.Key, Text: a.Text}, s.nextDecisionID(round), s.now())
		if err != nil {
			return false, fmt.Errorf("round %d: decide %s: %w", round, c.IssueID, err)
		}
		for i := range s.st.Conflicts {
			if s.st.Conflicts[i].IssueID == c.IssueID && s.st.Conflicts[i].Open() {
				s.st.Conflicts[i] = resolved
			}
		}
		s.st.ConflictDecisions = append(s.st.ConflictDecisions, d)
		if err := s.applyDecision(round, d); err != nil {
			return false, err
		}
		s.stage()
	}
}

// applyDecision moves the decided issue's gap: out of BLOCKED to the state
// the decision suggests (OPEN to revise per the decision, ACCEPTED when the
// Engineer's proposal stands), unless another conflict still holds it.
func (s *Session) applyDecision(round int, d conflict.Ruling) error {
	g, ok := s.st.Ledger.Get(d.Gap)
	if !ok || d.NextState == "" {
		return nil
	}
	if slices.Contains(conflict.BlockedGaps(s.st.Conflicts), g.ID) {
		return nil
	}
	to := d.NextState
	if to == gap.Accepted && !d.Severity.AtLeastHigh() {
		// Keeping the Engineer's position on a MEDIUM/LOW issue settles
		// that issue, not the gap: the proposal is reviewed as usual (the
		// round may have revised it for other issues).
		return nil
	}
	why := fmt.Sprintf("%s: option %s chosen for %s", d.ID, d.ChosenOption, d.IssueID)
	switch {
	case g.State == to:
		return nil
	case g.State == gap.Proposed && to == gap.Open:
		to = gap.NeedsRevision // the proposal must be revised per the decision
	case !gap.CanTransition(g.State, to):
		return nil
	}
	return s.st.Ledger.Transition(g.ID, to, round, s.now(), why)
}

// applyOverrides reads severity overrides from the user's text: each issue
// ID takes the first severity named after it (so "ISSUE-R7-001 and
// ISSUE-R7-002 to LOW" downgrades both), and applies them to the session's
// open conflicts.
func (s *Session) applyOverrides(round int, text string) error {
	ids := gap.FindIssueMatches(text)
	for _, m := range ids {
		sev, ok := firstSeverity(text[m.End:])
		if !ok {
			continue
		}
		if s.st.Overrides == nil {
			s.st.Overrides = conflict.Overrides{}
		}
		s.st.Overrides[m.ID] = sev
		for j, c := range s.st.Conflicts {
			if c.IssueID == m.ID && c.Open() {
				nc, err := conflict.OverrideSeverity(c, sev)
				if err != nil {
					return fmt.Errorf("round %d: override %s: %w", round, m.ID, err)
				}
				s.st.Conflicts[j] = nc
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
func (s *Session) blockConflictGaps() error {
	for _, id := range conflict.BlockedGaps(s.st.Conflicts) {
		g, ok := s.st.Ledger.Get(id)
		if !ok || !g.State.IsOpen() || g.State == gap.Blocked {
			continue
		}
		if err := s.st.Ledger.Transition(id, gap.Blocked, s.roundNow(), s.now(), "unresolved HIGH/CRITICAL conflict"); err != nil {
			return err
		}
	}
	return nil
}

// redoEngineer readies the round to go back to the Engineer with an instruction
// (the DISAGREE limit's "request revision"): its proposals return to
// IN_PROGRESS and this round's conflicts are dropped, to be detected again.
func (s *Session) redoEngineer(instruction string) error {
	cur := s.st.Current
	for _, id := range cur.Engineer.Gaps {
		g, ok := s.st.Ledger.Get(id)
		if !ok {
			continue
		}
		for _, to := range []gap.State{gap.NeedsRevision, gap.InProgress} {
			if g.State == gap.Proposed || g.State == gap.NeedsRevision || g.State == gap.Blocked {
				if gap.CanTransition(g.State, to) {
					if err := s.st.Ledger.Transition(id, to, cur.N, s.now(), "DISAGREE limit: Engineer asked to revise"); err != nil {
						return err
					}
					g.State = to
				}
			}
		}
		if g.State == gap.Open {
			if err := s.st.Ledger.Transition(id, gap.InProgress, cur.N, s.now(), "DISAGREE limit: Engineer asked to revise"); err != nil {
				return err
			}
		}
	}
	s.st.Conflicts = slices.DeleteFunc(s.st.Conflicts, func(c conflict.Conflict) bool { return c.Round == cur.N && c.Open() })
	cur.Engineer.Status = roleRunning
	cur.Engineer.Result = nil
	cur.Engineer.Context = append(cur.Engineer.Context, instruction)
	cur.Engineer.Budget = len(cur.Engineer.Attempts) + 1 + s.cfg.MaxRetries
	cur.Engineer.ParallelDone = true
	cur.Disagree = disagreeState{}
	// The round goes back to the Engineer: disagreement returns
	// backToEngineer and playRound sets the phase; both ride on the next
	// commit (the Engineer's prompt), or on neither after a crash, when the
	// answer that asked for this is applied again.
	s.stage()
	return nil
}

// presentBlockingDecisions asks the conflicts every open gap is blocked on.
func (s *Session) presentBlockingDecisions(ctx context.Context) (bool, error) {
	if len(conflict.Pending(s.st.Conflicts)) == 0 {
		return false, fmt.Errorf("round %d: every open gap is BLOCKED and no conflict is pending: unblock a gap or abandon the session", s.st.Round+1)
	}
	return s.resolveConflicts(ctx, s.st.Round)
}

// conflictBlock counts unresolved HIGH/CRITICAL conflicts for the
// termination tree (FLOW-006 §8).
func (s *Session) conflictBlock() convergence.ConflictBlock {
	crit, high := conflict.Blocking(s.st.Conflicts)
	return convergence.ConflictBlock{UnresolvedCritical: crit, UnresolvedHigh: high}
}

// extraLimitations lists unresolved MEDIUM/LOW conflicts and waived issues
// as known limitations of the final spec.
func (s *Session) extraLimitations() []convergence.Limitation {
	var out []convergence.Limitation
	for _, c := range s.st.Conflicts {
		if c.Open() {
			out = append(out, convergence.Limitation{ID: c.IssueID, Severity: c.Issue.Severity, Title: c.Subject, Note: "unresolved conflict"})
		}
	}
	for _, d := range s.st.ConflictDecisions {
		if d.ChosenOption == conflict.OptionWaive {
			out = append(out, convergence.Limitation{ID: d.IssueID, Severity: d.Severity, Title: d.Subject, Note: "waived by the user"})
		}
	}
	return out
}

// nextDecisionID numbers decisions per round across every kind of
// decision (gap.NextDecisionID over the session's decisions and conflict
// decisions), so a decision re-applied after a rollback, which keeps its ID
// and may be filed under another round, is never issued twice.
func (s *Session) nextDecisionID(round int) string {
	ids := make([]string, 0, len(s.st.Decisions)+len(s.st.ConflictDecisions))
	for _, d := range s.st.Decisions {
		ids = append(ids, d.ID)
	}
	for _, d := range s.st.ConflictDecisions {
		ids = append(ids, d.ID)
	}
	return gap.NextDecisionID(ids, round)
}

func (s *Session) roundNow() int {
	if s.st.Current != nil {
		return s.st.Current.N
	}
	return s.st.Round
}

// heuristicList names the heuristics that fired ("H1 UNADDRESSED_ID, …").
func heuristicList(hs []conflict.Heuristic) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = string(h)
	}
	return strings.Join(parts, ", ")
}
