package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stream encodes events as go test -json does.
func stream(t testing.TB, events ...event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func out(pkg, test, text string) event {
	return event{Action: "output", Package: pkg, Test: test, Output: text}
}

// The skip messages are the real ones (internal/pgtest, web's browser
// tests, temporal/internal/devserver): a change there that the report no
// longer recognises fails here.
const (
	pgSkip       = "store/postgres tests skipped: initdb not found; install the postgresql package or set REFINE_POSTGRES_DSN"
	browserSkip  = "browser test needs Chromium: install Debian's chromium package (apt-get install chromium) or set REFINE_CHROMIUM"
	temporalSkip = "skipped: needs the Temporal CLI (package github.com/temporalio/cli: go install github.com/temporalio/cli/cmd/temporal@v1.5.0)"
)

func TestReport(t *testing.T) {
	const pg, web, tmp, core = "example/store/postgres", "example/web", "example/temporal", "example"
	in := stream(t,
		event{Action: "start", Package: core},
		out(core, "TestOK", "=== RUN   TestOK\n"), out(core, "TestOK", "    x_test.go:1: noise\n"), out(core, "TestOK", "--- PASS: TestOK (0.00s)\n"),
		event{Action: "pass", Package: core, Test: "TestOK"},
		out(core, "TestLinear", "=== RUN   TestLinear\n"), out(core, "TestLinear", "    x_test.go:9: skipped under -race\n"),
		event{Action: "skip", Package: core, Test: "TestLinear"},
		out(core, "TestBad", "=== RUN   TestBad\n"), out(core, "TestBad", "    x_test.go:3: got 1, want 2\n"), out(core, "TestBad", "--- FAIL: TestBad (0.00s)\n"),
		event{Action: "fail", Package: core, Test: "TestBad"},
		out(core, "", "FAIL\n"), out(core, "", "FAIL\texample\t0.010s\n"),
		event{Action: "fail", Package: core},

		out(pg, "TestStore", "=== RUN   TestStore\n"), out(pg, "TestStore", "    pgtest.go:85: "+pgSkip+"\n"), out(pg, "TestStore", "--- SKIP: TestStore (0.00s)\n"),
		event{Action: "skip", Package: pg, Test: "TestStore"},
		out(pg, "TestBackend", "    pgtest.go:85: "+pgSkip+"\n"),
		event{Action: "skip", Package: pg, Test: "TestBackend"},
		out(pg, "", "PASS\n"), out(pg, "", "ok  \texample/store/postgres\t(cached)\n"),
		event{Action: "pass", Package: pg},

		out(web, "TestConsole", "    browser_test.go:33: "+browserSkip+"\n"),
		event{Action: "skip", Package: web, Test: "TestConsole"},
		out(web, "", "ok  \texample/web\t1.5s\n"),
		event{Action: "pass", Package: web},

		out(tmp, "TestDevServer", "    devserver.go:46: "+temporalSkip+"\n"),
		event{Action: "skip", Package: tmp, Test: "TestDevServer"},
		out(tmp, "", "ok  \texample/temporal\t0.5s\n"),
		event{Action: "pass", Package: tmp},
	)
	var b bytes.Buffer
	r := newReport(&b)
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.summary()
	want := `    x_test.go:3: got 1, want 2
--- FAIL: TestBad (0.00s)
FAIL
FAIL	example	0.010s
ok  	example/store/postgres	(cached)
ok  	example/web	1.5s
ok  	example/temporal	0.5s

Skipped, a real component missing (these tests did not run):
  SKIP example/store/postgres (PostgreSQL, 2 tests): ` + pgSkip + `
  SKIP example/temporal (Temporal CLI, 1 test): ` + strings.TrimPrefix(temporalSkip, "skipped: ") + `
  SKIP example/web (Chromium, 1 test): ` + browserSkip + `
Some of these results are cached: after installing a component, run again with -count=1.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if !r.failed {
		t.Error("a failed test did not fail the report")
	}
	if r.other != 1 {
		t.Errorf("other skips = %d, want 1 (the -race skip)", r.other)
	}
}

// Every component present: the report is go test's own output, nothing
// after it.
func TestReportWithoutSkipsAddsNothing(t *testing.T) {
	in := stream(t, out("p", "", "ok  \tp\t0.1s\n"), event{Action: "pass", Package: "p"},
		out("q", "", "?   \tq\t[no test files]\n"), event{Action: "skip", Package: "q"})
	var b bytes.Buffer
	r := newReport(&b)
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.summary()
	if want := "ok  \tp\t0.1s\n?   \tq\t[no test files]\n"; b.String() != want || r.failed {
		t.Errorf("report = %q (failed %v), want %q", b.String(), r.failed, want)
	}
}

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		args        []string
		flags, pkgs []string
	}{
		{[]string{"-race", "./...", "./temporal/..."}, []string{"-race"}, []string{"./...", "./temporal/..."}},
		{[]string{"-race", "-count=1", "-run", "TestX", "./web"}, []string{"-race", "-count=1", "-run", "TestX"}, []string{"./web"}},
		{[]string{"-v"}, []string{"-v"}, nil},
	}
	for _, tc := range tests {
		flags, pkgs := splitArgs(tc.args)
		if diff := cmp.Diff(tc.flags, flags); diff != "" {
			t.Errorf("%q flags (-want +got):\n%s", tc.args, diff)
		}
		if diff := cmp.Diff(tc.pkgs, pkgs); diff != "" {
			t.Errorf("%q packages (-want +got):\n%s", tc.args, diff)
		}
	}
}

// FuzzReport: any input is consumed without panicking, and lines that are
// not events are passed through.
func FuzzReport(f *testing.F) {
	f.Add(stream(f, out("p", "T", "    x.go:1: "+browserSkip+"\n"), event{Action: "skip", Package: "p", Test: "T"}))
	f.Add("not json\n{\"Action\":\"fail\"}\n")
	f.Fuzz(func(t *testing.T, in string) {
		var b bytes.Buffer
		r := newReport(&b)
		if err := r.read(strings.NewReader(in)); err != nil {
			return
		}
		r.summary()
	})
}
