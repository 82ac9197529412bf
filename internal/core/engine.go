package core

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/core/statedoc"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// Engine is the session's decisions: the state in memory and what they
// read and record. Its methods play the session from the state, reading
// the Store through the Ready's writes (out) and writing only to them;
// they make no role call and ask no question: they stop for them
// (errNeedCalls, a pending question) and the drivers bring the results
// in (ext). TestDecisionsDoNoIO holds them to that.
type Engine struct {
	cfg Params
	tok exemplar.Tokenizer
	log *slog.Logger
	// now is the time of the input being decided: the decisions read no
	// clock.
	now time.Time
	// caps are the session Store's capabilities (appends, copies): the
	// writes the Ready holds are ones that Store takes.
	caps StoreCaps
	// run is the run in progress; events are the events of the input
	// being decided; unpersisted counts the commits of the last Ready
	// until Advance.
	run       runState
	passYield bool
	// scopeRound is the round whose scope the driver was told is open in
	// this run (EventRoundStarted, EventRoundResumed).
	scopeRound  int
	events      []Event
	unpersisted int

	st *state.State
	// out holds the writes of the Ready being decided (decide): the
	// decisions read the session through it and never write the Store.
	out *ReadyWrites
	// ext holds the role calls and answers the drivers bring in.
	ext *ExternalCalls
	// stale is set when a commit failed: the in-memory state may be ahead
	// of the Store, so the next call reloads it.
	stale bool
	// staged holds staged writes (and dirty staged state changes) that the
	// next durable point commits: before a role call, before a question,
	// and before Run or Step returns.
	staged []store.Op
	dirty  bool
	// lastRendered holds the renderings last committed, so an unchanged
	// one is not written again.
	lastRendered map[string]string
	// canon caches the Tier 1 examples extracted from the spec.
	canonOnce sync.Once
	canon     exemplar.Canonical
	canonErr  error
	// journal is the session's position in its journal (persist.go).
	journal statedoc.StateJournal
	// chosenExamples holds the example selected for each pending retry, so
	// the prompt attaches the one the example log names.
	chosenExamples map[string]exemplar.Selection
	// checks turns the self-checks on (Options.SelfCheck).
	checks bool
	// status is what building a Status reuses.
	status statusCache
	// renderNext makes the next commit render status.md and decisions.md
	// even inside a round (the run stops there: a failure, a pause).
	renderNext bool
}

// source returns the spec being refined ("" if the session has none).
func (s *Engine) source() (string, error) {
	b, err := s.out.Get(state.KeySpec)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", state.KeySpec, err)
	}
	return string(b), nil
}

// stage queues ops, with the state as it will then be, for the next
// durable point. Work between two durable points is CPU only, so a crash
// there can repeat at most the one role call whose response was in memory.
func (s *Engine) stage(ops ...store.Op) {
	s.staged = append(s.staged, ops...)
	s.dirty = true
}

// get reads key as the session sees it: the latest staged write, else
// the Store.
func (s *Engine) get(key string) ([]byte, error) {
	return statedoc.StoreView{Store: s.out, Pending: s.staged}.Get(key)
}

// copyOp writes value at key as a copy of from, which holds the same
// value once the ops before it apply, when the Store copies (see Copier);
// otherwise as a put.
func (s *Engine) copyOp(key, from string, value []byte) store.Op {
	if s.out.copyOK {
		return store.Copy(key, from)
	}
	return store.Put(key, value)
}

// acceptOp writes an accepted answer, journaled at respKey as content, to
// key as its validation read it: the normalized text when the reading
// changed it (a wrapper fence, shifted headings: the prompts that quote
// the answer and the checks after validation read the canonical form),
// else a copy of the journal.
func (s *Engine) acceptOp(key, respKey, content string, res validate.Result) store.Op {
	if res.Text != "" && res.Text != content {
		return store.Put(key, []byte(res.Text))
	}
	return s.copyOp(key, respKey, []byte(content))
}

// flush makes everything staged durable; nothing staged, nothing written.
// A play stopped at questions its driver answers at once (ext.atOnce),
// and at no role call, leaves what it staged to the Ready that records
// the answers, or to the driver's flush if they are not given (drive): a
// commit here would record the state twice. A call's prompt is always
// made durable before the call.
func (s *Engine) flush() error {
	if !s.dirty && len(s.staged) == 0 {
		return nil
	}
	if s.ext.AtOnce && len(s.ext.Asked) > 0 && len(s.ext.Needed) == 0 {
		return nil
	}
	return s.checkpoint()
}

// checkpoint writes, in one atomic Store commit, the staged ops, ops, the
// journal record of what changed in the state (or, now and then, a whole
// snapshot; see persist.go) and the renderings when they are due.
func (s *Engine) checkpoint(ops ...store.Op) error {
	if s.out == nil {
		return errors.New("refine: internal error: a commit outside decide; please report it")
	}
	s.st.UpdatedAt = s.now
	all := make([]store.Op, 0, len(s.staged)+len(ops)+4)
	all = append(all, s.staged...)
	all = append(all, ops...)
	jops, err := s.journal.CommitOps(statedoc.StoreView{Store: s.out, Pending: s.staged}, s.st, all)
	if err != nil {
		s.stale = true
		return fmt.Errorf("commit: %w", err)
	}
	all = append(all, jops...)
	var rendered map[string]string
	if s.renderDue() {
		rendered = map[string]string{state.KeyStatus: render.Status(s.st, s.cfg.setup()), state.KeyDecisions: render.Decisions(s.st)}
		for _, k := range []string{state.KeyStatus, state.KeyDecisions} {
			if old, ok := s.lastRendered[k]; !ok || old != rendered[k] {
				all = append(all, store.Put(k, []byte(rendered[k])))
			}
		}
	}
	all = append(all, render.SummaryOp(s.st))
	if err := s.out.Keep(all...); err != nil {
		s.lastRendered = nil // unknown what the Store holds now
		s.stale = true
		s.staged, s.dirty = nil, false // the reload discards them with the state
		return fmt.Errorf("commit: %w", err)
	}
	s.staged, s.dirty = nil, false
	if rendered != nil {
		s.lastRendered = rendered
	}
	return nil
}

// renderingOps stages status.md and decisions.md as rendered, each only
// if it changed since last committed. The next commit makes them durable;
// a failed one forgets what was rendered.
func (s *Engine) renderingOps(status, decisions string) []store.Op {
	var ops []store.Op
	if s.lastRendered == nil {
		s.lastRendered = map[string]string{}
	} else {
		s.lastRendered = maps.Clone(s.lastRendered)
	}
	for k, v := range map[string]string{state.KeyStatus: status, state.KeyDecisions: decisions} {
		if old, ok := s.lastRendered[k]; !ok || old != v {
			ops = append(ops, store.Put(k, []byte(v)))
			s.lastRendered[k] = v
		}
	}
	slices.SortFunc(ops, func(a, b store.Op) int { return strings.Compare(a.Key, b.Key) })
	return ops
}

// renderDue reports whether this commit rewrites status.md and
// decisions.md: between rounds (a round's end, a rollback, the session's
// end, also in the middle of a round), while a question waits, and at the
// first commit of a process.
// Durable points inside a round only journal.
func (s *Engine) renderDue() bool {
	if s.renderNext {
		s.renderNext = false
		return true
	}
	return s.lastRendered == nil || s.st.Current == nil || len(s.st.Pending) > 0 || s.st.Current.Phase == state.PhaseBegin ||
		s.st.Outcome.Terminal() // a session ended mid-round (abandoned, approved) shows its end
}

// at is the time of the input being decided, in UTC: the decisions read
// no clock.
func (s *Engine) at() time.Time { return s.now }

// runRounds plays rounds until the session ends, pauses for an answer or
// stops for role calls (ErrNeedCalls): what Run drives.
func (s *Engine) runRounds() (Outcome, error) {
	for {
		if s.st.Outcome.Terminal() && s.st.RollbackFlow == nil {
			return s.finishSession()
		}
		rep, err := s.playRound()
		if errors.Is(err, errYield) {
			return Outcome{Status: StatusRunning, Round: s.st.Round}, err
		}
		if errors.Is(err, ErrNeedCalls) {
			// The driver makes the calls; their prompts become durable with the Ready.
			if err := s.flush(); err != nil {
				return s.failed(err)
			}
			return Outcome{Status: StatusRunning, Round: s.st.Round}, err
		}
		if err != nil {
			return s.failed(err)
		}
		if rep.Outcome.Terminal() {
			continue // the archive cleanup above, then return
		}
		if rep.Outcome != StatusRunning {
			if err := s.flush(); err != nil {
				return s.failed(err)
			}
			return outcomeOf(s.st), nil
		}
	}
}

// finishSession plays what follows a terminal outcome: the integration
// step (integrate.go), then the archive cleanup; both may stop at a
// question, which shows as Pending in the outcome.
func (s *Engine) finishSession() (Outcome, error) {
	paused, err := s.integrate()
	if errors.Is(err, ErrNeedCalls) {
		if err := s.flush(); err != nil {
			return s.failed(err)
		}
		return Outcome{Status: StatusRunning, Round: s.st.Round}, err
	}
	if err == nil && !paused {
		_, err = s.sessionEnd()
	}
	if err == nil {
		err = s.flush()
	}
	if err != nil {
		return s.failed(err)
	}
	return outcomeOf(s.st), nil
}

// stepRound plays what is left of the round in progress: its end-of-round
// check when only that is (a crash or a question came between the two),
// else the round.
func (s *Engine) stepRound() (RoundReport, error) {
	if !s.st.EndOfRoundDue() {
		return s.playRound()
	}
	_, err := s.checkTermination()
	if err == nil && !s.st.UnansweredPending() && !s.st.Outcome.Terminal() {
		s.st.EndChecked = s.st.Round
		s.stage()
	}
	return roundReport(s.st, outcomeOf(s.st)), err
}

// failed records a fatal error (the session stays resumable) and builds the
// Outcome. Context cancellation is a pause, not a failure.
func (s *Engine) failed(err error) (Outcome, error) {
	var stopped *interruption
	if errors.As(err, &stopped) {
		// The driver's context ended during a call: a pause, not a failure.
		return Outcome{Status: StatusPaused, Round: s.st.Round, Reason: "interrupted: " + stopped.cause.Error() + "; run again to resume", Pending: slices.Clone(s.st.Pending)}, err
	}
	s.log.Error("session failed", "round", s.st.Round, "err", err)
	if !s.stale && !s.st.Outcome.Terminal() {
		// The state says so (status, status.md, the console), until the
		// next run takes the session up again (resumeFailed).
		s.renderNext = true
		s.st.Outcome, s.st.OutcomeReason = StatusFailed, render.OneLine(err.Error())
		if s.st.Current != nil {
			s.st.Logged = append(s.st.Logged, state.LoggedEvent{Kind: state.LoggedExecutionError, Round: s.st.Current.N, At: s.at(), Err: render.OneLine(err.Error())})
		}
		// Best effort: the record is useful, but the failure is what we return.
		_ = s.checkpoint()
	}
	return Outcome{Status: StatusFailed, Round: s.st.Round, Reason: err.Error()}, err
}

// resumeFailed takes a session that failed up again: FAILED is where it
// stood, not where it ends (the next durable point records RUNNING).
func (s *Engine) resumeFailed() {
	if s.st.Outcome == StatusFailed {
		s.st.Outcome, s.st.OutcomeReason = "", ""
		s.renderNext = true
	}
}

// outcome is where the session in st stands: its outcome, or Paused with
// the questions waiting, or Running.
func outcomeOf(st *state.State) Outcome {
	o := Outcome{Status: st.Outcome, Round: st.Round, Reason: st.OutcomeReason}
	if len(st.Pending) > 0 {
		o.Pending = slices.Clone(st.Pending)
		if !st.OnlyCleanupPending() { // a finished session's cleanup question waits
			o.Status = StatusPaused
		}
	}
	if o.Status == "" {
		o.Status = StatusRunning
	}
	return o
}

// acceptAnswer is where every answer enters, whoever gives it: a person
// at the Asker, or Answer (another process, the console, a Temporal
// Update). A refused answer changes nothing; an accepted one waits in
// state until the question's own step takes it (takeAnswer).
func acceptAnswer(st *state.State, q question.Question, a question.Answer) error {
	if err := q.Check(a); err != nil {
		return err
	}
	if err := checkDiscoveryAnswer(st, q, a); err != nil {
		return err
	}
	if st.Answers == nil {
		st.Answers = map[string]question.Answer{}
	}
	st.Answers[q.ID] = a
	return nil
}

// takeAnswer hands q's accepted answer to its step, once, and logs it as
// given at at; the caller reports it (EventQuestionAnswered).
func takeStateAnswer(st *state.State, q question.Question, auto bool, at time.Time) (question.Answer, bool) {
	a, ok := st.Answers[q.ID]
	if !ok {
		return question.Answer{}, false
	}
	delete(st.Answers, q.ID)
	if len(st.Answers) == 0 {
		st.Answers = nil
	}
	st.Pending = slices.DeleteFunc(st.Pending, func(p question.Question) bool { return p.ID == q.ID })
	logged := a
	if o, ok := q.Option(a.Key); ok {
		logged.Key = o.Key
	}
	// The log keeps what was asked and answered; the full wording is in
	// decisions.md and the question's package, so it is not stored again.
	asked := question.Question{ID: q.ID, Kind: q.Kind, Round: q.Round, Title: q.Title}
	st.Asked = append(st.Asked, state.AnsweredQuestion{Question: asked, Answer: logged, At: at, Auto: auto})
	return a, true
}

// takeAnswer takes q's accepted answer (state.takeAnswer) and reports it.
func (s *Engine) takeAnswer(q question.Question, auto bool) (question.Answer, bool) {
	if _, ok := s.st.Answers[q.ID]; !ok {
		return question.Answer{}, false // no clock reading: nothing is logged
	}
	a, ok := takeStateAnswer(s.st, q, auto, s.at())
	if ok {
		logged := a
		if o, found := q.Option(a.Key); found {
			logged.Key = o.Key
		}
		s.emit(Event{Kind: EventQuestionAnswered, Question: &q, Answer: &logged})
	}
	return a, ok
}

// ask gets an answer to q: one accepted already (given to the driver's
// Asker or through Answer), else q becomes pending, durable with the
// commit that records it (or, answered at once, with the Ready that
// records the answer), and paused is true: the driver asks it, and the
// step that asked takes the answer when the session plays on.
func (s *Engine) ask(q question.Question) (a question.Answer, paused bool, err error) {
	if ans, ok := s.takeAnswer(q, s.ext.Auto[q.ID]); ok {
		delete(s.ext.Auto, q.ID)
		return ans, false, nil
	}
	s.emit(Event{Kind: EventQuestionAsked, Question: &q})
	if !slices.ContainsFunc(s.st.Pending, func(p question.Question) bool { return p.ID == q.ID }) {
		s.st.Pending = append(s.st.Pending, q)
	}
	s.ext.Asked = append(s.ext.Asked, q)
	if s.ext.AtOnce {
		// Answered before the Ready is committed; if it is not, the driver
		// makes it durable then (drive).
		s.dirty = true
		return question.Answer{}, true, nil
	}
	if err := s.checkpoint(); err != nil {
		return question.Answer{}, false, err
	}
	return question.Answer{}, true, nil
}

// recordDecision adds a user decision, made at at, to decisions.md.
func recordDecision(st *state.State, at time.Time, round int, issue string, q question.Question, a question.Answer, decision string) state.DecisionRecord {
	d := state.DecisionRecord{
		ID: NextDecisionID(st, round), Round: round, Issue: issue,
		Question: q.Title, Option: a.Key, Decision: decision, Text: a.Text, At: at,
	}
	st.Decisions = append(st.Decisions, d)
	return d
}

// recordProcedural adds a decision about the session's procedure (a
// rollback, the end, the archives), made at at, to decisions.md.
func recordProcedural(st *state.State, at time.Time, round int, issue string, q question.Question, a question.Answer, decision string) {
	recordDecision(st, at, round, issue, q, a, decision)
	st.Decisions[len(st.Decisions)-1].Procedural = true
}

// CompareDecisionIDs orders decision IDs by round, then number.
func CompareDecisionIDs(a, b string) int {
	da, errA := gap.ParseDecisionID(a)
	db, errB := gap.ParseDecisionID(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	if da.Round != db.Round {
		return da.Round - db.Round
	}
	return da.Number - db.Number
}

// stepOnce plays the rest of the round in progress, or the next round, and
// what follows the session's end.
func (s *Engine) stepOnce() (RoundReport, error) {
	if s.st.Outcome.Terminal() && s.st.RollbackFlow == nil {
		o, err := s.finishSession()
		rep := roundReport(s.st, outcomeOf(s.st))
		rep.Outcome, rep.Pending = o.Status, o.Pending
		return rep, err
	}
	rep, err := s.stepRound()
	if errors.Is(err, errYield) {
		return rep, err
	}
	if errors.Is(err, ErrNeedCalls) {
		// The calls' prompts become durable with the Ready.
		if ferr := s.flush(); ferr != nil {
			err = ferr
		} else {
			return rep, err
		}
	}
	if err == nil && s.st.Outcome.Terminal() && s.st.RollbackFlow == nil {
		o, ferr := s.finishSession()
		rep.Outcome, rep.Pending = o.Status, o.Pending
		return rep, ferr
	}
	if err == nil {
		err = s.flush()
	}
	if err != nil {
		out, err := s.failed(err)
		rep.Outcome = out.Status
		return rep, err
	}
	return rep, nil
}
