package refine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// Scenario tests of the engine, data-driven in the style of etcd raft's
// interaction tests: each testdata/scenarios/*.txt file is a script of
// commands run in order against one session on one in-memory Store.
//
//	gaps GAP-API-001:HIGH GAP-API-002:MEDIUM the session's gaps (before the first run)
//	engineer <<EOF … EOF                    queue an Engineer response
//	reviewer <<EOF … EOF                    queue a Reviewer response
//	answer KEY[:text]                       queue an answer; none queued defers
//	respond QUESTION-ID KEY[:text]          Session.Answer for a pending question
//	run | step                              Session.Run or Session.Step
//	reopen                                  a new Session over the same Store (refine.Open)
//	prompt ROLE N <<EOF … EOF               each line must appear in ROLE's N-th prompt (1-based)
//	expect <<EOF … EOF                      the state, rendered by renderScenario
//
// In a response, lines starting with @ expand to refinetest's builders:
//
//	@engineer-output GAP… [+NEW-GAP:SEV…]   EngineerOutput (with new gaps)
//	@revision GAP ISSUE                     Revision
//	@disagree ISSUE concern…                Disagree
//	@review ROUND GAP…                      ReviewerOutput, with the @issue lines after it
//	@issue SEV GAP summary…                 one issue of the @review above
//
// Lines starting with # are comments. Run with -rewrite (or
// REFINE_REWRITE=1) to rewrite the expect blocks from what the engine does.
//
// The -rewrite flag is datadriven's (core_script_test.go imports it, and
// one test binary cannot define the flag twice): it rewrites both.
func rewriting() bool {
	f := flag.Lookup("rewrite")
	return os.Getenv("REFINE_REWRITE") == "1" || (f != nil && f.Value.String() == "true")
}

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata/scenarios (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScenario(t, f) })
	}
}

// scenario is one script's session and what its commands queued.
type scenario struct {
	t        *testing.T
	cfg      refine.Config
	s        *refine.Session
	eng, rev *queueRole
	mu       sync.Mutex
	answers  []refine.Answer
	asked    []string // question IDs asked since the last expect
	last     string   // what the last run/step returned
}

// queueRole answers each call with the next queued response and records
// the prompts.
type queueRole struct {
	mu      sync.Mutex
	queue   []string
	prompts []string
}

func (r *queueRole) Respond(_ context.Context, req refine.Request) (refine.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prompts = append(r.prompts, req.Messages[len(req.Messages)-1].Content)
	if len(r.queue) == 0 {
		return refine.Response{}, fmt.Errorf("scenario: no %s response queued for round %d attempt %d", req.Role, req.Round, req.Attempt)
	}
	out := r.queue[0]
	r.queue = r.queue[1:]
	return refine.Response{Content: out, Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 50}}, nil
}

func (sc *scenario) Ask(_ context.Context, q refine.Question) (refine.Answer, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.asked = append(sc.asked, q.ID)
	if len(sc.answers) == 0 {
		return refine.Answer{}, refine.ErrDeferred
	}
	a := sc.answers[0]
	sc.answers = sc.answers[1:]
	return a, nil
}

func runScenario(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	sc := &scenario{t: t, eng: &queueRole{}, rev: &queueRole{}}
	sc.cfg = refinetest.Config(sc.eng, sc.rev, sc)
	var out []string // the file, with expect blocks rewritten
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		out = append(out, lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, arg, _ := strings.Cut(line, " ")
		var body []string
		if strings.HasSuffix(line, "<<EOF") {
			arg = strings.TrimSpace(strings.TrimSuffix(arg, "<<EOF"))
			end := i + 1
			for end < len(lines) && strings.TrimSpace(lines[end]) != "EOF" {
				end++
			}
			if end == len(lines) {
				t.Fatalf("%s:%d: no EOF", file, i+1)
			}
			body, i = lines[i+1:end], end
			if cmd != "expect" {
				out = append(out, body...)
			}
		}
		where := fmt.Sprintf("%s:%d", file, i+1)
		switch cmd {
		case "expect":
			got := sc.render()
			if rewriting() {
				body = strings.Split(got, "\n")
			} else if diff := cmp.Diff(body, strings.Split(got, "\n")); diff != "" {
				t.Errorf("%s: state (-want +got):\n%s", where, diff)
			}
			out = append(out, body...)
		default:
			sc.do(where, cmd, arg, body)
		}
		if strings.HasSuffix(line, "<<EOF") {
			out = append(out, "EOF")
		}
	}
	if rewriting() {
		if err := os.WriteFile(file, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (sc *scenario) do(where, cmd, arg string, body []string) {
	t, ctx := sc.t, context.Background()
	switch cmd {
	case "gaps":
		sc.cfg.Gaps = nil
		for _, f := range strings.Fields(arg) {
			id, sev, _ := strings.Cut(f, ":")
			level, err := gap.ParseSeverity(sev)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			sc.cfg.Gaps = append(sc.cfg.Gaps, gap.Gap{ID: gap.ID(id), Title: "gap " + id, Severity: level})
		}
	case "engineer", "reviewer":
		r := map[string]*queueRole{"engineer": sc.eng, "reviewer": sc.rev}[cmd]
		r.queue = append(r.queue, expand(t, where, body))
	case "answer":
		key, text, _ := strings.Cut(arg, ":")
		sc.answers = append(sc.answers, refine.Answer{Key: strings.TrimSpace(key), Text: strings.TrimSpace(text)})
	case "respond":
		id, rest, _ := strings.Cut(arg, " ")
		key, text, _ := strings.Cut(rest, ":")
		if err := sc.session(where).Answer(ctx, id, refine.Answer{Key: strings.TrimSpace(key), Text: strings.TrimSpace(text)}); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
	case "run":
		o, err := sc.session(where).Run(ctx)
		sc.last = fmt.Sprintf("run: %s round %d%s", o.Status, o.Round, errText(err))
	case "step":
		r, err := sc.session(where).Step(ctx)
		sc.last = fmt.Sprintf("step: round %d %s engineer %q reviewer %q%s", r.Round, r.Outcome, r.Engineer, r.Reviewer, errText(err))
	case "reopen":
		s, err := refine.Open(ctx, sc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		sc.s = s
	case "prompt":
		role, n, _ := strings.Cut(arg, " ")
		k, _ := strconv.Atoi(n)
		r := map[string]*queueRole{"engineer": sc.eng, "reviewer": sc.rev}[role]
		if r == nil || k < 1 || k > len(r.prompts) {
			t.Fatalf("%s: no prompt %q (%s has %d)", where, arg, role, len(r.prompts))
		}
		for _, want := range body {
			if !strings.Contains(r.prompts[k-1], strings.TrimSpace(want)) {
				t.Errorf("%s: %s prompt %d lacks %q:\n%s", where, role, k, want, r.prompts[k-1])
			}
		}
	default:
		t.Fatalf("%s: unknown command %q", where, cmd)
	}
}

func (sc *scenario) session(where string) *refine.Session {
	if sc.s == nil {
		s, err := refine.New(context.Background(), sc.cfg)
		if err != nil {
			sc.t.Fatalf("%s: %v", where, err)
		}
		sc.s = s
	}
	return sc.s
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " error: " + err.Error()
}

// render is the compact state an expect block compares: the last run or
// step, the questions asked since the last expect, then the stored status.
func (sc *scenario) render() string {
	st, err := refine.Inspect(context.Background(), sc.cfg.Store)
	if err != nil && !errors.Is(err, refine.ErrNoSession) {
		sc.t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", sc.last)
	fmt.Fprintf(&b, "asked: %s\n", dashIfEmpty(strings.Join(sc.asked, " ")))
	sc.asked = nil
	fmt.Fprintf(&b, "status: %s round %d, calls engineer %d reviewer %d\n", st.Outcome, st.Round, len(sc.eng.prompts), len(sc.rev.prompts))
	for _, g := range st.Gaps {
		fmt.Fprintf(&b, "gap %s %s %s\n", g.ID, g.Severity, g.State)
	}
	for _, q := range st.Pending {
		fmt.Fprintf(&b, "pending %s\n", q.ID)
	}
	for _, d := range st.Decisions {
		fmt.Fprintf(&b, "decision %s %s %s\n", d.ID, dashIfEmpty(d.Issue), d.Option)
	}
	for _, v := range st.Validation {
		if v.Result == "FAIL" {
			fmt.Fprintf(&b, "fail round %d %s attempt %d %s: %s\n", v.Round, v.Role, v.Attempt, v.Tier, v.Message)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// expand turns a response body into the role's output, expanding @ lines.
func expand(t *testing.T, where string, body []string) string {
	var b strings.Builder
	type pendingReview struct {
		round  int
		gaps   []gap.ID
		issues []refinetest.Issue
	}
	var review *pendingReview
	for _, line := range body {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "@") {
			b.WriteString(line + "\n")
			continue
		}
		switch {
		case f[0] == "@engineer-output":
			var gs []gap.ID
			var news []string
			for _, x := range f[1:] {
				if id, ok := strings.CutPrefix(x, "+"); ok {
					id, sev, _ := strings.Cut(id, ":")
					news = append(news, fmt.Sprintf("- %s (%s): new gap %s\n", id, sev, id))
					continue
				}
				gs = append(gs, gap.ID(x))
			}
			out := refinetest.EngineerOutput(gs...)
			if len(news) > 0 {
				i := strings.LastIndex(out, "- None\n")
				out = out[:i] + strings.Join(news, "") + out[i+len("- None\n"):]
			}
			b.WriteString(out)
		case f[0] == "@revision" && len(f) == 3:
			b.WriteString(refinetest.Revision(gap.ID(f[1]), f[2], ""))
		case f[0] == "@disagree" && len(f) >= 3:
			b.WriteString("\n" + refinetest.Disagree(f[1], strings.Join(f[2:], " "), ""))
		case f[0] == "@review" && len(f) >= 3:
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("%s: %s: %v", where, line, err)
			}
			review = &pendingReview{round: n}
			for _, id := range f[2:] {
				review.gaps = append(review.gaps, gap.ID(id))
			}
		case f[0] == "@issue" && len(f) >= 4 && review != nil:
			sev, err := gap.ParseSeverity(f[1])
			if err != nil {
				t.Fatalf("%s: %s: %v", where, line, err)
			}
			review.issues = append(review.issues, refinetest.Issue{Severity: sev, Gap: gap.ID(f[2]), Summary: strings.Join(f[3:], " ")})
		default:
			t.Fatalf("%s: cannot expand %q", where, line)
		}
	}
	if review != nil {
		b.WriteString(refinetest.ReviewerOutput(review.round, review.gaps, review.issues...))
	}
	return b.String()
}
