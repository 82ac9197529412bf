package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/rollback"
)

// Errors the driver returns; the handlers map them to status codes.
var (
	// errRunning: the session is running in this console; answer or roll
	// back once it pauses.
	errRunning = errors.New("the session is running: wait until it pauses")
	// errReadOnly: the console was started without a way to run sessions.
	errReadOnly = errors.New("this console only shows sessions: start it with roles (refine serve --llm …) to answer or resume")
	// errRollbackWaiting: an earlier rollback waits for its question.
	errRollbackWaiting = errors.New("a rollback already waits for an answer to its question")
	// errClosing: the console is shutting down.
	errClosing = errors.New("the console is shutting down")
)

// runner is the console's handle on one session: it serialises answers,
// rollbacks and resumes, and tracks the background run.
type runner struct {
	mu sync.Mutex // held while an answer, rollback or resume is being taken

	// state guards the fields below, which pages read while mu is held.
	state    sync.Mutex
	running  bool
	activity string
	events   int64
	lastErr  string
}

type runnerView struct {
	Running  bool
	Activity string
	Events   int64
	LastErr  string
}

func (r *runner) view() runnerView {
	r.state.Lock()
	defer r.state.Unlock()
	return runnerView{Running: r.running, Activity: r.activity, Events: r.events, LastErr: r.lastErr}
}

// Observe records a running session's progress for the page.
func (r *runner) Observe(e refine.Event) {
	if e.Kind == refine.EventCommitted {
		return // frequent and says nothing a reader needs
	}
	var b strings.Builder
	if e.Round > 0 {
		fmt.Fprintf(&b, "round %d", e.Round)
	}
	if e.Role != "" {
		fmt.Fprintf(&b, " %s", e.Role)
	}
	if e.Attempt > 0 {
		fmt.Fprintf(&b, " attempt %d", e.Attempt)
	}
	fmt.Fprintf(&b, ": %s", strings.ReplaceAll(string(e.Kind), "_", " "))
	r.state.Lock()
	r.activity = strings.TrimSpace(b.String())
	r.events++
	r.state.Unlock()
}

// runner returns id's runner, creating it. Runners are never removed, so
// every request for one session serialises on the same one (the map holds
// one small entry per session ID that was acted on).
func (s *Server) runner(id string) *runner {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runners[id]
	if !ok {
		r = &runner{}
		s.runners[id] = r
	}
	return r
}

// peek returns the runner of id without creating one.
func (s *Server) peek(id string) (runnerView, bool) {
	s.mu.Lock()
	r, ok := s.runners[id]
	s.mu.Unlock()
	if !ok {
		return runnerView{}, false
	}
	return r.view(), true
}

// open opens session id for writing with the host's Config and the
// console's Asker and Observer. The caller closes the Store.
func (s *Server) open(ctx context.Context, id string, r *runner) (*refine.Session, refine.Store, error) {
	if s.cfg.Configure == nil {
		return nil, nil, errReadOnly
	}
	st, err := s.cfg.Backend.Session(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := s.cfg.Configure(ctx, id, st)
	if err != nil {
		closeStore(st)
		return nil, nil, fmt.Errorf("configure session %s: %w", id, err)
	}
	cfg.Store = st
	cfg.Asker = refine.DeferAsker{}
	if cfg.Observer != nil {
		host := cfg.Observer
		cfg.Observer = refine.ObserverFunc(func(e refine.Event) { host.Observe(e); r.Observe(e) })
	} else {
		cfg.Observer = r
	}
	sess, err := refine.Open(ctx, cfg)
	if err != nil {
		closeStore(st)
		return nil, nil, err
	}
	return sess, st, nil
}

func closeStore(st refine.Store) {
	if c, ok := st.(io.Closer); ok {
		_ = c.Close()
	}
}

// act opens session id, applies fn to it and, when fn asks for it, runs the
// session in the background until it pauses or ends. Everything happens
// under the session's runner lock, so of two calls racing for one question
// the second sees the first's effect.
func (s *Server) act(ctx context.Context, id string, fn func(ctx context.Context, sess *refine.Session) (run bool, err error)) error {
	r := s.runner(id)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.view().Running {
		return errRunning
	}
	sess, st, err := s.open(ctx, id, r)
	if err != nil {
		return err
	}
	if fn != nil {
		run, err := fn(ctx, sess)
		if err != nil || !run {
			closeStore(st)
			return err
		}
	}
	// Add to the wait group under s.mu, so Close either sees this run or
	// refuses it; a refused run leaves what fn recorded for the next resume.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		closeStore(st)
		return errClosing
	}
	s.wg.Add(1)
	s.mu.Unlock()
	r.state.Lock()
	r.running, r.lastErr, r.activity = true, "", "resuming"
	r.events++
	r.state.Unlock()
	go func() {
		defer s.wg.Done()
		out, err := sess.Run(s.ctx)
		closeStore(st)
		r.state.Lock()
		r.running = false
		r.events++
		switch {
		case err != nil:
			r.lastErr = publicMessage(errStatus(err), id, err)
			r.activity = "stopped: " + r.lastErr
		case out.Status == refine.StatusPaused && len(out.Pending) > 0:
			r.activity = "waiting for an answer to " + out.Pending[0].ID
		default:
			r.activity = string(out.Status)
		}
		r.state.Unlock()
		if err != nil {
			s.log.Error("session run stopped", "session", id, "err", err)
		} else {
			s.log.Info("session run returned", "session", id, "outcome", out.Status)
		}
	}()
	return nil
}

// answerError is a refused answer, with the keys the question offers.
type answerError struct {
	err     error
	offered []string
}

func (e *answerError) Error() string { return e.err.Error() }
func (e *answerError) Unwrap() error { return e.err }

// answer records a for question qid of session id and resumes it.
func (s *Server) answer(ctx context.Context, id, qid string, a refine.Answer) error {
	return s.act(ctx, id, func(ctx context.Context, sess *refine.Session) (bool, error) {
		st, err := sess.Status(ctx)
		if err != nil {
			return false, err
		}
		i := slices.IndexFunc(st.Pending, func(q refine.Question) bool { return q.ID == qid })
		if i < 0 {
			return false, fmt.Errorf("question %q is not pending (already answered, or never asked): %w", qid, refine.ErrUnknownQuestion)
		}
		q := st.Pending[i]
		if n := len(q.Options); n > 0 && !slices.ContainsFunc(q.Options, func(o refine.Option) bool { return o.Key == a.Key }) {
			// A numbered pick of lettered options, as the terminal accepts.
			if k := optionByNumber(q, a.Key); k != "" {
				a.Key = k
			}
		}
		if err := sess.Answer(ctx, qid, a); err != nil {
			if errors.Is(err, refine.ErrInvalidAnswer) {
				keys := make([]string, len(q.Options))
				for i, o := range q.Options {
					keys[i] = o.Key
				}
				return false, &answerError{err: err, offered: keys}
			}
			return false, err
		}
		return true, nil
	})
}

// optionByNumber maps "2" to the second option's key when no option is
// keyed "2".
func optionByNumber(q refine.Question, key string) string {
	n := 0
	for _, c := range key {
		if c < '0' || c > '9' || n > len(q.Options) {
			return ""
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > len(q.Options) {
		return ""
	}
	return q.Options[n-1].Key
}

// rollbackTo asks session id to roll back to round to. The engine may
// first ask a question (the rollback options, the limit): then nothing is
// undone yet, the report's Pending holds the question, and answering it
// finishes the rollback. Otherwise the session resumes in the background.
func (s *Server) rollbackTo(ctx context.Context, id string, to int, reason string) (refine.RollbackReport, error) {
	var rep refine.RollbackReport
	err := s.act(ctx, id, func(ctx context.Context, sess *refine.Session) (bool, error) {
		var err error
		rep, err = sess.Rollback(ctx, refine.RollbackRequest{To: to, Reason: reason, Trigger: rollback.TriggerUser})
		if errors.Is(err, refine.ErrDeferred) {
			return false, fmt.Errorf("%w: %w", errRollbackWaiting, err)
		}
		return err == nil && len(rep.Pending) == 0, err
	})
	return rep, err
}

// resume runs session id in the background without changing it.
func (s *Server) resume(ctx context.Context, id string) error {
	return s.act(ctx, id, nil)
}
