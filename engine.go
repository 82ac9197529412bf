package refine

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
)

// engine is the session's decisions: the state in memory and what they
// read and record. Its methods play the session from the state, reading
// the Store through the Ready's writes (out) and writing only to them;
// they make no role call and ask no question: they stop for them
// (errNeedCalls, a pending question) and the drivers bring the results
// in (ext). TestDecisionsDoNoIO holds them to that.
type engine struct {
	cfg   Params
	clock nower
	tok   Tokenizer
	log   *slog.Logger

	st  *state
	rnd *rand.Rand
	// out holds the writes of the Ready being decided (decide): the
	// decisions read the session through it and never write the Store.
	out *readyWrites
	// ext holds the role calls and answers the drivers bring in.
	ext *externalCalls
	// stale is set when a commit failed: the in-memory state may be ahead
	// of the Store, so the next call reloads it.
	stale bool
	// pending holds staged writes (and dirty staged state changes) that the
	// next durable point commits: before a role call, before a question,
	// and before Run or Step returns.
	pending []Op
	dirty   bool
	// lastRendered holds the renderings last committed, so an unchanged
	// one is not written again.
	lastRendered map[string]string
	// canon caches the Tier 1 examples extracted from the spec.
	canonOnce sync.Once
	canon     exemplar.Canonical
	canonErr  error
	// tel reports events and keeps the SpanObserver scopes.
	tel Telemetry
	// j is the session's position in its journal (persist.go).
	j stateJournal
	// chosenExamples holds the example selected for each pending retry, so
	// the prompt attaches the one the example log names.
	chosenExamples map[string]exemplar.Selection
	// renderNext makes the next commit render status.md and decisions.md
	// even inside a round (the run stops there: a failure, a pause).
	renderNext bool
}

// source returns the spec being refined ("" if the session has none).
func (s *engine) source() (string, error) {
	b, err := s.out.Get(keySpec)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", keySpec, err)
	}
	return string(b), nil
}

// stage queues ops, with the state as it will then be, for the next
// durable point. Work between two durable points is CPU only, so a crash
// there can repeat at most the one role call whose response was in memory.
func (s *engine) stage(ops ...Op) {
	s.pending = append(s.pending, ops...)
	s.dirty = true
}

// get reads key as the session sees it: the latest staged write, else
// the Store.
func (s *engine) get(key string) ([]byte, error) {
	return storeView{store: s.out, pending: s.pending}.get(key)
}

// copyOp writes value at key as a copy of from, which holds the same
// value once the ops before it apply, when the Store copies (see Copier);
// otherwise as a put.
func (s *engine) copyOp(key, from string, value []byte) Op {
	if s.out.copyOK {
		return Copy(key, from)
	}
	return Put(key, value)
}

// flush makes everything staged durable; nothing staged, nothing written.
// A play stopped at questions its driver answers at once (ext.atOnce),
// and at no role call, leaves what it staged to the Ready that records
// the answers, or to the driver's flush if they are not given (drive): a
// commit here would record the state twice. A call's prompt is always
// made durable before the call.
func (s *engine) flush() error {
	if !s.dirty && len(s.pending) == 0 {
		return nil
	}
	if s.ext.atOnce && len(s.ext.asked) > 0 && len(s.ext.needed) == 0 {
		return nil
	}
	return s.commit()
}

// commit writes, in one atomic Store commit, the staged ops, ops, the
// journal record of what changed in the state (or, now and then, a whole
// snapshot; see persist.go) and the renderings when they are due.
func (s *engine) commit(ops ...Op) error {
	if s.out == nil {
		return errors.New("refine: internal error: a commit outside decide; please report it")
	}
	s.st.UpdatedAt = s.clock.Now().UTC()
	all := make([]Op, 0, len(s.pending)+len(ops)+4)
	all = append(all, s.pending...)
	all = append(all, ops...)
	jops, err := s.j.commitOps(storeView{store: s.out, pending: s.pending}, s.st, all)
	if err != nil {
		s.stale = true
		return fmt.Errorf("commit: %w", err)
	}
	all = append(all, jops...)
	var rendered map[string]string
	if s.renderDue() {
		rendered = map[string]string{keyStatus: renderStatus(s.st, s.cfg.rollbackLimit(), s.cfg.Backend), keyDecisions: renderDecisions(s.st)}
		for _, k := range []string{keyStatus, keyDecisions} {
			if old, ok := s.lastRendered[k]; !ok || old != rendered[k] {
				all = append(all, Put(k, []byte(rendered[k])))
			}
		}
	}
	all = append(all, summaryOp(s.st))
	if err := s.out.keep(all...); err != nil {
		s.lastRendered = nil // unknown what the Store holds now
		s.stale = true
		s.pending, s.dirty = nil, false // the reload discards them with the state
		return fmt.Errorf("commit: %w", err)
	}
	s.pending, s.dirty = nil, false
	if rendered != nil {
		s.lastRendered = rendered
	}
	return nil
}

// renderingOps stages status.md and decisions.md as rendered, each only
// if it changed since last committed. The next commit makes them durable;
// a failed one forgets what was rendered.
func (s *engine) renderingOps(status, decisions string) []Op {
	var ops []Op
	if s.lastRendered == nil {
		s.lastRendered = map[string]string{}
	} else {
		s.lastRendered = maps.Clone(s.lastRendered)
	}
	for k, v := range map[string]string{keyStatus: status, keyDecisions: decisions} {
		if old, ok := s.lastRendered[k]; !ok || old != v {
			ops = append(ops, Put(k, []byte(v)))
			s.lastRendered[k] = v
		}
	}
	slices.SortFunc(ops, func(a, b Op) int { return strings.Compare(a.Key, b.Key) })
	return ops
}

// renderDue reports whether this commit rewrites status.md and
// decisions.md: between rounds (a round's end, a rollback, the session's
// end, also in the middle of a round), while a question waits, and at the
// first commit of a process.
// Durable points inside a round only journal.
func (s *engine) renderDue() bool {
	if s.renderNext {
		s.renderNext = false
		return true
	}
	return s.lastRendered == nil || s.st.Current == nil || len(s.st.Pending) > 0 || s.st.Current.Phase == PhaseBegin ||
		s.st.Outcome.Terminal() // a session ended mid-round (abandoned, approved) shows its end
}

func (s *engine) now() time.Time { return s.clock.Now().UTC() }

func (s *engine) run() (Outcome, error) {
	for {
		if s.st.Outcome.Terminal() && s.st.RollbackFlow == nil {
			return s.finishSession()
		}
		rep, err := s.playRound()
		if errors.Is(err, errNeedCalls) {
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
			return s.st.outcome(), nil
		}
	}
}

// finishSession plays what follows a terminal outcome: the integration
// step (integrate.go), then the archive cleanup; both may stop at a
// question, which shows as Pending in the outcome.
func (s *engine) finishSession() (Outcome, error) {
	paused, err := s.integrate()
	if errors.Is(err, errNeedCalls) {
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
	return s.st.outcome(), nil
}

// finishPending reports whether a finished session still has its
// integration step or its archive cleanup to play.
func (st *state) finishPending() bool {
	in := st.Integration
	return (in != nil && in.Step != integDone) || !st.CleanupDone
}

// stepRound plays what is left of the round in progress: its end-of-round
// check when only that is (a crash or a question came between the two),
// else the round.
func (s *engine) stepRound() (RoundReport, error) {
	if !s.st.endOfRoundDue() {
		return s.playRound()
	}
	_, err := s.checkTermination()
	if err == nil && !s.st.unansweredPending() && !s.st.Outcome.Terminal() {
		s.st.EndChecked = s.st.Round
		s.stage()
	}
	return s.st.report(s.st.outcome()), err
}

// failed records a fatal error (the session stays resumable) and builds the
// Outcome. Context cancellation is a pause, not a failure.
func (s *engine) failed(err error) (Outcome, error) {
	if cause := s.out.interrupted(); cause != nil && errors.Is(err, cause) {
		return Outcome{Status: StatusPaused, Round: s.st.Round, Reason: "interrupted: " + cause.Error() + "; run again to resume", Pending: slices.Clone(s.st.Pending)}, err
	}
	s.log.Error("session failed", "round", s.st.Round, "err", err)
	if !s.stale && !s.st.Outcome.Terminal() {
		// The state says so (status, status.md, the console), until the
		// next run takes the session up again (resumeFailed).
		s.renderNext = true
		s.st.Outcome, s.st.OutcomeReason = StatusFailed, oneLine(err.Error())
		if s.st.Current != nil {
			s.st.Logged = append(s.st.Logged, loggedEvent{Kind: loggedExecutionError, Round: s.st.Current.N, At: s.now(), Err: oneLine(err.Error())})
		}
		// Best effort: the record is useful, but the failure is what we return.
		_ = s.commit()
	}
	return Outcome{Status: StatusFailed, Round: s.st.Round, Reason: err.Error()}, err
}

// resumeFailed takes a session that failed up again: FAILED is where it
// stood, not where it ends (the next durable point records RUNNING).
func (s *engine) resumeFailed() {
	if s.st.Outcome == StatusFailed {
		s.st.Outcome, s.st.OutcomeReason = "", ""
		s.renderNext = true
	}
}

// outcome is where the session in st stands: its outcome, or Paused with
// the questions waiting, or Running.
func (st *state) outcome() Outcome {
	o := Outcome{Status: st.Outcome, Round: st.Round, Reason: st.OutcomeReason}
	if len(st.Pending) > 0 {
		o.Pending = slices.Clone(st.Pending)
		if !onlyCleanupPending(st) { // a finished session's cleanup question waits
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
func (st *state) acceptAnswer(q Question, a Answer) error {
	if err := q.Check(a); err != nil {
		return err
	}
	if st.Answers == nil {
		st.Answers = map[string]Answer{}
	}
	st.Answers[q.ID] = a
	return nil
}

// takeAnswer hands q's accepted answer to its step, once, and logs it as
// given at at; the caller reports it (EventQuestionAnswered).
func (st *state) takeAnswer(q Question, auto bool, at time.Time) (Answer, bool) {
	a, ok := st.Answers[q.ID]
	if !ok {
		return Answer{}, false
	}
	delete(st.Answers, q.ID)
	if len(st.Answers) == 0 {
		st.Answers = nil
	}
	st.Pending = slices.DeleteFunc(st.Pending, func(p Question) bool { return p.ID == q.ID })
	logged := a
	if o, ok := q.Option(a.Key); ok {
		logged.Key = o.Key
	}
	// The log keeps what was asked and answered; the full wording is in
	// decisions.md and the question's package, so it is not stored again.
	asked := Question{ID: q.ID, Kind: q.Kind, Round: q.Round, Title: q.Title}
	st.Asked = append(st.Asked, answeredQuestion{Question: asked, Answer: logged, At: at, Auto: auto})
	return a, true
}

// takeAnswer takes q's accepted answer (state.takeAnswer) and reports it.
func (s *engine) takeAnswer(q Question, auto bool) (Answer, bool) {
	if _, ok := s.st.Answers[q.ID]; !ok {
		return Answer{}, false // no clock reading: nothing is logged
	}
	a, ok := s.st.takeAnswer(q, auto, s.now())
	if ok {
		logged := a
		if o, found := q.Option(a.Key); found {
			logged.Key = o.Key
		}
		s.tel.Emit(decisionEvent{Kind: EventQuestionAnswered, Question: &q, Answer: &logged})
	}
	return a, ok
}

// ask gets an answer to q: one accepted already (given to the driver's
// Asker or through Answer), else q becomes pending, durable with the
// commit that records it (or, answered at once, with the Ready that
// records the answer), and paused is true: the driver asks it, and the
// step that asked takes the answer when the session plays on.
func (s *engine) ask(q Question) (a Answer, paused bool, err error) {
	if ans, ok := s.takeAnswer(q, s.ext.auto[q.ID]); ok {
		delete(s.ext.auto, q.ID)
		return ans, false, nil
	}
	s.tel.Emit(decisionEvent{Kind: EventQuestionAsked, Question: &q})
	if !slices.ContainsFunc(s.st.Pending, func(p Question) bool { return p.ID == q.ID }) {
		s.st.Pending = append(s.st.Pending, q)
	}
	s.ext.asked = append(s.ext.asked, q)
	if s.ext.atOnce {
		// Answered before the Ready is committed; if it is not, the driver
		// makes it durable then (drive).
		s.dirty = true
		return Answer{}, true, nil
	}
	if err := s.commit(); err != nil {
		return Answer{}, false, err
	}
	return Answer{}, true, nil
}

// recordDecision adds a user decision, made at at, to decisions.md.
func (st *state) recordDecision(at time.Time, round int, issue string, q Question, a Answer, decision string) decisionRecord {
	d := decisionRecord{
		ID: nextDecisionID(st, round), Round: round, Issue: issue,
		Question: q.Title, Option: a.Key, Decision: decision, Text: a.Text, At: at,
	}
	st.Decisions = append(st.Decisions, d)
	return d
}

// recordProcedural adds a decision about the session's procedure (a
// rollback, the end, the archives), made at at, to decisions.md.
func (st *state) recordProcedural(at time.Time, round int, issue string, q Question, a Answer, decision string) {
	st.recordDecision(at, round, issue, q, a, decision)
	st.Decisions[len(st.Decisions)-1].Procedural = true
}

// compareDecisionIDs orders decision IDs by round, then number.
func compareDecisionIDs(a, b string) int {
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

func oneLine(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '|' {
			r = ' '
		}
		out = append(out, r)
	}
	if len(out) > 300 {
		out = append(out[:297], '.', '.', '.')
	}
	return string(out)
}

// step plays the rest of the round in progress, or the next round, and
// what follows the session's end.
func (s *engine) step() (RoundReport, error) {
	if s.st.Outcome.Terminal() && s.st.RollbackFlow == nil {
		o, err := s.finishSession()
		rep := s.st.report(s.st.outcome())
		rep.Outcome, rep.Pending = o.Status, o.Pending
		return rep, err
	}
	rep, err := s.stepRound()
	if errors.Is(err, errNeedCalls) {
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

// nower is the clock the decisions read: the driver's Clock.
type nower interface{ Now() time.Time }
