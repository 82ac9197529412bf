package refinetemporal

import (
	"context"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/temporal/internal/devserver"
)

// discoveryHistoryFile is a recorded history of the discovery session
// below (versionDiscovery), replayed by TestReplayRecordedHistory.
// REFINE_UPDATE_HISTORY=1 rewrites it from a fresh run.
const discoveryHistoryFile = "testdata/history-v5-discovery.json"

// TestDevServerSessionDiscoversItsGaps starts a session with no gaps on a
// real dev server: the discovery call runs as a role call like any other,
// the session waits for the list to be confirmed (an Update), then plays
// the two recorded rounds to COMPLETE, each role call made once.
func TestDevServerSessionDiscoversItsGaps(t *testing.T) {
	addr := devserver.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cl, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	mirror, err := fs.OpenBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer mirror.Close()

	const queue, id = "refine-devserver-discovery", "refine-devserver-discovery-1"
	replayed := &countingRole{Role: replay.Dir("testdata/discovery"), completed: map[string]int{}}
	w := startWorker(t, cl, queue, replayed, mirror)
	defer w.Stop()

	in := testInput()
	in.Gaps = nil
	in.Activities = ActivitySettings{HeartbeatTimeout: 2 * time.Second, RetryInterval: 100 * time.Millisecond}
	run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, WorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	st := waitForQuestion(t, ctx, cl, id)
	if q := st.Pending[0]; q.Kind != string(refine.KindDiscovery) {
		t.Fatalf("first question %s (%s), want the discovery question", q.ID, q.Kind)
	}
	if err := update(ctx, cl, id, AnswerRequest{Key: "accept"}); err != nil {
		t.Fatalf("accept the discovered list: %v", err)
	}
	// Round 1's Engineer answers three times in the wrong format: the
	// escalation, answered as in TestDevServerSessionSurvivesAWorkerKill.
	st = waitForQuestion(t, ctx, cl, id)
	if q := st.Pending[0]; q.Kind != string(refine.KindEscalation) {
		t.Fatalf("second question %s (%s), want round 1's escalation", q.ID, q.Kind)
	}
	if err := update(ctx, cl, id, AnswerRequest{Key: "3", Text: "Use ## Gap Resolution headers"}); err != nil {
		t.Fatalf("answer: %v", err)
	}
	completedOnce(t, ctx, run, replayed, []string{"discovery/1", "engineer/1", "engineer/2", "engineer/3", "engineer/4", "engineer/5", "reviewer/1", "reviewer/2"})

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
		if err := os.WriteFile(discoveryHistoryFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
