package refinetemporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
)

// Error types of the CallRole activity's failures, for retry policies.
const (
	// ErrTypeTransient marks a role error worth retrying (rate limits,
	// timeouts, 5xx): the activity's retry policy retries it.
	ErrTypeTransient = "RefineTransient"
	// ErrTypePermanent marks a role error no retry fixes (a bad API key,
	// a missing replay file): the workflow sees it at once.
	ErrTypePermanent = "RefinePermanent"
)

// Activities are the session workflow's side effects, run by a worker:
// the role calls and the mirror. Register them with Register.
type Activities struct {
	// Engineer and Reviewer answer role calls. Required.
	Engineer refine.Role
	Reviewer refine.Role
	// Mirror receives a copy of each session started with
	// SessionInput.Mirror (its renderings and state) at every rendering:
	// a session named after its workflow ID. The copy is a local activity,
	// so the worker that runs the workflow must have it. nil: no mirror.
	Mirror store.Backend
	// HeartbeatEvery is how often a running role call heartbeats (0: 10 s).
	// Keep it under the workflow's HeartbeatTimeout.
	HeartbeatEvery time.Duration
}

// Register registers the activities under the names the workflow calls.
func (a *Activities) Register(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.CallRole, activity.RegisterOptions{Name: activityCallRole})
	r.RegisterActivityWithOptions(a.MirrorSession, activity.RegisterOptions{Name: activityMirror})
}

// CallRole makes one role call. It heartbeats while the call runs, so a
// worker that dies mid-call is noticed within the heartbeat timeout and
// the call is retried elsewhere. A transient error (refine.IsTransient)
// is returned retryable, with the server's Retry-After as the next delay;
// any other error is final.
func (a *Activities) CallRole(ctx context.Context, req refine.Request) (refine.Response, error) {
	role := a.Engineer
	if req.Role == refine.Reviewer {
		role = a.Reviewer
	}
	if role == nil {
		return refine.Response{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no %s role configured on this worker", req.Role), ErrTypePermanent, nil)
	}
	stop := make(chan struct{})
	defer close(stop)
	go heartbeat(ctx, cmpDuration(a.HeartbeatEvery, 10*time.Second), stop)

	resp, err := role.Respond(ctx, req)
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		// The worker is stopping or the call was cancelled: the call did
		// not fail, so it stays retryable (elsewhere, after a shutdown).
		return refine.Response{}, ctx.Err()
	}
	msg := fmt.Sprintf("%s call %d (round %d attempt %d): %v", req.Role, req.Call, req.Round, req.Attempt, err)
	if transient, after := refine.IsTransient(err); transient {
		return refine.Response{}, temporal.NewApplicationErrorWithOptions(msg, ErrTypeTransient, temporal.ApplicationErrorOptions{NextRetryDelay: after, Cause: err})
	}
	return refine.Response{}, temporal.NewNonRetryableApplicationError(msg, ErrTypePermanent, err)
}

func heartbeat(ctx context.Context, every time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			activity.RecordHeartbeat(ctx)
		}
	}
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// MirrorRequest is one batch of a session's keys for the mirror.
type MirrorRequest struct {
	// Session is the session's ID in the mirror (the workflow ID).
	Session string `json:"session"`
	// Puts are keys with their whole current values.
	Puts []MirrorEntry `json:"puts,omitempty"`
	// Deletes are keys the session no longer has.
	Deletes []string `json:"deletes,omitempty"`
}

// MirrorEntry is one key and its value.
type MirrorEntry struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// MirrorSession writes a batch to the mirror in one commit, creating the
// session on first use. Without a Mirror it does nothing.
func (a *Activities) MirrorSession(ctx context.Context, req MirrorRequest) error {
	if a.Mirror == nil {
		return nil
	}
	if err := store.ValidSessionID(req.Session); err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("mirror: %v; start the workflow with an ID of [A-Za-z0-9._-]", err), ErrTypePermanent, err)
	}
	st, err := a.Mirror.Session(ctx, req.Session)
	if errors.Is(err, refine.ErrNotFound) {
		nc, ok := a.Mirror.(store.NamedCreator)
		if !ok {
			return temporal.NewNonRetryableApplicationError("mirror: the store cannot create a session by name", ErrTypePermanent, nil)
		}
		st, err = nc.CreateNamed(ctx, req.Session)
	}
	if err != nil {
		return fmt.Errorf("mirror session %s: %w", req.Session, err)
	}
	if c, ok := st.(io.Closer); ok {
		defer c.Close()
	}
	ops := make([]store.Op, 0, len(req.Puts)+len(req.Deletes))
	for _, e := range req.Puts {
		ops = append(ops, store.Put(e.Key, e.Value))
	}
	for _, k := range req.Deletes {
		ops = append(ops, store.Delete(k))
	}
	if err := st.Commit(ctx, ops...); err != nil {
		return fmt.Errorf("mirror session %s: %w", req.Session, err)
	}
	return nil
}
