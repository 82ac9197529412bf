package docs

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// root is the repository, from this package's folder.
const root = "../.."

// marker precedes a command block the test runs.
const marker = "<!-- doc-test -->"

// block is a fenced block of a markdown file.
type block struct {
	file   string
	line   int // of the opening fence
	info   string
	marked bool
	body   string
}

// docFiles are the user-facing documents.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, files...)
}

// blocks returns the fenced blocks of a markdown file.
func blocks(t *testing.T, path string) []block {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	prev := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &block{file: filepath.Base(path), line: n, info: strings.TrimSpace(strings.TrimPrefix(line, "```")), marked: strings.TrimSpace(prev) == marker}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body += line + "\n"
		}
		prev = line
	}
	if cur != nil {
		t.Fatalf("%s: the block opened at line %d is never closed", path, cur.line)
	}
	return out
}

// readmeTestCommand is the README's test command: the line of its Set up
// block that runs internal/testrun, without its comment.
func readmeTestCommand(t *testing.T) string {
	t.Helper()
	for _, b := range blocks(t, filepath.Join(root, "README.md")) {
		for _, l := range strings.Split(b.body, "\n") {
			if strings.Contains(l, "./internal/testrun") {
				cmd, _, _ := strings.Cut(l, "#")
				return strings.TrimSpace(cmd)
			}
		}
	}
	t.Fatal("the README has no test command (go run ./internal/testrun …)")
	return ""
}

// CI runs exactly the README's test command, and the README says it is
// go test underneath.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	cmd := readmeTestCommand(t)
	if !strings.Contains(cmd, "-race") {
		t.Errorf("the README's test command %q lost -race", cmd)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(string(ci), "\n") {
		found = found || strings.TrimSpace(l) == cmd
	}
	if !found {
		t.Errorf(".ci/run has no line that is exactly the README's test command %q", cmd)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go test -race", "-count=1"} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("the README does not mention %q with its test command", want)
		}
	}
}

// The README shows examples/readme/main.go whole.
func TestReadmeGoProgramIsTheExample(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(root, "examples", "readme", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks(t, filepath.Join(root, "README.md")) {
		if b.info == "go" {
			if b.body != string(want) {
				t.Errorf("README.md line %d: the Go program differs from examples/readme/main.go; paste the file whole", b.line)
			}
			return
		}
	}
	t.Error("the README shows no Go program")
}

var (
	benchCmd = regexp.MustCompile(`go test .*-bench[ =]('[^']*'|"[^"]*"|\S+)`)
	benchFn  = regexp.MustCompile(`(?m)^func (Benchmark\w*)\(`)
)

// Every benchmark command of the docs names benchmarks its packages have:
// a command that runs nothing reports nothing, silently.
func TestBenchmarkCommandsRunSomething(t *testing.T) {
	n := 0
	for _, path := range docFiles(t) {
		for _, b := range blocks(t, path) {
			for _, line := range strings.Split(b.body, "\n") {
				m := benchCmd.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				n++
				pattern := strings.Trim(m[1], `'"`)
				var pkgs []string
				for _, f := range strings.Fields(line[strings.Index(line, m[0])+len(m[0]):]) {
					if strings.HasPrefix(f, ".") {
						pkgs = append(pkgs, f)
					}
				}
				if len(pkgs) == 0 {
					pkgs = []string{"."}
				}
				var names []string
				for _, p := range pkgs {
					names = append(names, benchmarks(t, strings.TrimSuffix(p, "/..."), strings.HasSuffix(p, "/..."))...)
				}
				for _, alt := range strings.Split(pattern, "|") {
					top, _, _ := strings.Cut(alt, "/")
					re, err := regexp.Compile(top)
					if err != nil {
						t.Errorf("%s line %d: -bench %q: %v", b.file, b.line, pattern, err)
						continue
					}
					ok := false
					for _, name := range names {
						ok = ok || re.MatchString(name)
					}
					if !ok {
						t.Errorf("%s (block at line %d): %q matches no benchmark in %v", b.file, b.line, alt, pkgs)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Error("no benchmark command found in the docs; is the pattern still right?")
	}
}

// benchmarks lists the Benchmark functions of the package in dir
// (relative to the repository), and below it when all is set.
func benchmarks(t *testing.T, dir string, all bool) []string {
	t.Helper()
	var names []string
	walk := func(p string) {
		files, _ := filepath.Glob(filepath.Join(p, "*_test.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range benchFn.FindAllSubmatch(b, -1) {
				names = append(names, string(m[1]))
			}
		}
	}
	base := filepath.Join(root, dir)
	if !all {
		walk(base)
		return names
	}
	_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			walk(p)
		}
		return nil
	})
	return names
}

// logLine is a log record on stderr: on the normal path there is none.
var logLine = regexp.MustCompile(`(?m)^(level=|time=\S+ level=)`)

// The marked command blocks run as written and log nothing on stderr.
func TestMarkedCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs refine")
	}
	var marked []block
	for _, path := range docFiles(t) {
		for _, b := range blocks(t, path) {
			if b.marked {
				marked = append(marked, b)
			}
		}
	}
	if len(marked) == 0 {
		t.Fatal("no command block is marked " + marker)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "refine"), "./cmd/refine")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/refine: %v\n%s", err, out)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	testCmd := readmeTestCommand(t)
	for _, b := range marked {
		t.Run(strings.TrimSuffix(b.file, ".md")+"-"+strconv.Itoa(b.line), func(t *testing.T) {
			work := t.TempDir()
			linkRepo(t, abs, work)
			var script strings.Builder
			script.WriteString("set -e\n")
			for _, l := range strings.Split(b.body, "\n") {
				if strings.TrimSpace(l) == "" || strings.Contains(l, testCmd) {
					continue // the test command runs this test
				}
				script.WriteString(strings.ReplaceAll(l, "go run ./cmd/refine", "refine") + "\n")
			}
			sh := exec.Command("sh", "-c", script.String())
			sh.Dir = work
			sh.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+t.TempDir(),
				"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "REFINE_SERVE_TOKEN=")
			var stdout, stderr bytes.Buffer
			sh.Stdout, sh.Stderr = &stdout, &stderr
			if err := sh.Run(); err != nil {
				t.Fatalf("%s line %d: %v\n--- script\n%s--- stdout\n%s--- stderr\n%s", b.file, b.line, err, script.String(), tail(stdout.String()), stderr.String())
			}
			if m := logLine.FindString(stderr.String()); m != "" {
				t.Errorf("%s line %d: the commands log on stderr on the normal path:\n%s", b.file, b.line, stderr.String())
			}
		})
	}
}

// linkRepo links every top-level entry of the repository into work, so
// repository paths in the commands resolve while what they write stays in
// work.
func linkRepo(t *testing.T, repo, work string) {
	t.Helper()
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case ".git", "refine-demo", "sessions":
			continue
		}
		if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}
