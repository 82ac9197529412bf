package refinetemporal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/temporal/internal/devserver"
)

// historyFile is a recorded history of the dev-server session below, as
// the workflow plays it now (versionDiscovery, mirrored), replayed by
// TestReplayRecordedHistory with the histories recorded by earlier
// versions. REFINE_UPDATE_HISTORY=1 rewrites it from a fresh run.
const historyFile = "testdata/history-v5.json"

// blockingRole holds the call named key in flight until its worker stops,
// and passes every other call on: the worker "dies" with that call running.
type blockingRole struct {
	refine.Role
	key      string
	inFlight chan struct{}
}

func (b blockingRole) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	if callKey(req) == b.key {
		close(b.inFlight)
		<-ctx.Done()
		return refine.Response{}, ctx.Err()
	}
	return b.Role.Respond(ctx, req)
}

// countingRole counts the calls its role completed, per role and call
// number, across workers.
type countingRole struct {
	refine.Role
	mu        sync.Mutex
	completed map[string]int
}

func (c *countingRole) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	resp, err := c.Role.Respond(ctx, req)
	if err == nil {
		c.mu.Lock()
		c.completed[callKey(req)]++
		c.mu.Unlock()
	}
	return resp, err
}

func startWorker(t *testing.T, cl client.Client, queue string, role refine.Role, mirror store.Backend) worker.Worker {
	t.Helper()
	w := worker.New(cl, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(RefineSession, workflow.RegisterOptions{Name: WorkflowName})
	(&Activities{Engineer: role, Reviewer: role, Mirror: mirror, HeartbeatEvery: 200 * time.Millisecond}).Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	return w
}

// waitForQuestion polls the status query until the session waits for an
// answer: the workflow runs in another process, which tells nothing
// otherwise.
func waitForQuestion(t *testing.T, ctx context.Context, cl client.Client, id string) statusjson.Status {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var st statusjson.Status
		v, err := cl.QueryWorkflow(ctx, id, "", QueryStatus)
		if err == nil {
			err = v.Get(&st)
		}
		if err == nil && len(st.Pending) > 0 {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no question within the deadline (last error %v)", err)
		case <-tick.C:
		}
	}
}

func update(ctx context.Context, cl client.Client, id string, req AnswerRequest) error {
	h, err := cl.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: UpdateAnswer,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}

// TestDevServerSessionSurvivesAWorkerKill runs a session on a real dev
// server: it pauses at a question, a bad answer is rejected, a good one
// resumes it, the worker dies during a round-2 role call, and a second
// worker (replaying the history from scratch) completes it without
// running any completed role call again.
func TestDevServerSessionSurvivesAWorkerKill(t *testing.T) {
	addr := devserver.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cl, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	mirrorRoot := t.TempDir()
	mirror, err := fs.OpenBackend(mirrorRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer mirror.Close()

	const queue, id = "refine-devserver-test", "refine-devserver-1"
	// The recording: round 1's Engineer answers three times in the wrong
	// format (the escalation question), then resolves the gap; the Reviewer
	// raises a HIGH issue; round 2 revises and is approved.
	replayed := &countingRole{Role: replay.Dir("testdata/two-rounds"), completed: map[string]int{}}
	inFlight := make(chan struct{})
	w1 := startWorker(t, cl, queue, blockingRole{Role: replayed, key: "engineer/5", inFlight: inFlight}, mirror)
	w1Stopped := false
	defer func() {
		if !w1Stopped {
			w1.Stop()
		}
	}()

	in := testInput()
	in.Activities = ActivitySettings{HeartbeatTimeout: 2 * time.Second, RetryInterval: 100 * time.Millisecond}
	in.Mirror = true
	run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, WorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}

	before := waitForQuestion(t, ctx, cl, id)
	if err := update(ctx, cl, id, AnswerRequest{Key: "Z"}); err == nil || !strings.Contains(err.Error(), "Z") {
		t.Fatalf("an unoffered key: %v, want a rejection naming it", err)
	}
	after := waitForQuestion(t, ctx, cl, id)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("a rejected answer changed the session (-before +after):\n%s", diff)
	}
	if err := update(ctx, cl, id, AnswerRequest{Key: "3", Text: "Use ## Gap Resolution headers"}); err != nil {
		t.Fatalf("answer: %v", err)
	}

	// Round 2's Engineer call is running on worker 1: kill the worker.
	select {
	case <-inFlight:
	case <-ctx.Done():
		t.Fatal("round 2's Engineer call never started")
	}
	w1.Stop()
	w1Stopped = true
	worker.PurgeStickyWorkflowCache() // the next worker replays the history from the start
	w2 := startWorker(t, cl, queue, replayed, mirror)
	defer w2.Stop()

	completedOnce(t, ctx, run, replayed, []string{"engineer/1", "engineer/2", "engineer/3", "engineer/4", "engineer/5", "reviewer/1", "reviewer/2"})

	// The mirror is a session folder humans (and refine status) can read.
	for _, f := range []string{"status.md", "decisions.md", "final_spec.md"} {
		if _, err := os.Stat(filepath.Join(mirrorRoot, id, f)); err != nil {
			t.Errorf("mirror: %v", err)
		}
	}
	view, err := mirror.View(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := refine.Inspect(ctx, view); err != nil || st.Outcome != refine.StatusComplete {
		t.Errorf("the mirror inspected: %v, outcome %s", err, st.Outcome)
	}

	// The history replays deterministically.
	hist := fetchHistory(t, ctx, cl, id, run.GetRunID())
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(RefineSession, workflow.RegisterOptions{Name: WorkflowName})
	if err := replayer.ReplayWorkflowHistory(quiet(), hist); err != nil {
		t.Fatalf("replaying the session's history: %v", err)
	}
	if os.Getenv("REFINE_UPDATE_HISTORY") != "" {
		b, err := protojson.MarshalOptions{Multiline: true}.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(historyFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fetchHistory(t testing.TB, ctx context.Context, cl client.Client, id, runID string) *historypb.History {
	t.Helper()
	it := cl.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		hist.Events = append(hist.Events, ev)
	}
	if len(hist.Events) == 0 {
		t.Fatal(errors.New("empty history"))
	}
	return hist
}

// completedOnce waits for run to end COMPLETE after round 2 and checks
// that the role calls completed are want, each once.
func completedOnce(t *testing.T, ctx context.Context, run client.WorkflowRun, replayed *countingRole, want []string) {
	t.Helper()
	var res SessionResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	if res.Outcome.Status != refine.StatusComplete || res.Outcome.Round != 2 {
		t.Fatalf("outcome %s after round %d (%s), want COMPLETE after round 2", res.Outcome.Status, res.Outcome.Round, res.Outcome.Reason)
	}
	replayed.mu.Lock()
	defer replayed.mu.Unlock()
	var calls []string
	for k, n := range replayed.completed {
		calls = append(calls, k)
		if n > 1 {
			t.Errorf("completed role call %s ran %d times", k, n)
		}
	}
	slices.Sort(calls)
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("completed role calls (-want +got):\n%s", diff)
	}
}
