package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/temporal/internal/devserver"
)

// syncBuffer is a bytes.Buffer safe for a worker goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func call(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }})
	return code, out.String(), errOut.String()
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badGaps := filepath.Join(dir, "gaps.md")
	os.WriteFile(badGaps, []byte("- not a gap line\n"), 0o600)
	spec := filepath.Join(dir, "spec.md")
	os.WriteFile(spec, []byte("# Spec\n"), 0o600)
	binary := filepath.Join(dir, "draft.png")
	os.WriteFile(binary, []byte("\x89PNG\r\n\x1a\n\x00"), 0o600)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"start", "--gaps", badGaps}, "--spec is required"},
		{[]string{"start", "--spec", spec, "--gaps", badGaps}, "gaps.md:1"},
		{[]string{"start", "--spec", spec, "--gaps", filepath.Join(dir, "missing.md")}, "missing.md"},
		{[]string{"start", "--spec", binary}, "--spec is not UTF-8 text"},
		{[]string{"answer", "--id", "x"}, "--id and --key are required"},
		{[]string{"status"}, "--id is required"},
		{[]string{"worker"}, "--llm is required"},
		{[]string{"worker", "--llm", "replay"}, "--llm replay needs --replay DIR"},
		{[]string{"worker", "--llm", "replay", "--replay", dir, "--mirror", "mysql://x"}, `unknown scheme "mysql"`},
	}
	for _, tc := range tests {
		code, _, errOut := call(t, tc.args...)
		if code == exitOK || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want a failure saying %q", tc.args, code, errOut, tc.want)
		}
	}
	if code, _, errOut := call(t, "status", "--id", "x", "--address", "127.0.0.1:1"); code != exitFail || !strings.Contains(errOut, "temporal server start-dev") {
		t.Errorf("no server: exit %d, stderr %q, want exit 1 saying how to start one", code, errOut)
	}
}

// The README's example: a session whose Engineer gives three answers in
// the wrong format, so it pauses at the escalation question, and
// completes after the answer.
const (
	exampleSpec   = "../../examples/hooks/spec.md"
	exampleGaps   = "../../examples/hooks/gaps.md"
	exampleReplay = "../../examples/hooks/replay"
)

// TestCommandsOnADevServer runs the README's commands, on its example, against a real dev
// server: a worker, start, status (text and JSON), a rejected answer, a
// good one, and the mirror's final spec.
func TestCommandsOnADevServer(t *testing.T) {
	addr := devserver.Start(t)
	spec, gaps := exampleSpec, exampleGaps
	mirror := filepath.Join(t.TempDir(), "sessions")
	conn := []string{"--address", addr, "--task-queue", "refine-cli-test"}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	wctx, stopWorker := context.WithCancel(ctx)
	ready := make(chan struct{})
	done := make(chan int)
	var workerErr syncBuffer
	go func() {
		done <- run(wctx, append([]string{"worker", "--llm", "replay", "--replay", exampleReplay, "--mirror", mirror}, conn...),
			env{stdout: &workerErr, stderr: &workerErr, getenv: func(string) string { return "" }, ready: func() { close(ready) }})
	}()
	defer func() {
		stopWorker()
		if code := <-done; code != exitOK {
			t.Errorf("worker exit %d: %s", code, workerErr.String())
		}
	}()
	select {
	case <-ready:
	case code := <-done:
		t.Fatalf("worker exited %d: %s", code, workerErr.String())
	}

	code, out, errOut := call(t, append([]string{"start", "--spec", spec, "--gaps", gaps, "--id", "hooks"}, conn...)...)
	if code != exitOK || !strings.Contains(out, "started session hooks") || !strings.Contains(out, "refine-temporal answer --id hooks") {
		t.Fatalf("start: exit %d\n%s%s", code, out, errOut)
	}

	st := pollStatus(t, ctx, conn, func(st statusjson.Status) bool { return len(st.Pending) > 0 })
	if st.Pending[0].Kind == "" || len(st.Pending[0].Options) == 0 {
		t.Fatalf("pending question without options: %+v", st.Pending[0])
	}
	code, out, _ = call(t, append([]string{"status", "--id", "hooks"}, conn...)...)
	if code != exitOK || !strings.Contains(out, "question "+st.Pending[0].ID) || !strings.Contains(out, "refine-temporal answer --id hooks --key KEY") {
		t.Errorf("status text: exit %d\n%s", code, out)
	}
	if code, _, errOut := call(t, append([]string{"answer", "--id", "hooks", "--key", "Z"}, conn...)...); code != exitFail || !strings.Contains(errOut, "Z") {
		t.Errorf("an unoffered key: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = call(t, append([]string{"answer", "--id", "hooks", "--key", "3", "--text", "Use ## Gap Resolution headers"}, conn...)...)
	if code != exitOK {
		t.Fatalf("answer: exit %d\n%s%s", code, out, errOut)
	}
	st = pollStatus(t, ctx, conn, func(st statusjson.Status) bool { return st.Outcome == "COMPLETE" })
	if len(st.Pending) != 0 {
		t.Errorf("complete with pending questions: %+v", st.Pending)
	}
	if b, err := os.ReadFile(filepath.Join(mirror, "hooks", "final_spec.md")); err != nil || !strings.Contains(string(b), "GAP-HOOK-001") {
		t.Errorf("mirror final_spec.md: %v\n%s", err, b)
	}

	// A session started with --no-mirror is not copied to the worker's
	// mirror: at its question (a rendering), the mirror has no folder for it.
	code, out, errOut = call(t, append([]string{"start", "--spec", spec, "--gaps", gaps, "--id", "hooks-unmirrored", "--no-mirror"}, conn...)...)
	if code != exitOK {
		t.Fatalf("start --no-mirror: exit %d\n%s%s", code, out, errOut)
	}
	pollStatusOf(t, ctx, "hooks-unmirrored", conn, func(st statusjson.Status) bool { return len(st.Pending) > 0 })
	if _, err := os.Stat(filepath.Join(mirror, "hooks-unmirrored")); !os.IsNotExist(err) {
		t.Errorf("the mirror has a session started with --no-mirror (%v)", err)
	}

	// A session started with --local-calls makes its role calls as local
	// activities: by its question, its history holds a local-activity
	// marker per call and no activity.
	code, out, errOut = call(t, append([]string{"start", "--spec", spec, "--gaps", gaps, "--id", "hooks-local", "--no-mirror", "--local-calls"}, conn...)...)
	if code != exitOK {
		t.Fatalf("start --local-calls: exit %d\n%s%s", code, out, errOut)
	}
	pollStatusOf(t, ctx, "hooks-local", conn, func(st statusjson.Status) bool { return len(st.Pending) > 0 })
	cl, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quietLogger(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	activities, locals := 0, 0
	it := cl.GetWorkflowHistory(ctx, "hooks-local", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			activities++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				locals++
			}
		}
	}
	// The recording's round 1 Engineer answers three times before the question.
	if activities != 0 || locals != 3 {
		t.Errorf("--local-calls: %d activities and %d local-activity markers before the question, want 0 and 3", activities, locals)
	}
}

// pollStatus runs `status --json` until ok holds: the workflow runs in
// the server's and the worker's time, which nothing else reports.
func pollStatus(t *testing.T, ctx context.Context, conn []string, ok func(statusjson.Status) bool) statusjson.Status {
	t.Helper()
	return pollStatusOf(t, ctx, "hooks", conn, ok)
}

// pollStatusOf is pollStatus for the session id.
func pollStatusOf(t *testing.T, ctx context.Context, id string, conn []string, ok func(statusjson.Status) bool) statusjson.Status {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		code, out, errOut := call(t, append([]string{"status", "--id", id, "--json"}, conn...)...)
		var st statusjson.Status
		if code == exitOK && json.Unmarshal([]byte(out), &st) == nil && ok(st) {
			return st
		}
		last = out + errOut
		select {
		case <-ctx.Done():
			t.Fatalf("status never got there; last:\n%s", last)
		case <-tick.C:
		}
	}
}
