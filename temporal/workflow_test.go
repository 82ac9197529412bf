package refinetemporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/store/sqlite"
)

// env returns a test environment running RefineSession with the
// script's roles and a mirror.
func env(t *testing.T, sc *script) (*testsuite.TestWorkflowEnvironment, *memory.Backend) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	e := suite.NewTestWorkflowEnvironment()
	mirror := memory.NewBackend()
	acts := &Activities{Engineer: sc, Reviewer: sc, Mirror: mirror}
	acts.Register(e)
	e.RegisterWorkflowWithOptions(RefineSession, workflow.RegisterOptions{Name: WorkflowName})
	return e, mirror
}

// started counts the activities a workflow started, by type: "CallRole",
// "Mirror", and "local Mirror" for a local activity.
type started struct {
	mu sync.Mutex
	n  map[string]int
}

func countStarts(e *testsuite.TestWorkflowEnvironment) *started {
	s := &started{n: map[string]int{}}
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.n[info.ActivityType.Name]++
	})
	e.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.n["local "+info.ActivityType.Name]++
	})
	return s
}

func (s *started) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.n)
}

func result(t *testing.T, e *testsuite.TestWorkflowEnvironment) SessionResult {
	t.Helper()
	if !e.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var res SessionResult
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTwoRoundSession(t *testing.T) {
	sc := newScript()
	e, mirror := env(t, sc)
	starts := countStarts(e)
	in := testInput()
	in.Mirror = true
	e.ExecuteWorkflow(WorkflowName, in)
	res := result(t, e)
	if res.Outcome.Status != refine.StatusComplete || res.Outcome.Round != 2 {
		t.Fatalf("outcome = %s after round %d, want COMPLETE after round 2", res.Outcome.Status, res.Outcome.Round)
	}
	if got := sc.total(); got != 4 {
		t.Errorf("%d role calls, want 4 (two rounds of Engineer and Reviewer)", got)
	}
	// The mirror is a local activity at each rendering (the start, between
	// the rounds, the end): no activity, so no workflow task, of its own.
	want := map[string]int{"CallRole": 4, "local Mirror": 3}
	if diff := cmp.Diff(want, starts.counts()); diff != "" {
		t.Errorf("activities started (-want +got):\n%s", diff)
	}
	if r := sc.repeated(); len(r) > 0 {
		t.Errorf("calls completed twice: %v", r)
	}
	// The mirror holds the session as humans read it.
	st, err := mirror.View(t.Context(), "default-test-workflow-id")
	if err != nil {
		t.Fatalf("mirror: %v", err)
	}
	for _, key := range []string{"status.md", "decisions.md", "final_spec.md", "state.json"} {
		if _, err := st.Get(t.Context(), key); err != nil {
			t.Errorf("mirror has no %s: %v", key, err)
		}
	}
	// The mirror opens as a session in its own right.
	status, err := refine.Inspect(t.Context(), st)
	if err != nil || status.Outcome != refine.StatusComplete {
		t.Errorf("mirror inspected: %v, outcome %s", err, status.Outcome)
	}
}

// pausedEnv starts a session whose Engineer gives three invalid answers,
// so the session pauses at the escalation question.
func pausedEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *script) {
	sc := newScript()
	sc.badEngineer = 3
	e, _ := env(t, sc)
	return e, sc
}

type updateResult struct {
	rejected, failed error
	done             bool
}

func callbacks(r *updateResult) *testsuite.TestUpdateCallback {
	return &testsuite.TestUpdateCallback{
		OnAccept: func() {},
		OnReject: func(err error) { r.rejected = err },
		OnComplete: func(_ any, err error) {
			r.done = true
			r.failed = err
		},
	}
}

func TestQuestionAnsweredByUpdate(t *testing.T) {
	e, sc := pausedEnv(t)
	var before statusjson.Status
	var ans updateResult
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		if err != nil {
			t.Errorf("status query: %v", err)
			return
		}
		if err := v.Get(&before); err != nil {
			t.Errorf("status query result: %v", err)
		}
		e.UpdateWorkflow(UpdateAnswer, "answer-1", callbacks(&ans), AnswerRequest{Key: "3", Text: "Use ## Gap Resolution headers"})
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, testInput())
	res := result(t, e)
	if len(before.Pending) != 1 || !strings.Contains(before.Pending[0].Title+before.Pending[0].Body, "ngineer") {
		t.Fatalf("status before the answer: pending %+v, want the Engineer escalation", before.Pending)
	}
	if before.Outcome != string(refine.StatusPaused) && before.Outcome != "" {
		t.Logf("outcome while waiting: %s", before.Outcome)
	}
	if ans.rejected != nil || ans.failed != nil || !ans.done {
		t.Fatalf("answer update: rejected %v, failed %v, done %v", ans.rejected, ans.failed, ans.done)
	}
	if res.Outcome.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", res.Outcome.Status, res.Outcome.Reason)
	}
	if r := sc.repeated(); len(r) > 0 {
		t.Errorf("calls completed twice: %v", r)
	}
}

func TestRejectedAnswerChangesNothing(t *testing.T) {
	e, _ := pausedEnv(t)
	var bad, unknown, good updateResult
	var before, after statusjson.Status
	query := func(into *statusjson.Status) { *into = queryStatus(t, e) }
	e.RegisterDelayedCallback(func() {
		query(&before)
		e.UpdateWorkflow(UpdateAnswer, "bad-key", callbacks(&bad), AnswerRequest{Key: "Z"})
		e.UpdateWorkflow(UpdateAnswer, "unknown-question", callbacks(&unknown), AnswerRequest{Question: "Q-NOPE", Key: "1"})
		query(&after)
		e.UpdateWorkflow(UpdateAnswer, "good", callbacks(&good), AnswerRequest{Key: "3", Text: "Use ## Gap Resolution headers"})
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, testInput())
	res := result(t, e)
	if bad.rejected == nil || !errors.Is(bad.rejected, bad.rejected) || !strings.Contains(bad.rejected.Error(), "Z") {
		t.Errorf("an unoffered key was not rejected: %+v", bad)
	}
	if unknown.rejected == nil || !strings.Contains(unknown.rejected.Error(), "Q-NOPE") {
		t.Errorf("an unknown question was not rejected: %+v", unknown)
	}
	if bad.done || unknown.done {
		t.Error("a rejected update ran its handler")
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("rejected answers changed the session (-before +after):\n%s", diff)
	}
	if !good.done || good.failed != nil || res.Outcome.Status != refine.StatusComplete {
		t.Errorf("the valid answer after them: %+v, outcome %s", good, res.Outcome.Status)
	}
}

func TestTransientActivityErrorRetried(t *testing.T) {
	sc := newScript()
	sc.transient["engineer/1"] = true
	sc.transient["reviewer/2"] = true
	e, _ := env(t, sc)
	e.ExecuteWorkflow(WorkflowName, testInput())
	res := result(t, e)
	if res.Outcome.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", res.Outcome.Status, res.Outcome.Reason)
	}
	if len(sc.transient) != 0 {
		t.Errorf("transient failures not reached: %v", sc.transient)
	}
	if got := sc.total(); got != 4 {
		t.Errorf("%d calls completed, want 4: a transient error is retried by the activity, not replayed by the engine", got)
	}
}

func TestPermanentActivityErrorFailsTheWorkflow(t *testing.T) {
	sc := newScript()
	sc.block = func(_ context.Context, key string) error {
		if key == "reviewer/1" {
			return errors.New("401 unauthorized: check the API key")
		}
		return nil
	}
	e, _ := env(t, sc)
	e.ExecuteWorkflow(WorkflowName, testInput())
	err := e.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "401 unauthorized") {
		t.Fatalf("workflow error = %v, want the role's 401", err)
	}
}

func quiet() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// TestReplayRecordedHistory replays histories recorded from a real server
// by TestDevServerSessionSurvivesAWorkerKill (REFINE_UPDATE_HISTORY=1
// rewrites the current one), one per version of the workflow's commands:
// a change to the workflow or the engine that would break running
// sessions fails here.
func TestReplayRecordedHistory(t *testing.T) {
	for _, tc := range []struct{ version, file string }{
		// Before the integration step: no version marker, the Mirror
		// activity at every rendering.
		{"default", "testdata/history.json"},
		// versionIntegration: the integration step, the Mirror activity at
		// every rendering (recorded by 370fe2a).
		{"integration", "testdata/history-v1.json"},
		// versionLean: the mirror a local activity, asked for by the input
		// (recorded by 90ac97d).
		{"lean", "testdata/history-v2.json"},
		// versionLocalCalls: role calls as activities, or as local
		// activities when the input asks for it (recorded by fa3c1fd).
		{"local-calls", "testdata/history-v3.json"},
		{"local-calls local", "testdata/history-v3-local.json"},
		// versionNextInputs: the Updates go through Next, with no Asker
		// (TestDevServerSessionSurvivesAWorkerKill,
		// TestDevServerTasksPerRoleCall).
		{"next-inputs", "testdata/history-v4.json"},
		{"next-inputs local", "testdata/history-v4-local.json"},
		// versionDiscovery: a session given no gaps discovers them first
		// (TestDevServerSessionDiscoversItsGaps); the others as before.
		{"discovery", historyFile},
		{"discovery local", localHistoryFile},
		{"discovery from a draft", discoveryHistoryFile},
	} {
		t.Run(tc.version, func(t *testing.T) {
			replayer := worker.NewWorkflowReplayer()
			replayer.RegisterWorkflowWithOptions(RefineSession, workflow.RegisterOptions{Name: WorkflowName})
			if err := replayer.ReplayWorkflowHistoryFromJSONFile(quiet(), tc.file); err != nil {
				t.Fatalf("replaying %s: %v", tc.file, err)
			}
		})
	}
}

// Parallel drafting runs its role calls as workflow coroutines: one
// Engineer call per gap, in flight together, merged in gap order.
func TestParallelDraftingInAWorkflow(t *testing.T) {
	sc := newScript()
	e, _ := env(t, sc)
	in := testInput()
	in.Gaps = append(in.Gaps, gap.Gap{ID: "GAP-HOOK-002", Title: "Signature scheme is unspecified", Severity: gap.Medium})
	set := *in.Settings
	set.ParallelGaps = 2
	in.Settings = &set
	// Both round-1 Engineer calls must be in flight at once to pass.
	var both sync.WaitGroup
	both.Add(2)
	sc.block = func(ctx context.Context, key string) error {
		if key == "engineer/1" || key == "engineer/2" {
			both.Done()
			both.Wait()
		}
		return nil
	}
	e.ExecuteWorkflow(WorkflowName, in)
	res := result(t, e)
	if res.Outcome.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", res.Outcome.Status, res.Outcome.Reason)
	}
	var round1 [][]gap.ID
	for k, n := range sc.completed {
		if strings.HasPrefix(k, "engineer/") && n != 1 {
			t.Errorf("%s completed %d times", k, n)
		}
	}
	for _, req := range sc.requests() {
		if req.Role == refine.Engineer && req.Round == 1 {
			round1 = append(round1, req.Gaps)
		}
	}
	if len(round1) != 2 || len(round1[0]) != 1 || len(round1[1]) != 1 || round1[0][0] == round1[1][0] {
		t.Errorf("round 1 Engineer calls were for %v, want one call per gap", round1)
	}
}

// "Pause session" offers the same question again, and commands (here
// "abandon") are Updates too.
func TestPauseThenAbandon(t *testing.T) {
	e, _ := pausedEnv(t)
	var pause, abandon updateResult
	var first, paused statusjson.Status
	query := func(into *statusjson.Status) { *into = queryStatus(t, e) }
	e.RegisterDelayedCallback(func() {
		query(&first)
		e.UpdateWorkflow(UpdateAnswer, "pause", callbacks(&pause), AnswerRequest{Key: "5"})
	}, time.Hour)
	e.RegisterDelayedCallback(func() {
		query(&paused)
		e.UpdateWorkflow(UpdateAbandon, "abandon", callbacks(&abandon), AbandonRequest{Reason: "no longer needed"})
	}, 2*time.Hour)
	e.ExecuteWorkflow(WorkflowName, testInput())
	res := result(t, e)
	if pause.failed != nil || !pause.done {
		t.Fatalf("answer 5: %+v", pause)
	}
	if len(paused.Pending) != 1 || len(first.Pending) != 1 || paused.Pending[0].ID != first.Pending[0].ID {
		t.Errorf("after \"Pause session\": pending %+v, want the same question again", paused.Pending)
	}
	if !abandon.done || abandon.failed != nil {
		t.Errorf("abandon: %+v", abandon)
	}
	if res.Outcome.Status != refine.StatusAbandoned {
		t.Errorf("outcome %s, want ABANDONED", res.Outcome.Status)
	}
}

// A rollback Update from a question in round 2 archives the round and
// replays from round 1.
func TestRollbackUpdate(t *testing.T) {
	sc := newScript()
	sc.badCalls = map[int]bool{2: true, 3: true, 4: true} // round 2's Engineer fails three times
	e, _ := env(t, sc)
	var rb, bad updateResult
	var st statusjson.Status
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateRollback, "bad", callbacks(&bad), RollbackRequest{To: 0})
		e.UpdateWorkflow(UpdateRollback, "rollback", callbacks(&rb), RollbackRequest{To: 1, Reason: "round 2 went nowhere", Adjustments: []string{"state the retry bound"}})
	}, time.Hour)
	// At the end the session asks what to do with the archive: keep it.
	var archives updateResult
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		if err == nil {
			err = v.Get(&st)
		}
		if err != nil || len(st.Pending) != 1 || st.Pending[0].ID != "rollback-archives" {
			t.Errorf("at the end: %v, pending %+v; want the archives question", err, st.Pending)
			return
		}
		e.UpdateWorkflow(UpdateAnswer, "archives", callbacks(&archives), AnswerRequest{Key: st.Pending[0].Default})
	}, 2*time.Hour)
	e.ExecuteWorkflow(WorkflowName, testInput())
	res := result(t, e)
	if bad.rejected == nil || bad.done {
		t.Errorf("rollback to round 0 was not rejected: %+v", bad)
	}
	if !rb.done || rb.failed != nil {
		t.Fatalf("rollback: %+v", rb)
	}
	if res.Outcome.Status != refine.StatusComplete || !archives.done {
		t.Fatalf("outcome %s (%s), archives answered %v; want COMPLETE", res.Outcome.Status, res.Outcome.Reason, archives.done)
	}
	v, err := e.QueryWorkflow(QueryStatus)
	if err == nil {
		err = v.Get(&st)
	}
	if err != nil || len(st.Rollbacks) != 1 || st.Rollbacks[0].Target != 1 {
		t.Errorf("status after the rollback: %v, rollbacks %+v; want one to round 1", err, st.Rollbacks)
	}
}

func TestApproveUpdate(t *testing.T) {
	e, _ := pausedEnv(t)
	var ok updateResult
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateApprove, "approve", callbacks(&ok), ApproveRequest{Note: "good enough for v1"})
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, testInput())
	res := result(t, e)
	if !ok.done || ok.failed != nil {
		t.Fatalf("approve: %+v", ok)
	}
	if res.Outcome.Status != refine.StatusUserApproved || !strings.Contains(res.Outcome.Reason, "good enough for v1") {
		t.Errorf("outcome %s (%s), want USER_APPROVED with the note", res.Outcome.Status, res.Outcome.Reason)
	}
}

// queryStatus runs the status Query.
func queryStatus(t *testing.T, e *testsuite.TestWorkflowEnvironment) statusjson.Status {
	t.Helper()
	var st statusjson.Status
	v, err := e.QueryWorkflow(QueryStatus)
	if err == nil {
		err = v.Get(&st)
	}
	if err != nil {
		t.Errorf("status query: %v", err)
	}
	return st
}

// The mirror may be any refine store: here SQLite, which `refine status
// --store sqlite:…` reads.
func TestMirrorToSQLite(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"), sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc := newScript()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet())
	e := suite.NewTestWorkflowEnvironment()
	(&Activities{Engineer: sc, Reviewer: sc, Mirror: db}).Register(e)
	e.RegisterWorkflowWithOptions(RefineSession, workflow.RegisterOptions{Name: WorkflowName})
	in := testInput()
	in.Mirror = true
	e.ExecuteWorkflow(WorkflowName, in)
	if res := result(t, e); res.Outcome.Status != refine.StatusComplete {
		t.Fatalf("outcome %s", res.Outcome.Status)
	}
	view, err := db.View(t.Context(), "default-test-workflow-id")
	if err != nil {
		t.Fatal(err)
	}
	st, err := refine.Inspect(t.Context(), view)
	if err != nil || st.Outcome != refine.StatusComplete || st.Round != 2 {
		t.Errorf("the SQLite mirror inspected: %v, %s after round %d", err, st.Outcome, st.Round)
	}
	if b, err := view.Get(t.Context(), "final_spec.md"); err != nil || len(b) == 0 {
		t.Errorf("final_spec.md in the mirror: %v", err)
	}
}

// TestIntegrationInAWorkflow: a new workflow takes the integration step
// (behind its version marker): the Engineer's next call writes the final
// spec, the Reviewer's checks it, both as activities, and the mirror gets
// the integrated final_spec.md.
func TestIntegrationInAWorkflow(t *testing.T) {
	sc := newScript()
	e, mirror := env(t, sc)
	in := testInput()
	in.Settings.Integrate = true
	in.Mirror = true
	e.ExecuteWorkflow(WorkflowName, in)
	res := result(t, e)
	if res.Outcome.Status != refine.StatusComplete {
		t.Fatalf("outcome %s", res.Outcome.Status)
	}
	if got := sc.total(); got != 6 {
		t.Errorf("%d role calls, want 6 (two rounds, the integration and its review)", got)
	}
	if r := sc.repeated(); len(r) > 0 {
		t.Errorf("calls completed twice: %v", r)
	}
	st, err := mirror.View(t.Context(), "default-test-workflow-id")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := st.Get(t.Context(), "final_spec.md"); err != nil || string(b) != integratedWebhooks() {
		t.Errorf("mirrored final_spec.md (%v):\n%s", err, b)
	}
	if status, err := refine.Inspect(t.Context(), st); err != nil || status.FinalSpec != refine.FinalSpecIntegrated {
		t.Errorf("mirror inspected: %v, final spec %q", err, status.FinalSpec)
	}
}

// A session started without a mirror makes no Mirror call, even on a
// worker that has one: one CallRole activity per role call and nothing
// else.
func TestNoMirrorNoMirrorCall(t *testing.T) {
	sc := newScript()
	e, mirror := env(t, sc)
	starts := countStarts(e)
	e.ExecuteWorkflow(WorkflowName, testInput())
	if res := result(t, e); res.Outcome.Status != refine.StatusComplete || res.Outcome.Round != 2 {
		t.Fatalf("outcome = %s after round %d, want COMPLETE after round 2", res.Outcome.Status, res.Outcome.Round)
	}
	if diff := cmp.Diff(map[string]int{"CallRole": 4}, starts.counts()); diff != "" {
		t.Errorf("activities started (-want +got):\n%s", diff)
	}
	if _, err := mirror.View(t.Context(), "default-test-workflow-id"); !errors.Is(err, refine.ErrNotFound) {
		t.Errorf("the mirror has the session (%v), want none", err)
	}
}

// A workflow that started before versionLean goes on as it started: the
// Mirror activity at every rendering, whatever its input says, so its
// history replays.
func TestVersionBeforeLeanMirrorsByActivity(t *testing.T) {
	for _, v := range []workflow.Version{workflow.DefaultVersion, versionIntegration} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			sc := newScript()
			e, mirror := env(t, sc)
			e.OnGetVersion(changeIntegration, workflow.DefaultVersion, versionDiscovery).Return(v)
			starts := countStarts(e)
			e.ExecuteWorkflow(WorkflowName, testInput())
			if res := result(t, e); res.Outcome.Status != refine.StatusComplete {
				t.Fatalf("outcome %s", res.Outcome.Status)
			}
			if diff := cmp.Diff(map[string]int{"CallRole": 4, "Mirror": 3}, starts.counts()); diff != "" {
				t.Errorf("activities started (-want +got):\n%s", diff)
			}
			if _, err := mirror.View(t.Context(), "default-test-workflow-id"); err != nil {
				t.Errorf("mirror: %v", err)
			}
		})
	}
}

// A session started with ActivitySettings.Local makes its role calls as
// local activities (no CallRole activity at all), retries a transient
// error locally, and completes as the same session does with activities.
func TestLocalRoleCalls(t *testing.T) {
	sc := newScript()
	sc.transient["engineer/1"] = true
	e, _ := env(t, sc)
	starts := countStarts(e)
	in := testInput()
	in.Activities.Local = true
	e.ExecuteWorkflow(WorkflowName, in)
	if res := result(t, e); res.Outcome.Status != refine.StatusComplete || res.Outcome.Round != 2 {
		t.Fatalf("outcome = %s after round %d (%s), want COMPLETE after round 2", res.Outcome.Status, res.Outcome.Round, res.Outcome.Reason)
	}
	// Four calls and the retry of the transient one.
	if diff := cmp.Diff(map[string]int{"local CallRole": 5}, starts.counts()); diff != "" {
		t.Errorf("activities started (-want +got):\n%s", diff)
	}
	if len(sc.transient) != 0 {
		t.Errorf("transient failures not reached: %v", sc.transient)
	}
	if got, r := sc.total(), sc.repeated(); got != 4 || len(r) > 0 {
		t.Errorf("%d calls completed (repeated: %v), want 4 once each", got, r)
	}
}

// A workflow that started before versionLocalCalls makes its role calls
// as activities whatever its input says, so its history replays.
func TestVersionBeforeLocalCallsMakesActivities(t *testing.T) {
	sc := newScript()
	e, _ := env(t, sc)
	e.OnGetVersion(changeIntegration, workflow.DefaultVersion, versionDiscovery).Return(versionLean)
	starts := countStarts(e)
	in := testInput()
	in.Activities.Local = true
	e.ExecuteWorkflow(WorkflowName, in)
	if res := result(t, e); res.Outcome.Status != refine.StatusComplete {
		t.Fatalf("outcome %s", res.Outcome.Status)
	}
	if diff := cmp.Diff(map[string]int{"CallRole": 4}, starts.counts()); diff != "" {
		t.Errorf("activities started (-want +got):\n%s", diff)
	}
}

// A workflow that started before versionDiscovery with no gaps failed to
// start, and still does when its history replays: discovery is only for
// the workflows that start after it.
func TestVersionBeforeDiscoveryNeedsGaps(t *testing.T) {
	sc := newScript()
	e, _ := env(t, sc)
	e.OnGetVersion(changeIntegration, workflow.DefaultVersion, versionDiscovery).Return(versionNextInputs)
	in := testInput()
	in.Gaps = nil
	e.ExecuteWorkflow(WorkflowName, in)
	err := e.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "predates discovery") {
		t.Fatalf("workflow error %v, want the start refused as before discovery", err)
	}
	if n := sc.total(); n != 0 {
		t.Errorf("%d role calls made, want none", n)
	}
}
