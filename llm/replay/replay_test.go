package replay_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/replay"
)

func recording() fstest.MapFS {
	return fstest.MapFS{
		"engineer-001.md":  {Data: []byte("E1")},
		"engineer-002.md":  {Data: []byte("E2")},
		"engineer-003.md":  {Data: []byte("E3")},
		"reviewer-001.md":  {Data: []byte("R1")},
		"reviewer-002.md":  {Data: []byte("R2")},
		"engineer-004.txt": {Data: []byte("not an answer")},
		"README":           {Data: []byte("notes")},
		"engineer-x.md":    {Data: []byte("not numbered")},
	}
}

func call(t *testing.T, r llm.Role, role llm.RoleName, round, attempt int) (string, error) {
	t.Helper()
	resp, err := r.Respond(context.Background(), llm.Request{Role: role, Round: round, Attempt: attempt})
	if err == nil && resp.Usage != (llm.Usage{}) {
		t.Errorf("usage %+v, want zero", resp.Usage)
	}
	return resp.Content, err
}

func TestOrderPerRole(t *testing.T) {
	r := replay.New(recording())
	seq := []llm.RoleName{llm.Engineer, llm.Reviewer, llm.Engineer, llm.Engineer, llm.Reviewer}
	var got []string
	for i, role := range seq {
		c, err := call(t, r, role, i+1, 1)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		got = append(got, c)
	}
	if diff := cmp.Diff([]string{"E1", "R1", "E2", "E3", "R2"}, got); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	if r.Calls(llm.Engineer) != 3 || r.Calls(llm.Reviewer) != 2 {
		t.Errorf("Calls = %d, %d; want 3, 2", r.Calls(llm.Engineer), r.Calls(llm.Reviewer))
	}
}

func TestRunningOutNamesTheFile(t *testing.T) {
	r := replay.New(recording(), replay.WithLabel("testdata/rec"), replay.WithStart(llm.Engineer, 3))
	_, err := call(t, r, llm.Engineer, 3, 2)
	want := "replay: no file engineer-004.md in testdata/rec for round 3 attempt 2: the recording has 3 engineer responses"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant prefix %q", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err %v does not match fs.ErrNotExist", err)
	}
	if !errors.Is(err, llm.ErrNoResponse) {
		t.Errorf("err %v does not match refine.ErrNoResponse (the integration step falls back on it)", err)
	}
	if transient, _ := llm.IsTransient(err); transient {
		t.Errorf("err %v is transient", err)
	}
	// The index does not advance past a missing file.
	if _, err2 := call(t, r, llm.Engineer, 3, 3); err2 == nil || !strings.Contains(err2.Error(), "engineer-004.md") {
		t.Errorf("second miss: %v", err2)
	}
}

func TestStartAndResume(t *testing.T) {
	tests := []struct {
		name string
		r    *replay.Role
		want string
	}{
		{name: "WithStart", r: replay.New(recording(), replay.WithStart(llm.Engineer, 2)), want: "E3"},
		{name: "negative start", r: replay.New(recording(), replay.WithStart(llm.Engineer, -4)), want: "E1"},
		{name: "other role untouched", r: replay.New(recording(), replay.WithStart(llm.Reviewer, 1)), want: "E1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, tc.r, llm.Engineer, 1, 1)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	r := replay.New(recording())
	call(t, r, llm.Reviewer, 1, 1)
	r.Resume(llm.Reviewer, 0) // a resumed session that had made no reviewer call
	if got, _ := call(t, r, llm.Reviewer, 1, 1); got != "R1" {
		t.Errorf("after Resume(0): %q, want R1", got)
	}
}

func TestConcurrentCallsServeEachFileOnce(t *testing.T) {
	const n = 64
	fsys := fstest.MapFS{}
	var want []string
	for i := 1; i <= n; i++ {
		fsys[replay.FileName(llm.Engineer, i)] = &fstest.MapFile{Data: []byte(fmt.Sprint(i))}
		want = append(want, fmt.Sprint(i))
	}
	r := replay.New(fsys)
	var (
		mu  sync.Mutex
		got []string
		wg  sync.WaitGroup
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := r.Respond(context.Background(), llm.Request{Role: llm.Engineer})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, resp.Content)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(got, func(i, j int) bool { return len(got[i]) < len(got[j]) || len(got[i]) == len(got[j]) && got[i] < got[j] })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files served (-want +got):\n%s", diff)
	}
	if _, err := call(t, r, llm.Engineer, 1, 1); err == nil || !strings.Contains(err.Error(), "has 64 engineer responses") {
		t.Errorf("after the last file: %v", err)
	}
}

func TestBadRoleNamesAndContext(t *testing.T) {
	r := replay.New(recording())
	for _, role := range []llm.RoleName{"", "..", "../engineer", "a/b", `a\b`} {
		if _, err := call(t, r, role, 1, 1); err == nil || !strings.Contains(err.Error(), "cannot name a file") {
			t.Errorf("role %q: err = %v", role, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Respond(ctx, llm.Request{Role: llm.Engineer}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	if r.Calls(llm.Engineer) != 0 {
		t.Errorf("a cancelled call consumed a file")
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	_, err := replay.Dir(dir).Respond(context.Background(), llm.Request{Role: llm.Reviewer, Round: 1, Attempt: 1})
	if err == nil || !strings.Contains(err.Error(), "no file reviewer-001.md in "+dir) || !strings.Contains(err.Error(), "has 0 reviewer responses") {
		t.Errorf("err = %v", err)
	}
}
