package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
)

// The protocol between the decisions and their driver (DESIGN §15, §20),
// in the shape of etcd raft's RawNode: an Input goes in through Handle, a
// Ready comes out; the driver commits its writes and calls Advance, makes
// its calls, asks its questions, and hands the results back as Inputs.
// The decisions never read a clock (every Input carries its time), call
// nothing and write nothing but the Ready.

// Input is one thing that happens to a session. Every Input carries the
// time it happened, which is the time of everything it decides.
type Input interface{ inputAt() time.Time }

// Run starts a run of the session: play rounds until a terminal outcome,
// a question or a call (Step: one round, or the rest of the one in
// progress).
type Run struct {
	At   time.Time
	Step bool
	// Asks says the driver has an Asker: the Ready lists the questions to
	// ask it (Ready.Ask). Immediate says the Asker answers at once, with
	// no person to wait for: a question then needs no commit of its own.
	Asks, Immediate bool
	// Link is the run's link from a RunLinker, kept in the state for the
	// next run's start event ("" for none).
	Link string
}

// Continue goes on after a Ready with More: the driver was not cancelled.
type Continue struct{ At time.Time }

// Interrupt ends the run: the driver's context ended (Cause).
type Interrupt struct {
	At    time.Time
	Cause error
}

// Deliver hands over the results of the calls the last Ready asked for,
// and the transport retries made on the way.
type Deliver struct {
	At      time.Time
	Results []CallResult
	Notes   []TransportNote
}

// CallResult is one call's result.
type CallResult struct {
	Call   CallID
	Result RoleResult
}

// Answered is an answer to a pending question: from the run's Asker (the
// question of Ready.Ask) or from the host (Session.Answer, another
// process).
type Answered struct {
	At       time.Time
	Question string
	Answer   question.Answer
}

// Deferred says the run's Asker cannot answer the question now.
type Deferred struct {
	At       time.Time
	Question string
}

// AskFailed says the run's Asker failed on the question.
type AskFailed struct {
	At       time.Time
	Question string
	Err      error
}

// Approve ends the session now as USER_APPROVED.
type Approve struct {
	At              time.Time
	Note            string
	AcknowledgeHigh bool
}

// Abandon ends the session now as ABANDONED.
type Abandon struct {
	At     time.Time
	Reason string
}

// Rollback undoes whole rounds (after the dialogs the rollback mode calls
// for, asked through Ready.Ask).
type Rollback struct {
	At      time.Time
	Request RollbackRequest
	// Asks and Immediate are Run's.
	Asks, Immediate bool
}

// ChangeSettings records new settings with the session.
type ChangeSettings struct {
	At       time.Time
	Settings Settings
}

func (in Run) inputAt() time.Time            { return in.At }
func (in Continue) inputAt() time.Time       { return in.At }
func (in Interrupt) inputAt() time.Time      { return in.At }
func (in Deliver) inputAt() time.Time        { return in.At }
func (in Answered) inputAt() time.Time       { return in.At }
func (in Deferred) inputAt() time.Time       { return in.At }
func (in AskFailed) inputAt() time.Time      { return in.At }
func (in Approve) inputAt() time.Time        { return in.At }
func (in Abandon) inputAt() time.Time        { return in.At }
func (in Rollback) inputAt() time.Time       { return in.At }
func (in ChangeSettings) inputAt() time.Time { return in.At }

// Ready is what an Input decided, as plain data: commit Cold to the cold
// store and Persist to the session's Store (one Commit each), call
// Advance, then make the Calls and hand their results back (Deliver), or
// ask Ask[0] and hand the answer back (Answered, Deferred, AskFailed), or
// Continue when More is set, or stop: the run ended at Outcome.
type Ready struct {
	Persist []store.Op
	Cold    []store.Op
	// Commits is how many commits of the decisions Persist holds.
	Commits int
	Calls   []llm.Request
	// Ask are the questions the run's Asker is to be asked, in order.
	Ask    []question.Question
	Events []Event
	// More says the decisions stopped between two phases with more to
	// play: Continue, unless the run is to stop (Interrupt).
	More bool
	// Round is the round in progress, 0 between rounds: the round whose
	// scope the driver keeps open.
	Round   int
	Outcome Outcome
	// Report is the round's report of a Step, Rollback the report of a
	// Rollback.
	Report   RoundReport
	Rollback RollbackReport
	// Stale says the decisions hold what was never stored (a failed
	// rollback): take the session up again from its Store.
	Stale bool
}

// failedUncommitted says whether a rollback's error is a failure, not one
// of its dialog's outcomes (waiting for an answer, the limit reached) or
// a cancellation, whose state is kept and committed by the next step.
func failedUncommitted(err error) bool {
	var stopped *interruption
	return err != nil && !errors.Is(err, ErrDeferred) && !errors.Is(err, ErrRollbackLimit) && !errors.As(err, &stopped)
}

// errYield stops the decisions between two phases: the driver may stop
// there (Interrupt) or go on (Continue).
var errYield = errors.New("yield to the driver")

// runMode is what a run plays.
type runMode int

const (
	modeNone runMode = iota
	modeRun
	modeStep
	modeRollback
)

// runState is the run in progress: what it plays, how its questions are
// asked, and what it asked so far.
type runState struct {
	mode            runMode
	asks, immediate bool
	// queue are the questions the run's steps asked, to be asked in
	// order; offered are those the last Ready asked; asked and deferred
	// are those the run's Asker answered and deferred (not asked again by
	// this run unless a step asks again); tries counts invalid answers to
	// a question (asked again with why, three times at most).
	queue           []string
	offered         map[string]bool
	asked, deferred map[string]bool
	tries           map[string]int
	rejected        map[string]error
	// limitErr is the rollback limit a rollback's dialog reached while it
	// asks what to do: the run's error if the question is deferred.
	limitErr error
	// discard drops what the run decided: a rollback cancelled or failed
	// before its commit leaves the session as it was. fresh marks a run
	// of a new rollback request, which has committed nothing yet.
	discard, fresh bool
	// stopAsking is set once the Asker deferred: the run asks nothing more.
	stopAsking bool
	outcome    Outcome
	report     RoundReport
	rollback   RollbackReport
}

// View is what the decisions read the session's Store through: a read-only
// view the driver binds (with its context) for each Handle.
type View interface {
	Get(key string) ([]byte, error)
	List(prefix string) ([]string, error)
}

// Handle plays in and returns what it decided. Until the driver calls
// Advance for a Ready with writes, it refuses every input with
// ErrNotPersisted. v is the session's Store and cold is the cold store
// (nil: none), as the driver reads them now.
func (s *Engine) Handle(v, cold View, in Input) (Ready, error) {
	if s.unpersisted > 0 {
		return Ready{}, fmt.Errorf("%w: commit the last Ready.Persist to the Store, then call Advance", ErrNotPersisted)
	}
	s.now = in.inputAt().UTC()
	if s.out == nil {
		s.out = newReadyWrites(s.caps, s.checks)
	}
	s.out.Base, s.out.ColdBase = v, cold
	err := s.handle(in)
	return s.ready(err)
}

// Advance acknowledges that the last Ready's writes are committed.
func (s *Engine) Advance() { s.unpersisted = 0 }

// handle decides in.
func (s *Engine) handle(in Input) error {
	switch in := in.(type) {
	case Run:
		s.run.outcome = Outcome{}
		mode := modeRun
		if in.Step {
			mode = modeStep
			if s.st.Outcome.Terminal() && s.st.RollbackFlow == nil && !s.st.FinishPending() {
				return fmt.Errorf("step: %w (%s); roll back to reopen it", ErrFinished, s.st.Outcome)
			}
		}
		s.startRun(mode, in.Asks, in.Immediate)
		s.resumeFailed()
		if in.Link != "" && in.Link != s.st.RunLink {
			s.st.RunLink, s.dirty = in.Link, true
		}
		return s.play()
	case Continue:
		s.passYield = true
		return s.play()
	case Interrupt:
		// The calls made for this run are made again by the next; what
		// the decisions settled before the stop (a phase's output) is
		// committed now, not asked for again.
		clear(s.ext.Delivered)
		if err := s.flush(); err != nil {
			return err
		}
		s.run.outcome = Outcome{Status: StatusPaused, Round: s.st.Round, Reason: "interrupted: " + in.Cause.Error() + "; run again to resume", Pending: slices.Clone(s.st.Pending)}
		s.run.mode = modeNone
		return in.Cause
	case Deliver:
		for _, n := range in.Notes {
			s.noteTransport(n)
		}
		for _, r := range in.Results {
			s.ext.Delivered[r.Call] = r.Result
		}
		return s.play()
	case Answered:
		return s.answered(in)
	case Deferred:
		s.settleAsked(in.Question)
		s.run.deferred[in.Question] = true
		s.run.stopAsking = true // the run stops here, paused
		// The question becomes durable now if it rode on the Ready.
		if err := s.flush(); err != nil {
			return err
		}
		return s.run.limitErr
	case AskFailed:
		s.settleAsked(in.Question)
		q, _ := s.pendingQuestion(in.Question)
		err := fmt.Errorf("round %d: ask %s: %w", q.Round, in.Question, in.Err)
		if s.run.mode == modeRollback {
			// Nothing the rollback decided is kept: the session is as it
			// was before the request.
			s.run.rollback, s.run.discard = RollbackReport{}, true
			return fmt.Errorf("%w (the session is unchanged)", err)
		}
		o, err := s.failed(err)
		s.run.outcome, s.run.mode = o, modeNone
		return err
	case Approve:
		s.run.outcome = Outcome{} // the Ready's outcome is the session's, not the last run's
		return s.approve(in)
	case Abandon:
		s.run.outcome = Outcome{}
		if s.st.Outcome.Terminal() {
			return fmt.Errorf("abandon: %w (%s)", ErrFinished, s.st.Outcome)
		}
		s.fileEndDecision("Abandon the session", "abandon", "ABANDONED", in.Reason)
		return s.finish(StatusAbandoned, EndReason("abandoned by the user", in.Reason))
	case Rollback:
		return s.rollback(in)
	case ChangeSettings:
		return s.applySettings(in.Settings)
	}
	return fmt.Errorf("refine: internal error: unknown input %T", in)
}

// startRun begins a run of mode.
func (s *Engine) startRun(mode runMode, asks, immediate bool) {
	s.run = runState{mode: mode, asks: asks, immediate: immediate, offered: map[string]bool{},
		asked: map[string]bool{}, deferred: map[string]bool{}, tries: map[string]int{}, rejected: map[string]error{}}
	s.ext.AtOnce = asks && immediate
	s.passYield = true
	s.scopeRound = 0 // the driver's round scope ends with each run
}

// yieldHere stops the decisions between two phases of a run, once: the
// driver ends the run there if its context ended (Interrupt), else the
// Continue that follows plays on from here.
func (s *Engine) yieldHere() bool {
	if s.passYield || s.run.mode == modeNone {
		s.passYield = false
		return false
	}
	return true
}

// play plays the run's decisions on from where they stopped.
func (s *Engine) play() error {
	switch s.run.mode {
	case modeRun:
		o, err := s.runRounds()
		s.run.outcome = o
		return err
	case modeStep:
		rep, err := s.stepOnce()
		s.run.report = rep
		return err
	case modeRollback:
		rep, err := s.driveRollback()
		if err == nil {
			err = s.flush()
		}
		s.run.rollback = rep
		return err
	}
	return nil // no run: an answer or a delivery outside one is only recorded
}

// pendingQuestion returns the pendingQuestion question id.
func (s *Engine) pendingQuestion(id string) (question.Question, bool) {
	i := slices.IndexFunc(s.st.Pending, func(q question.Question) bool { return q.ID == id })
	if i < 0 {
		return question.Question{}, false
	}
	return s.st.Pending[i], true
}

// answered records an answer: the run's Asker's (asked again with why
// when invalid, three times at most), or the host's.
func (s *Engine) answered(in Answered) error {
	q, ok := s.pendingQuestion(in.Question)
	if !ok {
		ids := make([]string, len(s.st.Pending))
		for k, p := range s.st.Pending {
			ids[k] = p.ID
		}
		return fmt.Errorf("answer %q: %w (pending: %v)", in.Question, ErrUnknownQuestion, ids)
	}
	fromAsker := s.run.mode != modeNone && s.run.asks && s.run.offered[q.ID]
	if fromAsker {
		s.settleAsked(q.ID)
	}
	if err := acceptAnswer(s.st, q, in.Answer); err != nil {
		if !fromAsker {
			return fmt.Errorf("answer %q: %w", in.Question, err)
		}
		s.log.Warn("asker gave an invalid answer", "question", q.ID, "err", err)
		s.run.tries[q.ID]++
		if s.run.tries[q.ID] >= 3 {
			o, ferr := s.failed(fmt.Errorf("round %d: ask %s: %w", q.Round, q.ID, err))
			s.run.outcome, s.run.mode = o, modeNone
			return ferr
		}
		s.run.rejected[q.ID] = err
		return nil // asked again (Ready.Ask), with why
	}
	delete(s.run.rejected, q.ID)
	if !fromAsker && s.st.RollbackFlow != nil && s.run.mode == modeNone {
		// An answer to a waiting rollback's dialog carries the rollback
		// on, whoever gives it (a host through Next, another process): the
		// dialog's next question, or the rollback carried out.
		s.startRun(modeRollback, false, false)
		err := s.play()
		if errors.Is(err, ErrRollbackLimit) || errors.Is(err, ErrDeferred) {
			// An outcome of the dialog (the limit's answer, a question
			// waiting), not a failure of the answer: Status shows it.
			err = nil
		}
		return err
	}
	if !fromAsker {
		return s.checkpoint()
	}
	s.ext.Auto[q.ID] = s.run.immediate
	s.dirty = true
	s.run.limitErr = nil
	return s.play()
}

// settleAsked records that the run's Asker gave its word on question id.
func (s *Engine) settleAsked(id string) {
	s.run.asked[id] = true
	delete(s.run.offered, id)
	s.run.queue = slices.DeleteFunc(s.run.queue, func(q string) bool { return q == id })
}

// approve ends the session as USER_APPROVED, unless a conflict blocks it.
func (s *Engine) approve(in Approve) error {
	if s.st.Outcome.Terminal() {
		return fmt.Errorf("approve: %w (%s)", ErrFinished, s.st.Outcome)
	}
	high, err := ApprovalBlocked(s.st, in.AcknowledgeHigh)
	if err != nil {
		return err
	}
	if high {
		s.st.HighAck = true
	}
	s.fileEndDecision("Approve the spec as it stands", "approve", "USER_APPROVED", in.Note)
	return s.finish(StatusUserApproved, EndReason("approved by the user", in.Note))
}

// rollback starts a rollback and plays its dialogs as far as they go.
func (s *Engine) rollback(in Rollback) error {
	req := in.Request
	if req.Trigger == "" {
		req.Trigger = rollback.TriggerUser
	}
	if f := s.st.RollbackFlow; f != nil {
		pending := slices.Clone(s.st.Pending)
		s.run.rollback = RollbackReport{Pending: pending}
		if !sameRollback(f, req) {
			// Not an answer to that one's dialog: its target and reason
			// would be taken for this request's.
			e := &PendingRollbackError{Round: f.Current, To: f.To, Reason: f.Reason, Adjustments: slices.Clone(f.Adjustments)}
			if len(pending) > 0 {
				e.Question = pending[0].ID
			}
			return fmt.Errorf("rollback: %w", e)
		}
		return fmt.Errorf("rollback: a rollback of round %d already waits for an answer: %w", f.Current, ErrDeferred)
	}
	s.startRun(modeRollback, in.Asks, in.Immediate)
	s.run.fresh = true
	rep, err := s.startRollback(req, s.st.CurrentRound())
	s.run.rollback = rep
	return err
}

// ready turns what Handle decided, stopped by err, into the Ready.
func (s *Engine) ready(err error) (Ready, error) {
	r := Ready{Events: s.events}
	s.events = nil
	if cur := s.st.Current; cur != nil {
		r.Round = cur.N
	}
	if errors.Is(err, errYield) {
		// Nothing to commit yet: the writes so far ride on a later Ready.
		r.More = true
		return r, nil
	}
	needCalls := errors.Is(err, ErrNeedCalls)
	if needCalls {
		err = nil
	}
	atLimit := s.run.mode == modeRollback && errors.Is(err, ErrRollbackLimit)
	if (err == nil || atLimit) && !needCalls {
		r.Ask = s.toAsk()
		if len(r.Ask) > 0 && atLimit {
			// Asked what to do at the limit: the rollback goes on with the answer.
			s.run.limitErr, err = err, nil
		}
		if len(r.Ask) > 0 && (s.ext.AtOnce && len(s.ext.Needed) == 0 || s.run.mode == modeRollback) {
			// An Immediate Asker's answers ride on this Ready's writes;
			// a rollback commits nothing until its dialogs carry it out,
			// cancel it or wait for an answer.
			r.Outcome = outcomeOf(s.st)
			r.Rollback = s.run.rollback
			return r, nil
		}
	}
	if s.run.mode == modeRollback && s.run.fresh && (failedUncommitted(err) || s.run.rollback.Cancelled) {
		// Failed before its commit (a backup that does not read, say), or
		// cancelled: nothing it decided is kept.
		s.run.discard = true
	}
	if s.run.discard {
		// What the decisions hold was never stored: the driver takes the
		// session up again from its Store.
		s.out, s.stale = nil, true
		r.Stale, r.Rollback, r.Outcome = true, s.run.rollback, outcomeOf(s.st)
		s.run = runState{}
		return r, err
	}
	out := s.out
	s.out = nil
	out.Base, out.ColdBase = nil, nil
	if uerr := out.Unchanged(); uerr != nil {
		return Ready{}, uerr
	}
	r.Persist, r.Cold, r.Commits = CompactOps(out.Ops), out.Cold, out.Commits
	if len(out.Ops) > 0 || len(out.Cold) > 0 {
		s.unpersisted = max(1, out.Commits)
	}
	if needCalls {
		r.Calls = slices.Clone(s.ext.Needed)
		s.ext.Needed = nil
		r.Outcome = Outcome{Status: StatusRunning, Round: s.st.Round}
		return r, nil
	}
	if err != nil {
		// The calls asked for will not be delivered: their attempts end here.
		s.endPlans(err)
		r.Events, s.events = append(r.Events, s.events...), nil
	}
	r.Outcome = outcomeOf(s.st)
	if s.run.outcome.Status != "" {
		r.Outcome = s.run.outcome
	}
	r.Report, r.Rollback, r.Stale = s.run.report, s.run.rollback, s.stale
	if len(r.Ask) == 0 {
		s.run.mode = modeNone // the run ends here
	}
	return r, err
}

// toAsk are the questions the run's Asker is to be asked now: a question
// asked again after an invalid answer (with why), those the run's steps
// asked, in order, then any other waiting without an answer that this run
// has not asked (one pending since an earlier process), less those it
// deferred.
func (s *Engine) toAsk() []question.Question {
	if s.run.mode == modeNone || !s.run.asks || s.run.stopAsking {
		s.ext.Asked = nil
		return nil
	}
	for _, q := range s.ext.Asked {
		if !slices.Contains(s.run.queue, q.ID) {
			s.run.queue = append(s.run.queue, q.ID)
		}
	}
	s.ext.Asked = nil
	var out []question.Question
	add := func(id string) {
		q, waits := s.pendingQuestion(id)
		if _, has := s.st.Answers[id]; !waits || has || s.run.deferred[id] || slices.ContainsFunc(out, func(p question.Question) bool { return p.ID == id }) {
			return
		}
		if err := s.run.rejected[id]; err != nil {
			q.Body = fmt.Sprintf("%s\n\n(Previous answer rejected: %v)", q.Body, err)
		}
		out = append(out, q)
	}
	for _, id := range slices.Sorted(maps.Keys(s.run.rejected)) {
		add(id)
	}
	for _, id := range s.run.queue {
		add(id)
	}
	for _, q := range s.st.Pending {
		if !s.run.asked[q.ID] {
			add(q.ID)
		}
	}
	clear(s.run.offered)
	for _, q := range out {
		s.run.offered[q.ID] = true
	}
	return out
}

// emit reports e at the time of the input being decided.
func (s *Engine) emit(e Event) {
	switch e.Kind {
	case EventRoundStarted:
		s.scopeRound = e.Round
	case EventRoundFinished:
		s.scopeRound = 0
	}
	if e.At.IsZero() {
		e.At = s.now
	}
	e.SessionID = s.st.SessionID
	if e.Round == 0 {
		e.Round = s.st.Round
		if s.st.Current != nil {
			e.Round = s.st.Current.N
		}
	}
	if e.Phase == "" && s.st.Current != nil && s.st.Current.N == e.Round {
		e.Phase = s.st.Current.Phase
	}
	e.Usage = s.st.Usage.Total
	s.events = append(s.events, e)
}
