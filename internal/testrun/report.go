package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of go test -json (see go doc test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Output     string
}

// component is a real component a test needs, recognised by its skip
// message (see internal/pgtest, web's browser tests and
// temporal/internal/devserver): the messages say what is missing and how
// to get it.
type component struct {
	name  string
	marks []string // any of these in a skip message
}

var components = []component{
	{"PostgreSQL", []string{"store/postgres tests skipped", "no PostgreSQL server"}},
	{"Chromium", []string{"needs Chromium"}},
	{"Temporal CLI", []string{"needs the Temporal CLI"}},
}

// skipped is what the report found for one component in one package.
type skipped struct {
	pkg, component, reason string
	tests                  int
	cached                 bool
}

// report turns go test -json into go test's normal output plus the skip
// lines.
type report struct {
	w       io.Writer
	failed  bool
	out     map[string][]string // output so far, by package + "\x00" + test
	skips   map[string]*skipped // by package + component
	cached  map[string]bool     // packages whose results came from the cache
	other   int                 // skipped tests that need no real component
	order   []string            // skip keys in the order found
	pkgSeen map[string]bool
}

func newReport(w io.Writer) *report {
	return &report{w: w, out: map[string][]string{}, skips: map[string]*skipped{}, cached: map[string]bool{}, pkgSeen: map[string]bool{}}
}

// read consumes the event stream; a line that is not an event (go test
// prints some, e.g. when a test binary writes straight to stdout) is
// printed as it is.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(r.w, "%s\n", line)
			continue
		}
		r.event(e)
	}
	return sc.Err()
}

func (r *report) event(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "build-output":
		fmt.Fprint(r.w, e.Output)
	case "build-fail":
		r.failed = true
	case "output":
		if e.Test == "" && strings.Contains(e.Output, "(cached)") {
			r.cached[e.Package] = true
		}
		r.out[key] = append(r.out[key], e.Output)
	case "fail":
		r.failed = true
		r.print(key, e.Test == "")
		delete(r.out, key)
		if e.Test == "" {
			r.packageDone(e.Package)
		}
	case "skip":
		if e.Test != "" {
			r.skip(e.Package, r.out[key])
		} else {
			r.print(key, false)
		}
		delete(r.out, key)
		if e.Test == "" {
			r.packageDone(e.Package)
		}
	case "pass":
		if e.Test == "" {
			r.print(key, false)
			r.packageDone(e.Package)
		}
		delete(r.out, key)
	}
}

// print writes a test's output without the progress lines go test's
// non-verbose output leaves out; for a package (all false) only its
// result line ("ok", "?", "FAIL").
func (r *report) print(key string, all bool) {
	test := key[strings.IndexByte(key, 0)+1:]
	for _, line := range r.out[key] {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "=== RUN"), strings.HasPrefix(trimmed, "=== PAUSE"), strings.HasPrefix(trimmed, "=== CONT"),
			strings.HasPrefix(trimmed, "=== NAME"), strings.HasPrefix(trimmed, "--- PASS"), strings.HasPrefix(trimmed, "--- SKIP"):
			continue
		case test == "" && !all && !strings.HasPrefix(line, "ok ") && !strings.HasPrefix(line, "?") && !strings.HasPrefix(line, "FAIL"):
			continue
		case test == "" && trimmed == "PASS":
			continue
		}
		fmt.Fprint(r.w, line)
	}
}

// packageDone drops what is left of a finished package's output (tests
// that passed).
func (r *report) packageDone(pkg string) {
	r.pkgSeen[pkg] = true
	for k := range r.out {
		if strings.HasPrefix(k, pkg+"\x00") {
			delete(r.out, k)
		}
	}
}

// skip files a skipped test under its component, from the message it
// logged.
func (r *report) skip(pkg string, output []string) {
	msg := skipMessage(output)
	for _, c := range components {
		for _, m := range c.marks {
			if !strings.Contains(msg, m) {
				continue
			}
			k := pkg + "\x00" + c.name
			s := r.skips[k]
			if s == nil {
				s = &skipped{pkg: pkg, component: c.name, reason: msg}
				r.skips[k] = s
				r.order = append(r.order, k)
			}
			s.tests++
			return
		}
	}
	r.other++
}

// skipMessage is the text a skipped test logged, without file:line
// prefixes and go test's own lines.
func skipMessage(output []string) string {
	var parts []string
	for _, line := range output {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:]
		}
		parts = append(parts, strings.TrimPrefix(t, "skipped: "))
	}
	return strings.Join(parts, " ")
}

// summary prints one line per skipped component and package, after the
// results.
func (r *report) summary() {
	if len(r.order) == 0 {
		return
	}
	sort.SliceStable(r.order, func(i, j int) bool { return r.order[i] < r.order[j] })
	fmt.Fprintf(r.w, "\nSkipped, a real component missing (these tests did not run):\n")
	anyCached := false
	for _, k := range r.order {
		s := r.skips[k]
		tests := "1 test"
		if s.tests != 1 {
			tests = fmt.Sprintf("%d tests", s.tests)
		}
		fmt.Fprintf(r.w, "  SKIP %s (%s, %s): %s\n", s.pkg, s.component, tests, s.reason)
		anyCached = anyCached || r.cached[s.pkg]
	}
	if anyCached {
		fmt.Fprintf(r.w, "Some of these results are cached: after installing a component, run again with -count=1.\n")
	}
}
