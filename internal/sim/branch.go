package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// branch is one line of play of a seed's session: the main, perturbed
// one, a clean twin, or a probe's fork. It owns where the session lives,
// the open Session, and the log of role calls.
type branch struct {
	sim    *simulation
	name   string
	driver Driver
	place  *place
	store  *crashStore
	sess   *refine.Session
	calls  *callLog
	// mix is the roles' odds on this branch.
	mix Mix
	// decides says the branch's operator makes decisions (forks for
	// probes do not); visits counts the decisions taken at each stop
	// context (see stopRand); per draws the perturbations, which must not
	// change the session (nil: none).
	decides bool
	visits  map[string]int
	// live counts the answers given during runs (the Asker's "answer
	// now"): a run that took one did something.
	live  int
	per   *rand.Rand
	hist  []string
	opens int
	// final and finalStatus are the store and status --json at the end.
	final       map[string]string
	finalStatus string
	// perturbed lists the perturbations the branch went through.
	perturbed []Move
	// cutShort says the play reached MaxStops: it did not end, so it is
	// not compared with a twin (the twin stops elsewhere).
	cutShort bool
	// violations counts the violations recorded per invariant.
	violations map[Invariant]int
	// benignOnly says the branch's quirks are the benign ones alone.
	benignOnly bool
	// quirks are the branch's Quirky roles (Options.Quirks), plain says
	// the branch plays without them (the plain twin), and finalSt is its
	// Status at the end.
	quirks  *quirkRoles
	plain   bool
	finalSt refine.Status
}

// logf adds a line to the branch's history.
func (b *branch) logf(format string, args ...any) {
	b.hist = append(b.hist, fmt.Sprintf(format, args...))
}

// config is the session's Config on store, with fresh roles: what a new
// process builds.
func (b *branch) config(st refine.Store) refine.Config {
	sc := b.sim.sc
	cfg := refine.DefaultConfig()
	cfg.Settings = sc.Settings
	cfg.Store = st
	known := make([]gap.ID, len(sc.Gaps))
	for i, g := range sc.Gaps {
		known[i] = g.ID
	}
	cfg.Engineer = b.quirked(refine.Engineer, &scriptedRole{seed: sc.Seed, name: refine.Engineer, known: known, mix: b.mix, log: b.calls, transient: map[string]bool{}})
	cfg.Reviewer = b.quirked(refine.Reviewer, &scriptedRole{seed: sc.Seed, name: refine.Reviewer, known: known, mix: b.mix, log: b.calls, transient: map[string]bool{}})
	cfg.Asker = operatorAsker{b}
	cfg.Clock = fixedClock{}
	cfg.IDs = fixedIDs{id: fmt.Sprintf("sim-%d", sc.Seed)}
	cfg.JitterSeed = sc.Seed | 1
	cfg.Spec = specText
	cfg.Gaps = sc.Gaps
	return cfg
}

// open opens the session as a new process would: a new Store handle, new
// roles, refine.Open.
func (b *branch) open(ctx context.Context) error {
	st, err := b.place.open(ctx)
	if err != nil {
		return fmt.Errorf("open the %s store: %w", b.place.kind, err)
	}
	b.store = &crashStore{Store: st}
	b.calls.commits = b.store.count
	b.sess, err = refine.Open(ctx, b.config(b.store))
	b.opens++
	return err
}

// create starts the session.
func (b *branch) create(ctx context.Context) error {
	st, err := b.place.open(ctx)
	if err != nil {
		return err
	}
	b.store = &crashStore{Store: st}
	b.calls.commits = b.store.count
	b.sess, err = refine.New(ctx, b.config(b.store))
	return err
}

// stop is where the operator acts: what the driver returned.
type stop struct {
	Outcome refine.Outcome
	Err     error
	// Stepped is a Step's stop in the middle of the session (RUNNING).
	Stepped bool
}

// advance plays the session to its next stop with the branch's driver.
func (b *branch) advance(ctx context.Context) stop {
	switch b.driver {
	case DriverNext:
		return b.next(ctx)
	case DriverStep:
		rep, err := b.sess.Step(ctx)
		if errors.Is(err, refine.ErrFinished) {
			// The session ended while questions wait: Step cannot
			// apply their answers; Run must.
			if st, serr := b.sess.Status(ctx); serr == nil && slices.ContainsFunc(st.Pending, func(q refine.Question) bool { return !askedWhenFinished(q) }) {
				b.sim.violate(b, NeverStuck, "the session is finished (%s) but keeps questions %v that Step refuses to apply (%v)", rep.Outcome, pendingIDs(st.Pending), err)
			}
			break
		}
		o := refine.Outcome{Status: rep.Outcome, Round: rep.Round, Pending: rep.Pending}
		return stop{Outcome: o, Err: err, Stepped: err == nil && rep.Outcome == refine.StatusRunning}
	}
	o, err := b.sess.Run(ctx)
	return stop{Outcome: o, Err: err}
}

// next plays with Next, Advance and Deliver: it commits each Ready's
// writes to the Store, makes the calls with the branch's roles and
// delivers them, until a Ready asks for no call.
func (b *branch) next(ctx context.Context) stop {
	cfg := b.config(nil)
	for range 1000 {
		r, err := b.sess.Next(ctx, refine.Play{})
		if len(r.Persist) > 0 {
			if cerr := b.store.Commit(ctx, r.Persist...); cerr != nil {
				return stop{Outcome: r.Outcome, Err: fmt.Errorf("persist a Ready: %w", cerr)}
			}
			if aerr := b.sess.Advance(ctx); aerr != nil {
				return stop{Outcome: r.Outcome, Err: fmt.Errorf("advance: %w", aerr)}
			}
		}
		if err != nil || len(r.Calls) == 0 {
			return stop{Outcome: r.Outcome, Err: err}
		}
		for _, req := range r.Calls {
			role := cfg.Engineer
			if req.Role == refine.Reviewer {
				role = cfg.Reviewer
			}
			resp, err := role.Respond(ctx, req)
			if err != nil {
				// Transport retries are the caller's: a transient failure is
				// retried at once (the role succeeds the second time); a
				// permanent one is delivered as an empty output, the
				// closest a host can come to EXECUTION_ERROR.
				var te interface{ Transient() bool }
				if errors.As(err, &te) && te.Transient() {
					resp, err = role.Respond(ctx, req)
				}
				if err != nil {
					resp = refine.Response{}
				}
			}
			if err := b.sess.Deliver(ctx, req, resp); err != nil {
				return stop{Outcome: r.Outcome, Err: fmt.Errorf("deliver: %w", err)}
			}
		}
	}
	return stop{Err: errors.New("sim: no stop after 1000 Next calls")}
}

// allCleanup reports whether every pending question is the archive
// cleanup question of a finished session.
func allCleanup(qs []refine.Question) bool {
	for _, q := range qs {
		if q.Kind != refine.KindRollback || q.Title != "ARCHIVE CLEANUP" {
			return false
		}
	}
	return len(qs) > 0
}

// doc is status --json of the branch's session as of its last durable
// point, times aside.
func (b *branch) doc(ctx context.Context) (string, error) {
	st, err := b.sess.Status(ctx)
	if err != nil {
		return "", err
	}
	return statusDocOf(st), nil
}

// stopRand returns the draws of the decision at a stop whose session is
// status: a function of the pending questions, what the session has done
// so far and how many decisions were already taken there. A crashed and
// reopened session, its twin, and the same session played by Run (whose
// Asker answers inside the run) or by Next (which stops at every
// question) meet the same contexts and so decide the same.
func (b *branch) stopRand(status refine.Status) (*rand.Rand, string) {
	// Not the phase nor the convergence rows: while a question is asked
	// inside a Run, Status can still show the phase before it and miss
	// the round's row (they are committed with the next durable point).
	// Not the calls either: a transport retry counts as a call under Run
	// and not under Next, and a quirk's extra call (a cut or a refused
	// answer) shows in Status only once its attempt is committed, which
	// an answer asked inside the run can precede. The validation rows
	// less those for cut and refused answers (which only the quirks
	// write) and the warnings tell how far the session got the same way
	// in every twin.
	key := fmt.Sprint(strings.Join(pendingIDs(status.Pending), ","), "|", status.Round, " ", validationProgress(status), " ",
		len(status.Rollbacks), " ", len(status.Decisions), " ", status.Outcome)
	return rngOf(b.sim.sc.Seed, fmt.Sprintf("decide|%s|%d", key, b.visits[key])), key
}

// operatorAsker is the operator at a terminal: inside a Run it answers a
// question at once, for half the questions (by ID), when the stop would
// have answered it with the same draws; otherwise it defers and the stop
// decides.
type operatorAsker struct{ b *branch }

func (a operatorAsker) Ask(ctx context.Context, q refine.Question) (refine.Answer, error) {
	b := a.b
	s := b.sim
	if !b.decides || b.sess == nil || !s.opt.on(string(MoveAnswerNow)) || hashOf(s.sc.Seed, "now", q.ID)%2 == 0 {
		return refine.Answer{}, refine.ErrDeferred
	}
	status, err := b.sess.Status(ctx)
	if err != nil {
		return refine.Answer{}, refine.ErrDeferred
	}
	status.Pending = append(slices.DeleteFunc(slices.Clone(status.Pending), func(p refine.Question) bool { return p.ID == q.ID }), q)
	if !status.Outcome.Terminal() {
		// As the stop will read it: a question waits. A finished session
		// keeps its outcome while one waits (#40).
		status.Outcome = refine.StatusPaused
	}
	rnd, key := b.stopRand(status)
	choice := s.choose(ctx, b, rnd, status)
	if choice.move != MoveAnswer || choice.q.ID != q.ID {
		return refine.Answer{}, refine.ErrDeferred // the stop decides, drawing the same
	}
	b.visits[key]++
	b.live++
	b.logf("answer now %s with %q%s", q.ID, choice.a.Key, textNote(choice.a))
	return choice.a, nil
}

// validationProgress counts status's validation rows but those of cut
// and refused answers and the warnings (a benign quirk's NORMALIZED):
// what the session validated, the same with and without quirks.
func validationProgress(status refine.Status) int {
	n := 0
	for _, v := range status.Validation {
		if v.Result != "WARN" && v.FailureType != validate.Truncated && v.FailureType != validate.Refusal {
			n++
		}
	}
	return n
}
