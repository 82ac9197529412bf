package refinetemporal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/statusjson"
)

// SessionInput starts a session workflow.
type SessionInput struct {
	// Spec is the document to refine.
	Spec string `json:"spec"`
	// Gaps are its open gaps. Not empty.
	Gaps []gap.Gap `json:"gaps"`
	// Settings are the session's tunables (nil: refine.DefaultConfig's).
	Settings *refine.Settings `json:"settings,omitempty"`
	// Activities tune the activities' timeouts and retries.
	Activities ActivitySettings `json:"activities,omitzero"`
	// Mirror says that the session is copied to the workers' mirror
	// (Activities.Mirror) at each rendering, by a local activity on the
	// worker that runs the workflow. The starter says so because only it
	// knows how its workers are set up; false: no Mirror call is made at
	// all, so a session costs one activity and one workflow task per role
	// call.
	Mirror bool `json:"mirror,omitempty"`
}

// ActivitySettings tune the role-call activities; zero fields take the
// defaults noted.
type ActivitySettings struct {
	// RoleTimeout bounds one role call (start to close; default 10 min).
	RoleTimeout time.Duration `json:"role_timeout,omitempty"`
	// HeartbeatTimeout is how long a role call may go without a heartbeat
	// before it counts as lost and is retried (default 1 min).
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	// MaxAttempts bounds the tries of one role call on transient errors
	// (default 5).
	MaxAttempts int32 `json:"max_attempts,omitempty"`
	// RetryInterval is the first delay between tries (default 1 s); it
	// doubles up to MaxRetryInterval (default 1 min).
	RetryInterval    time.Duration `json:"retry_interval,omitempty"`
	MaxRetryInterval time.Duration `json:"max_retry_interval,omitempty"`
	// Local runs the role calls as local activities on the worker that
	// runs the workflow, for roles that answer within seconds (a local
	// model, replayed responses, tests): a call then costs no activity
	// task and no workflow task of its own, only a marker in the history.
	// The price: a call has no heartbeat (a worker that dies is noticed
	// when its workflow task times out, 10 s), a status query may wait
	// for the running workflow task, and calls completed since the
	// workflow task last reported (at most about 8 s of them) are made
	// again after a worker dies. Default false: each call is an activity, durable when
	// it completes.
	Local bool `json:"local,omitempty"`
}

// localRole is role's options for a local activity: the same timeout
// and retry policy.
func (a ActivitySettings) localRole() workflow.LocalActivityOptions {
	o := a.role()
	return workflow.LocalActivityOptions{StartToCloseTimeout: o.StartToCloseTimeout, RetryPolicy: o.RetryPolicy}
}

func (a ActivitySettings) role() workflow.ActivityOptions {
	attempts := a.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	return workflow.ActivityOptions{
		StartToCloseTimeout: cmpDuration(a.RoleTimeout, 10*time.Minute),
		HeartbeatTimeout:    cmpDuration(a.HeartbeatTimeout, time.Minute),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        cmpDuration(a.RetryInterval, time.Second),
			BackoffCoefficient:     2,
			MaximumInterval:        cmpDuration(a.MaxRetryInterval, time.Minute),
			MaximumAttempts:        attempts,
			NonRetryableErrorTypes: []string{ErrTypePermanent},
		},
	}
}

// mirrorRetry retries the mirror until it succeeds: a store that is down
// holds the session back rather than losing its renderings.
var mirrorRetry = &temporal.RetryPolicy{
	InitialInterval:        time.Second,
	BackoffCoefficient:     2,
	MaximumInterval:        time.Minute,
	NonRetryableErrorTypes: []string{ErrTypePermanent},
}

// mirrorOptions are the Mirror activity's, in workflows recorded before
// versionLean.
var mirrorOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy:         mirrorRetry,
}

// localMirrorOptions are the Mirror local activity's: one try may take a
// minute, and the tries go on (backing off up to a minute apart) for as
// long as the store stays down, as the Mirror activity's did.
var localMirrorOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    time.Minute,
	ScheduleToCloseTimeout: 365 * 24 * time.Hour,
	RetryPolicy:            mirrorRetry,
}

// changeIntegration is the workflow.GetVersion change ID of the commands
// a session workflow sends; its versions follow.
const changeIntegration = "integration-step"

const (
	// versionIntegration adds the integration step (DESIGN §16): role
	// calls after the session ends. Before it (workflow.DefaultVersion)
	// there is none.
	versionIntegration workflow.Version = 1
	// versionLean mirrors only a session whose input asks for it
	// (SessionInput.Mirror), and as a local activity: no activity and no
	// workflow task of its own. Before it, the Mirror activity runs at
	// every rendering, with a mirror or without.
	versionLean workflow.Version = 2
	// versionLocalCalls honours ActivitySettings.Local: role calls as
	// local activities. Before it, every role call is an activity.
	versionLocalCalls workflow.Version = 3
	// versionNextInputs hands the Updates (answer, approve, abandon,
	// rollback) to the session through Next, like the main loop's play:
	// the session asks no Asker, and a rollback's dialog waits for its
	// answers like any question. Before it they went through the
	// session's methods (a rollback through its Asker, which deferred).
	versionNextInputs workflow.Version = 4
	// versionDiscovery starts a session given no gaps with discovery
	// (DESIGN §19): a Reviewer call on the spec, carried like any role
	// call, and the question that confirms its list. Before it a session
	// without gaps did not start.
	versionDiscovery workflow.Version = 5
)

// SessionResult is how a session workflow ended.
type SessionResult struct {
	Outcome refine.Outcome `json:"outcome"`
}

// Config builds the refine.Config a session workflow runs with, less the
// workflow's own seams: the command-line tool checks a SessionInput with
// it before starting a workflow.
func (in SessionInput) Config() refine.Config {
	cfg := refine.DefaultConfig()
	if in.Settings != nil {
		cfg.Settings = *in.Settings
	}
	cfg.Spec, cfg.Gaps = in.Spec, in.Gaps
	return cfg
}

// RefineSession is the session workflow: it runs the refine engine with
// the workflow's clock, IDs, jitter seed and coroutines, each role call
// as the CallRole activity, the session's state in workflow memory
// (mirrored at every rendering when the input asks for it), and every
// question as a durable wait for an Update. It returns when the session
// reaches a terminal outcome with no question left.
func RefineSession(ctx workflow.Context, in SessionInput) (SessionResult, error) {
	info := workflow.GetInfo(ctx)
	id := info.WorkflowExecution.ID
	cfg := in.Config()
	// A history recorded before a version replays with that version's
	// commands: no integration step before versionIntegration, the
	// Mirror activity at every rendering before versionLean.
	version := workflow.GetVersion(ctx, changeIntegration, workflow.DefaultVersion, versionDiscovery)
	if version == workflow.DefaultVersion {
		cfg.Integrate = false
	}
	if version < versionDiscovery && len(cfg.Gaps) == 0 {
		return SessionResult{}, temporal.NewNonRetryableApplicationError("start session: no gaps given, and this history predates discovery", ErrTypePermanent, nil)
	}
	mode := mirrorActivity
	if version >= versionLean {
		mode = mirrorNone
		if in.Mirror {
			mode = mirrorLocal
		}
	}
	store := newMirroredStore(id, mode)
	cfg.Store = store
	cfg.Engineer, cfg.Reviewer = callerMakesCalls{}, callerMakesCalls{}
	cfg.Asker = refine.DeferAsker{}
	cfg.Clock = workflowClock{root: ctx}
	cfg.IDs = workflowIDs{id: id}
	cfg.JitterSeed = jitterSeed(info)
	roleCtx := workflow.WithActivityOptions(ctx, in.Activities.role())
	local := in.Activities.Local && version >= versionLocalCalls
	if local {
		roleCtx = workflow.WithLocalActivityOptions(ctx, in.Activities.localRole())
	}

	root := withWorkflow(context.Background(), ctx)
	sess, err := refine.New(root, cfg)
	if err != nil {
		return SessionResult{}, temporal.NewNonRetryableApplicationError("start session: "+err.Error(), ErrTypePermanent, err)
	}
	h := &handlers{sess: sess, store: store, nextInputs: version >= versionNextInputs}
	if err := h.register(ctx); err != nil {
		return SessionResult{}, err
	}
	for {
		h.running = true
		ready, runErr := sess.Next(root, refine.Play{})
		// What Next decided goes into the workflow's store (and, at a
		// rendering, to the mirror) before any call is made.
		if err := store.Commit(root, ready.Persist...); err != nil {
			return SessionResult{Outcome: ready.Outcome}, fmt.Errorf("session %s: persist: %w", id, err)
		}
		if err := sess.Advance(root); err != nil {
			return SessionResult{Outcome: ready.Outcome}, err
		}
		if runErr == nil && len(ready.Calls) > 0 {
			runErr = callRoles(roleCtx, local, sess, root, ready.Calls)
			h.running = false
			if runErr == nil {
				continue
			}
		}
		h.running = false
		out := ready.Outcome
		if err := store.flush(root); err != nil {
			return SessionResult{Outcome: out}, err
		}
		if runErr != nil {
			return SessionResult{Outcome: out}, fmt.Errorf("session %s round %d: %w", id, out.Round, runErr)
		}
		if len(out.Pending) == 0 && out.Status.Terminal() {
			// Let an update that is still replying finish first.
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
				return SessionResult{Outcome: out}, err
			}
			return SessionResult{Outcome: out}, nil
		}
		if len(out.Pending) == 0 {
			// Only a cancelled context stops without a question, and the
			// workflow's never is.
			return SessionResult{Outcome: out}, fmt.Errorf("session %s stopped at round %d (%s) with no question to wait for: %s", id, out.Round, out.Status, out.Reason)
		}
		workflow.GetLogger(ctx).Info("session waits for an answer", "round", out.Round, "question", out.Pending[0].ID)
		h.resume = false
		if err := workflow.Await(ctx, func() bool { return h.resume }); err != nil {
			return SessionResult{Outcome: out}, err
		}
	}
}

// callRoles runs the calls Next asked for as CallRole activities (local
// ones when local is set), each on a workflow coroutine so that parallel
// drafting's calls run side by side, and delivers the responses in the
// order Next gave them, so a replay delivers the same.
func callRoles(ctx workflow.Context, local bool, sess *refine.Session, root context.Context, calls []refine.Request) error {
	resps := make([]refine.Response, len(calls))
	errs := make([]error, len(calls))
	wg := workflow.NewWaitGroup(ctx)
	for i, req := range calls {
		wg.Add(1)
		workflow.Go(ctx, func(c workflow.Context) {
			defer wg.Done()
			var f workflow.Future
			if local {
				f = workflow.ExecuteLocalActivity(c, activityCallRole, req)
			} else {
				f = workflow.ExecuteActivity(c, activityCallRole, req)
			}
			if err := f.Get(c, &resps[i]); err != nil {
				// The activity's retry policy has had its turn: the call failed.
				errs[i] = fmt.Errorf("activity %s (%s call %d): %w", activityCallRole, req.Role, req.Call, err)
			}
		})
	}
	wg.Wait(ctx)
	for i, req := range calls {
		if errs[i] != nil {
			return errs[i]
		}
		if err := sess.Deliver(root, req, resps[i]); err != nil {
			return err
		}
	}
	return nil
}

// AnswerRequest is the argument of the "answer" Update.
type AnswerRequest struct {
	// Question is the pending question's ID ("": the first pending).
	Question string `json:"question,omitempty"`
	// Key is the chosen option; Text the free text it takes, if any.
	Key  string `json:"key"`
	Text string `json:"text,omitempty"`
}

// ApproveRequest is the argument of the "approve" Update.
type ApproveRequest struct {
	Note            string `json:"note,omitempty"`
	AcknowledgeHigh bool   `json:"acknowledge_high,omitempty"`
}

// AbandonRequest is the argument of the "abandon" Update.
type AbandonRequest struct {
	Reason string `json:"reason,omitempty"`
}

// RollbackRequest is the argument of the "rollback" Update.
type RollbackRequest struct {
	To          int      `json:"to"`
	Reason      string   `json:"reason,omitempty"`
	Adjustments []string `json:"adjustments,omitempty"`
}

// ErrRunning rejects an Update that arrives while a round is being played:
// the session takes answers and commands when it waits for a person.
var ErrRunning = errors.New("the session is playing a round; send this when it waits for an answer (the status query shows its pending questions)")

// handlers are the workflow's Query and Update handlers. Updates only run
// while the main loop waits (running is false), so they never race the
// engine; each one wakes the loop through resume.
type handlers struct {
	sess    *refine.Session
	running bool
	resume  bool
	// nextInputs hands the Updates to the session through Next
	// (versionNextInputs), whose writes go to store.
	nextInputs bool
	store      refine.Store
}

// next hands in to the session through Next and commits what it decided
// to the workflow's store: no Asker, no role call (an Update never needs
// one; the main loop plays on).
func (h *handlers) next(ctx workflow.Context, in refine.Input) error {
	root := withWorkflow(context.Background(), ctx)
	ready, err := h.sess.Next(root, in)
	if cerr := h.store.Commit(root, ready.Persist...); cerr != nil {
		return cerr
	}
	if aerr := h.sess.Advance(root); aerr != nil {
		return aerr
	}
	return err
}

func (h *handlers) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryStatus, h.status); err != nil {
		return err
	}
	updates := []struct {
		name      string
		handler   any
		validator any
	}{
		{UpdateAnswer, h.answer, h.validAnswer},
		{UpdateApprove, h.approve, func(workflow.Context, ApproveRequest) error { return h.idle() }},
		{UpdateAbandon, h.abandon, func(workflow.Context, AbandonRequest) error { return h.idle() }},
		{UpdateRollback, h.rollback, h.validRollback},
	}
	for _, u := range updates {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, u.name, u.handler, workflow.UpdateHandlerOptions{Validator: u.validator}); err != nil {
			return err
		}
	}
	return nil
}

func (h *handlers) status() (statusjson.Status, error) {
	st, err := h.sess.Status(context.Background())
	if err != nil {
		return statusjson.Status{}, err
	}
	return statusjson.From(st), nil
}

// pending returns the question an answer is for, checked against it.
func (h *handlers) pending(req AnswerRequest) (refine.Question, error) {
	if h.running {
		return refine.Question{}, ErrRunning
	}
	st, err := h.sess.Status(context.Background())
	if err != nil {
		return refine.Question{}, err
	}
	if len(st.Pending) == 0 {
		return refine.Question{}, fmt.Errorf("%w: no question is pending", refine.ErrUnknownQuestion)
	}
	q := st.Pending[0]
	if req.Question != "" {
		found := false
		for _, p := range st.Pending {
			if p.ID == req.Question {
				q, found = p, true
			}
		}
		if !found {
			return refine.Question{}, fmt.Errorf("%w: %q is not pending (pending: %s)", refine.ErrUnknownQuestion, req.Question, st.Pending[0].ID)
		}
	}
	if err := q.Check(refine.Answer{Key: req.Key, Text: req.Text}); err != nil {
		return refine.Question{}, fmt.Errorf("question %s: %w", q.ID, err)
	}
	return q, nil
}

func (h *handlers) validAnswer(_ workflow.Context, req AnswerRequest) error {
	_, err := h.pending(req)
	return err
}

func (h *handlers) answer(ctx workflow.Context, req AnswerRequest) error {
	q, err := h.pending(req)
	if err != nil {
		return err
	}
	a := refine.Answer{Key: req.Key, Text: req.Text}
	if h.nextInputs {
		err = h.next(ctx, refine.Reply{Question: q.ID, Answer: a})
	} else {
		err = h.sess.Answer(withWorkflow(context.Background(), ctx), q.ID, a)
	}
	if err != nil {
		return err
	}
	h.resume = true
	return nil
}

// idle rejects a command while a round is being played.
func (h *handlers) idle() error {
	if h.running {
		return ErrRunning
	}
	return nil
}

func (h *handlers) approve(ctx workflow.Context, req ApproveRequest) error {
	ar := refine.ApproveRequest{Note: req.Note, AcknowledgeHigh: req.AcknowledgeHigh}
	var err error
	if h.nextInputs {
		err = h.next(ctx, ar)
	} else {
		err = h.sess.Approve(withWorkflow(context.Background(), ctx), ar)
	}
	if err != nil {
		return err
	}
	h.resume = true
	return nil
}

func (h *handlers) abandon(ctx workflow.Context, req AbandonRequest) error {
	var err error
	if h.nextInputs {
		err = h.next(ctx, refine.AbandonRequest{Reason: req.Reason})
	} else {
		err = h.sess.Abandon(withWorkflow(context.Background(), ctx), req.Reason)
	}
	if err != nil {
		return err
	}
	h.resume = true
	return nil
}

func (h *handlers) validRollback(_ workflow.Context, req RollbackRequest) error {
	if err := h.idle(); err != nil {
		return err
	}
	if req.To < 1 {
		return fmt.Errorf("rollback: round %d: want a round ≥ 1 (the status query lists the rounds)", req.To)
	}
	return nil
}

func (h *handlers) rollback(ctx workflow.Context, req RollbackRequest) error {
	rr := refine.RollbackRequest{To: req.To, Reason: req.Reason, Adjustments: req.Adjustments}
	var err error
	if h.nextInputs {
		err = h.next(ctx, rr)
	} else {
		_, err = h.sess.Rollback(withWorkflow(context.Background(), ctx), rr)
	}
	if err != nil && !errors.Is(err, refine.ErrDeferred) {
		return err
	}
	// Done, or waiting for an answer to its dialogs: either way the
	// session plays on (and asks them).
	h.resume = true
	return nil
}
