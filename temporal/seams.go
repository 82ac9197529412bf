package refinetemporal

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/refine-spec/refine"
)

// workflowKey carries the workflow.Context of the coroutine an engine call
// runs on inside the context.Context the engine passes around: blocking
// workflow calls (activities, sleeps, channels) must use their own
// coroutine's context.
type workflowKey struct{}

func withWorkflow(ctx context.Context, wctx workflow.Context) context.Context {
	return context.WithValue(ctx, workflowKey{}, wctx)
}

// workflowOf returns the workflow.Context ctx carries. The engine only
// calls the seams below with contexts derived from the workflow's, so a
// missing one is a bug.
func workflowOf(ctx context.Context) workflow.Context {
	w, ok := ctx.Value(workflowKey{}).(workflow.Context)
	if !ok {
		panic("refinetemporal: a context without its workflow.Context reached a workflow seam")
	}
	return w
}

// workflowClock is the session's Clock inside a workflow: workflow time,
// recorded in the history and the same on replay.
type workflowClock struct{ root workflow.Context }

func (c workflowClock) Now() time.Time { return workflow.Now(c.root) }

func (c workflowClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	return workflow.Sleep(workflowOf(ctx), d)
}

// workflowIDs names the session after its workflow.
type workflowIDs struct{ id string }

func (w workflowIDs) NewID() string { return w.id }

// jitterSeed derives the backoff jitter seed from the run: fixed for the
// run's lifetime, so a replay draws the same delays.
func jitterSeed(info *workflow.Info) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s", info.WorkflowExecution.ID, info.WorkflowExecution.RunID)
	return h.Sum64() | 1 // 0 would mean "seed from the clock"
}

// callerMakesCalls is the session's Role inside the workflow: Next never
// calls it (the workflow runs each call as an activity), and Config needs
// one.
type callerMakesCalls struct{}

func (callerMakesCalls) Respond(context.Context, refine.Request) (refine.Response, error) {
	return refine.Response{}, errors.New("refinetemporal: a role was called inside the workflow; role calls are activities")
}
