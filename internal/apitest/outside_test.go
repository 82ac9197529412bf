package apitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// A module outside the repository reaches no field or method of the
// decisions through *refine.Session: the session holds its core in an
// unexported field, and no core method is promoted. Each line of probe
// below must fail to compile, with the error naming what it reaches for.
func TestSessionHidesItsCore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: not in -short")
	}
	probes := []string{
		`s.St = nil`,
		`s.Dirty = true`,
		`_ = s.Checkpoint()`,
		`_, _ = s.RunRounds()`,
		`_ = s.Ext`,
		`_ = s.Tel`,
		`_ = s.Out`,
		`_ = s.Cfg`,
		`_ = s.core`,
		`_ = s.Engine`,
		`_, _ = s.StepOnce()`,
		`_ = s.Flush()`,
		`_, _ = s.Failed(nil)`,
		`s.ResumeFailed()`,
	}
	_, self, _, _ := runtime.Caller(0)
	repo, err := filepath.Abs(filepath.Join(filepath.Dir(self), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/host\n\ngo 1.26\n\nrequire github.com/refine-spec/refine v0.0.0\n\nreplace github.com/refine-spec/refine => " + repo + "\n"
	var b strings.Builder
	b.WriteString("package main\n\nimport \"github.com/refine-spec/refine\"\n\nfunc main() {\n\tvar s *refine.Session\n")
	for _, p := range probes {
		b.WriteString("\t" + p + "\n")
	}
	b.WriteString("}\n")
	for name, content := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": b.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-gcflags=-e", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the probe module compiled: a host reaches the core through *refine.Session")
	}
	// Every probe line (7 on, after the preamble) has its error.
	lines := map[int]bool{}
	for _, m := range regexp.MustCompile(`main\.go:(\d+):\d+: `).FindAllStringSubmatch(string(out), -1) {
		var n int
		for _, c := range m[1] {
			n = n*10 + int(c-'0')
		}
		lines[n] = true
	}
	for i, p := range probes {
		if !lines[7+i] {
			t.Errorf("%s compiles outside the repository:\n%s", p, out)
		}
	}
	if strings.Contains(string(out), "cannot find module") || strings.Contains(string(out), "missing go.sum") {
		t.Fatalf("the probe module did not build for another reason:\n%s", out)
	}
}
