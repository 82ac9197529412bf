package refinetemporal

import (
	"context"
	"fmt"
	"os"
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
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/temporal/internal/devserver"
)

// What a session costs on a server: the events of its history, counted
// by kind. The benchmark reports them; TestDevServerTasksPerRoleCall
// holds them to one workflow task per role call.

// costSession is the session of issue #30's figures: 5 HIGH gaps (so no
// early-termination offer asks anything), one per round, roles that
// resolve every gap and find no issue, so 5 rounds of Engineer and
// Reviewer: 10 role calls.
func costSession() SessionInput {
	set := refine.DefaultConfig().Settings
	set.GapsPerRound = 1
	set.Integrate = false
	gaps := make([]gap.Gap, 5)
	for i := range gaps {
		gaps[i] = gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-BENCH-%03d", i+1)), Title: "benchmark gap", Severity: gap.High}
	}
	return SessionInput{Spec: "# Test Spec\n\nA small spec under refinement.\n", Gaps: gaps, Settings: &set}
}

// localHistoryFile is a recorded history of the cost session with local
// role calls (versionDiscovery), replayed by TestReplayRecordedHistory.
const localHistoryFile = "testdata/history-v5-local.json"

// costRounds and costCalls are what costSession plays.
const (
	costRounds = 5
	costCalls  = 2 * costRounds
)

// latencyRole answers after latency (the role's time, not
// synchronisation): the Engineer resolves its gaps, the Reviewer approves.
type latencyRole struct{ latency time.Duration }

func (r latencyRole) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	if r.latency > 0 {
		t := time.NewTimer(r.latency)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return refine.Response{}, ctx.Err()
		case <-t.C:
		}
	}
	if req.Role == refine.Engineer {
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	}
	return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
}

// runInProcess plays n copies of in at once in this process, on memory
// stores, and returns how long they took.
func runInProcess(tb testing.TB, in SessionInput, role refine.Role, n int) time.Duration {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			cfg := in.Config()
			cfg.Store = memory.New()
			cfg.Engineer, cfg.Reviewer = role, role
			cfg.Asker = refine.DefaultAsker{}
			s, err := refine.New(ctx, cfg)
			if err != nil {
				errs[i] = err
				return
			}
			out, err := s.Run(ctx)
			if err == nil && (out.Status != refine.StatusComplete || out.Round != costRounds) {
				err = fmt.Errorf("in process: %s after round %d (%s)", out.Status, out.Round, out.Reason)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	d := time.Since(start)
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return d
}

// runOnServer starts n workflows of in at once, named prefix-0…, waits
// for all of them and returns how long that took.
func runOnServer(tb testing.TB, ctx context.Context, cl client.Client, queue, prefix string, in SessionInput, n int) time.Duration {
	tb.Helper()
	start := time.Now()
	runs := make([]client.WorkflowRun, n)
	for i := range n {
		run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("%s-%d", prefix, i), TaskQueue: queue}, WorkflowName, in)
		if err != nil {
			tb.Fatal(err)
		}
		runs[i] = run
	}
	for _, run := range runs {
		var res SessionResult
		if err := run.Get(ctx, &res); err != nil {
			v, qerr := cl.QueryWorkflow(context.Background(), run.GetID(), "", QueryStatus)
			var st any
			if qerr == nil {
				qerr = v.Get(&st)
			}
			tb.Fatalf("workflow %s: %v (status %v: %+v)", run.GetID(), err, qerr, st)
		}
		if res.Outcome.Status != refine.StatusComplete || res.Outcome.Round != costRounds {
			tb.Fatalf("workflow %s: %s after round %d (%s)", run.GetID(), res.Outcome.Status, res.Outcome.Round, res.Outcome.Reason)
		}
	}
	return time.Since(start)
}

// historyCost counts a history's events by what a session pays for.
type historyCost struct {
	Events        int // all events
	WorkflowTasks int // workflow tasks completed
	CallRole      int // CallRole activities scheduled
	Mirror        int // Mirror activities scheduled
	LocalActivity int // local activities recorded (the mirror, local role calls)
	Markers       int // markers of any kind (version markers, local activities)
	Timers        int // timers started
}

func costOf(h *historypb.History) historyCost {
	var c historyCost
	for _, ev := range h.Events {
		c.Events++
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			c.WorkflowTasks++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			switch ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() {
			case activityCallRole:
				c.CallRole++
			case activityMirror:
				c.Mirror++
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			c.Markers++
			if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				c.LocalActivity++
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			c.Timers++
		}
	}
	return c
}

// startCostWorker runs a worker for the cost session's roles (and, when
// mirror is set, a mirror) until the test ends.
func startCostWorker(tb testing.TB, cl client.Client, queue string, role refine.Role, mirror store.Backend) {
	tb.Helper()
	w := worker.New(cl, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(RefineSession, workflow.RegisterOptions{Name: WorkflowName})
	(&Activities{Engineer: role, Reviewer: role, Mirror: mirror}).Register(w)
	if err := w.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Stop)
}

// TestDevServerTasksPerRoleCall plays the cost session on a real server
// and reads its history: one CallRole activity and one workflow task per
// role call and the first task, nothing else but the version marker;
// with a mirror, the mirror adds one marker per rendering and no task;
// with local role calls, the session is one workflow task and a marker
// per call. REFINE_UPDATE_HISTORY=1 rewrites localHistoryFile from the
// local-calls session.
func TestDevServerTasksPerRoleCall(t *testing.T) {
	addr := devserver.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cl, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close) // after the worker's Stop
	const queue = "refine-cost-test"
	startCostWorker(t, cl, queue, latencyRole{}, memory.NewBackend())

	for _, tc := range []struct {
		name          string
		mirror, local bool
		want          historyCost
	}{
		// Started, 11 tasks × 3 (scheduled, started, completed), 10
		// activities × 3, the version marker and its search attribute,
		// completed.
		{"no mirror", false, false, historyCost{Events: 1 + 3*(costCalls+1) + 3*costCalls + 2 + 1, WorkflowTasks: costCalls + 1, CallRole: costCalls, Markers: 1}},
		// The mirror at the start, at rounds 2–5 and at the end: 6 markers.
		{"mirror", true, false, historyCost{Events: 1 + 3*(costCalls+1) + 3*costCalls + 2 + costRounds + 1 + 1, WorkflowTasks: costCalls + 1, CallRole: costCalls, LocalActivity: costRounds + 1, Markers: costRounds + 2}},
		// Started, one task × 3, the version marker and its search
		// attribute, a marker per call, completed.
		{"local calls", false, true, historyCost{Events: 1 + 3 + 2 + costCalls + 1, WorkflowTasks: 1, LocalActivity: costCalls, Markers: costCalls + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := costSession()
			in.Mirror = tc.mirror
			in.Activities.Local = tc.local
			id := fmt.Sprintf("cost-%t-%t", tc.mirror, tc.local)
			runOnServer(t, ctx, cl, queue, id, in, 1)
			run := cl.GetWorkflow(ctx, id+"-0", "")
			hist := fetchHistory(t, ctx, cl, id+"-0", run.GetRunID())
			got := costOf(hist)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("history of a %d-call session (-want +got):\n%s", costCalls, diff)
			}
			if tc.local && os.Getenv("REFINE_UPDATE_HISTORY") != "" {
				b, err := protojson.MarshalOptions{Multiline: true}.Marshal(hist)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(localHistoryFile, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
