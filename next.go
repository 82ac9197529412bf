package refine

import (
	"context"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/store"
)

// Ready is what a session hands its caller from Next, as etcd's raft
// package does: what to persist, then role calls to make, or questions to
// answer, or nothing more (a terminal outcome).
type Ready struct {
	// Persist are the writes of everything Next decided, in order: the
	// journal records, prompts, outputs and renderings. Commit them to
	// the session's Store in one Commit, then call Advance, before making
	// the calls; the session refuses every other input (ErrNotPersisted)
	// until then. Empty when Next decided nothing that needs writing.
	Persist []store.Op
	// Calls are the role calls the session waits for; when there are
	// several (parallel drafting) they may run concurrently. Make each and
	// hand its Response to Deliver, then call Next again.
	Calls []Request
	// Cold are writes to Config.ColdStore: the session-end cleanup moving
	// the rollback archives to cold storage. Commit them to the ColdStore
	// before Persist, which deletes the archives from the session. Empty
	// unless a ColdStore is configured.
	Cold []store.Op
	// Outcome is where the session stands: Running while Calls wait,
	// Paused with its Pending questions (answer each with Next and a
	// Reply), or a terminal outcome.
	Outcome Outcome
	// Rollback is what a RollbackRequest did, when Next was given one.
	Rollback RollbackReport
}

// Input is what a host hands the session through Next: Play (play on), a
// Reply to a question, an ApproveRequest, an AbandonRequest, a
// RollbackRequest or a SettingsChange.
type Input interface{ nextInput() }

// Play plays the session on: the rounds, as Run does, up to the next role
// calls, question or outcome. The responses handed to Deliver since the
// last Next go in first.
type Play struct{}

// Reply answers a pending question.
type Reply struct {
	Question string
	Answer   Answer
}

// AbandonRequest ends the session as ABANDONED, with Reason.
type AbandonRequest struct{ Reason string }

// SettingsChange records new settings with the session.
type SettingsChange struct{ Settings Settings }

func (Play) nextInput()            {}
func (Reply) nextInput()           {}
func (ApproveRequest) nextInput()  {}
func (AbandonRequest) nextInput()  {}
func (RollbackRequest) nextInput() {}
func (SettingsChange) nextInput()  {}

// Next hands in to the session, as Run, Answer, Approve, Abandon,
// Rollback or SetSettings would, except that it does no I/O of its own
// but reads: it writes nothing to the Store, makes no role call and asks
// no question. It returns what in decided: the writes, and the role calls
// or the questions the session now waits for. The caller commits
// Ready.Persist and calls Advance, then makes the calls (a durable-
// execution engine runs each as an activity, with its own timeouts and
// retries), delivers each response with Deliver and calls Next with Play
// again; it answers a question with a Reply. A nil in is Play. A
// delivered response is kept in memory until the next Play takes it, so
// after a crash in between, the call is made again.
//
// If the Commit of Ready.Persist fails, drop the session and Open it
// again: it resumes from what was persisted. Next returns the errors the
// other methods return, with the writes made up to the failure in
// Ready.Persist (persist them too). Transport retries are the caller's: a
// call that fails is not delivered.
func (s *Session) Next(ctx context.Context, in Input) (Ready, error) {
	if err := s.lock(ctx); err != nil {
		return Ready{Outcome: Outcome{Status: StatusPaused, Reason: err.Error()}}, err
	}
	defer s.unlock()
	if s.commits > 0 {
		err := fmt.Errorf("%w: commit the last Ready.Persist to the Store, then call Advance", ErrNotPersisted)
		return Ready{Outcome: Outcome{Status: StatusPaused, Reason: err.Error()}}, err
	}
	if err := s.begin(ctx); err != nil {
		return Ready{Outcome: Outcome{Status: StatusFailed, Reason: err.Error()}}, err
	}
	var cin core.Input
	now := s.now()
	switch in := in.(type) {
	case nil, Play:
		cin = core.Run{At: now}
		if s.calls != nil {
			cin = core.Deliver{At: now, Results: s.delivered}
		} else {
			run := core.Run{At: now}
			run.Link = s.tel.startRun(ctx, s.core.RunLink())
			defer func() { s.tel.endRun(Outcome{Status: StatusRunning}, nil) }()
			cin = run
		}
		s.calls, s.delivered = nil, nil
	case Reply:
		cin = core.Answered{At: now, Question: in.Question, Answer: in.Answer}
	case ApproveRequest:
		cin = core.Approve{At: now, Note: in.Note, AcknowledgeHigh: in.AcknowledgeHigh}
	case AbandonRequest:
		cin = core.Abandon{At: now, Reason: in.Reason}
	case RollbackRequest:
		cin = core.Rollback{At: now, Request: in.core()}
	case SettingsChange:
		cin = core.ChangeSettings{At: now, Settings: in.Settings}
	default:
		return Ready{}, fmt.Errorf("next: unknown input %T", in)
	}
	r, err := s.core.Handle(bind(ctx, s.config.Store), s.coldView(ctx), cin)
	for err == nil && r.More && len(r.Persist) == 0 && len(r.Cold) == 0 {
		// A yield between two phases: nothing to write, go on here.
		if ctx.Err() != nil {
			r, err = s.core.Handle(bind(ctx, s.config.Store), s.coldView(ctx), core.Interrupt{At: s.now(), Cause: ctx.Err()})
			break
		}
		s.tel.report(ctx, r)
		r, err = s.core.Handle(bind(ctx, s.config.Store), s.coldView(ctx), core.Continue{At: s.now()})
	}
	s.tel.report(ctx, r)
	if len(r.Persist) > 0 || len(r.Cold) > 0 {
		s.commits = max(r.Commits, 1)
	}
	if len(r.Calls) > 0 {
		s.calls = slices.Clone(r.Calls)
	}
	if r.Stale {
		s.core = nil
	}
	return Ready{Persist: r.Persist, Calls: r.Calls, Cold: r.Cold, Outcome: r.Outcome, Rollback: r.Rollback}, err
}

// Advance tells the session that the last Ready.Persist is committed to
// its Store: what Next decided is durable now, Status reports it, and the
// session takes inputs again. Without a Ready to persist it does nothing.
func (s *Session) Advance(ctx context.Context) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if s.commits == 0 || s.core == nil {
		return nil
	}
	commits := s.commits
	s.commits = 0
	s.advance(commits)
	return nil
}

// Deliver hands the session the response to a call the last Next asked
// for; the next Play takes it. It fails with ErrUnknownCall for any other
// request.
func (s *Session) Deliver(ctx context.Context, req Request, resp Response) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if s.commits > 0 {
		return fmt.Errorf("deliver %s call %d: %w: commit the last Ready.Persist to the Store, then call Advance", req.Role, req.Call, ErrNotPersisted)
	}
	id := core.CallID{Role: req.Role, Call: req.Call}
	if !slices.ContainsFunc(s.calls, func(r Request) bool { return (core.CallID{Role: r.Role, Call: r.Call}) == id }) {
		return fmt.Errorf("deliver %s call %d: %w: Next did not ask for it", req.Role, req.Call, ErrUnknownCall)
	}
	s.delivered = slices.DeleteFunc(s.delivered, func(c core.CallResult) bool { return c.Call == id })
	s.delivered = append(s.delivered, core.CallResult{Call: id, Result: core.RoleResult{Resp: resp, Calls: 1}})
	return nil
}
