package record_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/record"
	"github.com/refine-spec/refine/llm/replay"
)

// echo answers "ROLE rROUND aATTEMPT", failing attempts listed in fail.
func echo(fail map[int]bool) llm.Role {
	return llm.RoleFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if fail[req.Attempt] {
			return llm.Response{}, &llm.TransientError{Err: errors.New("503")}
		}
		return llm.Response{Content: fmt.Sprintf("%s r%d a%d", req.Role, req.Round, req.Attempt), Usage: llm.Usage{PromptTokens: 1}}, nil
	})
}

// files returns the directory's file names and contents.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func TestLayoutAndNumbering(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	r, err := record.New(echo(map[int]bool{2: true}), dir)
	if err != nil {
		t.Fatal(err)
	}
	calls := []llm.Request{
		{Role: llm.Engineer, Round: 1, Attempt: 1},
		{Role: llm.Reviewer, Round: 1, Attempt: 1},
		{Role: llm.Engineer, Round: 2, Attempt: 2}, // fails: not recorded, no gap
		{Role: llm.Engineer, Round: 2, Attempt: 3},
	}
	for _, req := range calls {
		resp, err := r.Respond(context.Background(), req)
		if req.Attempt == 2 {
			if transient, _ := llm.IsTransient(err); !transient {
				t.Errorf("inner transient error not preserved: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage.PromptTokens != 1 {
			t.Errorf("usage not forwarded: %+v", resp.Usage)
		}
	}
	want := map[string]string{
		"engineer-001.md": "engineer r1 a1",
		"engineer-002.md": "engineer r2 a3",
		"reviewer-001.md": "reviewer r1 a1",
	}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if runtime.GOOS != "windows" {
		assertMode(t, dir, 0o700|fs.ModeDir)
		assertMode(t, filepath.Join(dir, "engineer-001.md"), 0o600)
	}
	if r.Calls(llm.Engineer) != 2 || r.Dir() != dir {
		t.Errorf("Calls = %d, Dir = %q", r.Calls(llm.Engineer), r.Dir())
	}
}

func assertMode(t *testing.T, name string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != want {
		t.Errorf("%s: mode %v, want %v", name, fi.Mode(), want)
	}
}

func TestRefusesToOverwriteAndResumes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "engineer-001.md"), []byte("earlier run"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := record.New(echo(nil), dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: 1, Attempt: 1})
	if err == nil || !strings.Contains(err.Error(), "engineer-001.md") || !strings.Contains(err.Error(), "refine resume") || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err = %v; want a refusal naming the file", err)
	}
	if got := files(t, dir)["engineer-001.md"]; got != "earlier run" {
		t.Errorf("earlier recording changed to %q", got)
	}

	r.Resume(llm.Engineer, 1)
	if _, err := r.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: 2, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	r2, err := record.New(echo(nil), dir, record.WithStart(llm.Engineer, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: 3, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"engineer-001.md": "earlier run", "engineer-002.md": "engineer r2 a1", "engineer-003.md": "engineer r3 a1"}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := record.New(nil, t.TempDir()); err == nil {
		t.Error("nil inner accepted")
	}
	if _, err := record.New(echo(nil), ""); err == nil {
		t.Error("empty dir accepted")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := record.New(echo(nil), filepath.Join(file, "sub")); err == nil || !strings.Contains(err.Error(), "creating directory") {
		t.Errorf("dir under a file: err = %v", err)
	}
	r, _ := record.New(echo(nil), t.TempDir())
	if _, err := r.Respond(context.Background(), llm.Request{Role: "../x"}); err == nil {
		t.Error("path-like role name accepted")
	}
}

func TestWriteErrorIsReturned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	r, err := record.New(echo(nil), dir)
	if err != nil {
		t.Fatal(err)
	}
	// Replace the directory with a file: creating files in it now fails,
	// for root too.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = r.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: 1, Attempt: 1})
	if err == nil || !strings.HasPrefix(err.Error(), "record: saving the engineer answer for round 1 attempt 1 as engineer-001.md in "+dir) {
		t.Fatalf("err = %v", err)
	}
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) {
		t.Errorf("err %v does not wrap the OS error", err)
	}
	if r.Calls(llm.Engineer) != 0 {
		t.Error("numbering advanced past a failed write")
	}
}

func TestRecordReplayRoundTrip(t *testing.T) {
	src := fstest.MapFS{
		"engineer-001.md": {Data: []byte("# Proposal 1\n")},
		"engineer-002.md": {Data: []byte("# Proposal 2\n")},
		"reviewer-001.md": {Data: []byte("# Review 1\n")},
		"reviewer-002.md": {Data: []byte("")},
	}
	seq := []llm.RoleName{llm.Engineer, llm.Reviewer, llm.Engineer, llm.Reviewer}
	dir := t.TempDir()
	rec, err := record.New(replay.New(src), dir)
	if err != nil {
		t.Fatal(err)
	}
	play := func(r llm.Role) []string {
		var out []string
		for i, role := range seq {
			resp, err := r.Respond(context.Background(), llm.Request{Role: role, Round: i + 1, Attempt: 1})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, resp.Content)
		}
		return out
	}
	first := play(rec)
	second := play(replay.Dir(dir))
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("replay of the recording differs (-recorded +replayed):\n%s", diff)
	}
	names := slices.Sorted(maps.Keys(files(t, dir)))
	if diff := cmp.Diff([]string{"engineer-001.md", "engineer-002.md", "reviewer-001.md", "reviewer-002.md"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestConcurrentRecording(t *testing.T) {
	const n = 40
	dir := t.TempDir()
	r, err := record.New(echo(nil), dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			role := llm.Engineer
			if i%2 == 1 {
				role = llm.Reviewer
			}
			if _, err := r.Respond(context.Background(), llm.Request{Role: role, Round: i, Attempt: 1}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got := files(t, dir)
	for i := 1; i <= n/2; i++ {
		for _, role := range []llm.RoleName{llm.Engineer, llm.Reviewer} {
			name := replay.FileName(role, i)
			if !strings.HasPrefix(got[name], string(role)+" r") {
				t.Errorf("%s = %q", name, got[name])
			}
		}
	}
	if len(got) != n {
		t.Errorf("%d files, want %d", len(got), n)
	}
}

type resumeSpy struct {
	llm.Role
	got int
}

func (s *resumeSpy) Resume(_ llm.RoleName, calls int) { s.got = calls }

func TestResumeForwardsToInner(t *testing.T) {
	spy := &resumeSpy{Role: echo(nil)}
	r, _ := record.New(spy, t.TempDir())
	r.Resume(llm.Engineer, 5)
	if spy.got != 5 || r.Calls(llm.Engineer) != 5 {
		t.Errorf("inner got %d, Calls = %d; want 5, 5", spy.got, r.Calls(llm.Engineer))
	}
}

// The discovery call's answers are recorded as discovery-NNN.md, numbered
// apart from the Reviewer's, and a replay of the recording serves them
// back to the same calls.
func TestDiscoveryAnswersRecordedApart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, err := record.New(echo(nil), dir)
	if err != nil {
		t.Fatal(err)
	}
	reqs := []llm.Request{
		{Role: llm.Reviewer, Round: 0, Attempt: 1, Call: 1, Discovery: true},
		{Role: llm.Reviewer, Round: 1, Attempt: 1, Call: 1},
	}
	for _, req := range reqs {
		if _, err := r.Respond(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"discovery-001.md", "reviewer-001.md"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	rp := replay.Dir(dir)
	for _, req := range reqs {
		want, _ := echo(nil).Respond(ctx, req)
		got, err := rp.Respond(ctx, req)
		if err != nil || got.Content != want.Content {
			t.Errorf("replay of %+v = %q, %v; want %q", req, got.Content, err, want.Content)
		}
	}
	if _, err := rp.Respond(ctx, llm.Request{Role: llm.Reviewer, Call: 2, Discovery: true}); !errors.Is(err, llm.ErrNoResponse) || !strings.Contains(err.Error(), "discovery-002.md") {
		t.Errorf("a missing discovery answer: %v, want ErrNoResponse naming discovery-002.md", err)
	}
}
