package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/replay"
	storefs "github.com/refine-spec/refine/store/fs"
)

// demoFiles is the bundled session: a small Orders API spec with five gaps,
// the recorded role outputs, and the answers a user gives.
//
//go:embed demo/spec.md demo/gaps.md demo/replay/*.md
var demoFiles embed.FS

// demoAnswers are the scripted user's answers, by question kind and round.
// Questions not listed take their documented default, and the demo says so.
var demoAnswers = map[string]refine.Answer{
	"disagree_rate/2":     {Key: "1"},
	"conflict/2":          {Key: "A", Text: "Integrators sync orders; correctness beats page jumping."},
	"implicit/3":          {Key: "1", Text: "Answer the rate-limit header concern."},
	"divergence/3":        {Key: "rollback", Text: "Roll back to round 2: sign cursors and answer ISSUE-R2-001 this time."},
	"early_termination/3": {Key: "continue"},
}

func cmdDemo(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine demo", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	dir := fl.String("dir", "", "the session folder, kept (default: ./"+demoDir+", or a new temporary folder when that exists)")
	store := storeFlag(fl, "", "run the demo as a new session in this store instead of a folder")
	quiet := fl.Bool("quiet", false, "no progress lines on stderr")
	discover := fl.Bool("discover", false, "start from the draft alone: a recorded discovery lists its gaps, the list is accepted, then the same rounds play")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *store != "" && *dir != "" {
		fmt.Fprintln(c.stderr, "refine demo: use --dir or --store, not both")
		return exitUsage
	}
	taken := false
	if *dir == "" && *store == "" {
		d, t, err := defaultDemoDir()
		if err != nil {
			fmt.Fprintf(c.stderr, "refine demo: %v; pick a folder with --dir\n", err)
			return exitUsage
		}
		*dir, taken = d, t
	} else if _, err := os.Stat(filepath.Join(*dir, "state.json")); err == nil {
		fmt.Fprintf(c.stderr, "refine demo: %s already holds a session; pick a new --dir\n", *dir)
		return exitUsage
	}
	spec, _ := demoFiles.ReadFile("demo/spec.md")
	gapsData, _ := demoFiles.ReadFile("demo/gaps.md")
	gaps, err := parseGapsFile("demo/gaps.md", gapsData)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine demo: %v\n", err)
		return exitFailed
	}
	recorded, err := fs.Sub(demoFiles, "demo/replay")
	if err != nil {
		fmt.Fprintf(c.stderr, "refine demo: %v\n", err)
		return exitFailed
	}
	var st sessionStore
	loc := sessionLoc{dir: *dir}
	if *store != "" {
		st, loc, err = c.openLoc(ctx, "", *store, "", openCreate)
		if err == nil {
			*dir = loc.store + " session " + loc.id
		}
	} else {
		st, err = storefs.Open(*dir)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine demo: %v\n", err)
		return exitUsage
	}
	defer st.Close()

	if *discover {
		fmt.Fprintln(c.stdout, "refine demo: refining a small Orders API draft, starting from the draft alone: the Reviewer discovers its gaps (recorded), then recorded Engineer and Reviewer outputs refine them.")
	} else {
		fmt.Fprintln(c.stdout, "refine demo: refining a small Orders API spec (5 gaps) with recorded Engineer and Reviewer outputs.")
	}
	switch {
	case loc.store != "":
		fmt.Fprintf(c.stdout, "Session: %s in %s\n", loc.id, loc.store)
	case taken:
		// Say why the session is not where the last one was (#40).
		fmt.Fprintf(c.stdout, "./%s exists (an earlier demo's session, or another folder); this one goes to a new folder.\nSession folder: %s\n", demoDir, *dir)
	default:
		fmt.Fprintf(c.stdout, "Session folder: %s\n", *dir)
	}
	cfg := refine.DefaultConfig()
	cfg.Store = st
	// The roles are recorded like run --llm replay's (status shows them);
	// the recording is built in, so no folder is named (#40).
	cfg.Backend = refine.BackendInfo{Kind: "replay"}
	r := replay.New(recorded, replay.WithLabel("demo"))
	cfg.Engineer, cfg.Reviewer = r, r
	cfg.Asker = &demoAsker{w: c.stdout}
	cfg.Spec, cfg.Gaps = string(spec), gaps
	if *discover {
		cfg.Gaps = nil // discovery lists them (demo/replay/discovery-001.md)
	}
	cfg.GapsPerRound = 2
	if !*quiet {
		cfg.Observer = newProgress(c.stderr, c.isTerminal)
	}
	s, err := refine.New(ctx, cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine demo: %v\n", err)
		return exitFailed
	}
	code := c.drive(ctx, s, st, loc)
	if code != exitOK {
		return code
	}
	where := "final_spec.md of " + *dir // a store's session: "STORE session ID"
	if loc.dir != "" {
		where = filepath.Join(*dir, "final_spec.md")
		if abs, err := filepath.Abs(where); err == nil {
			where = abs
		}
	}
	c.printSpecHead(ctx, st, where)
	if loc.dir == "" {
		fmt.Fprintf(c.stdout, "\nThe session is in %s; write it out as a folder with: refine export %s --dir DIR\n", loc.store, loc.flags())
		return code
	}
	fmt.Fprintf(c.stdout, "\nWhat to open next, in %s (kept):\n", *dir)
	var first [][2]string
	if *discover {
		first = [][2]string{
			{"discovery/prompts/reviewer-1.md", "the discovery prompt: the draft, its markers, the format"},
			{"discovery/gaps.md", "the gap list discovery found and you accepted"},
		}
	}
	for _, f := range append(first, [][2]string{
		{"final_spec.md", "the refined spec (v1.0): every resolution merged, with its Resolution Log"},
		{"final/prompts/engineer-1.md", "the integration prompt: source spec, resolutions, decisions"},
		{"final_summary.md", "outcome, gap summary and known limitations"},
		{"status.md", "gaps, convergence, validation log, example log, conflicts, rollback history"},
		{"decisions.md", "every decision, including the conflict resolution"},
		{"round_003_rolled_back_1.tar.gz", "the rolled-back round, kept for analysis"},
		{"round_001/prompts/engineer-2.md", "the retry prompt with its attached example"},
	}...) {
		fmt.Fprintf(c.stdout, "  %-32s %s\n", f[0], f[1])
	}
	return code
}

// demoDir is the demo's session folder when neither --dir nor --store is
// given, relative to the working folder.
const demoDir = "refine-demo"

// defaultDemoDir is ./refine-demo, or a new temporary folder when that
// exists (a folder the demo made before, or anything else; taken says
// so): the demo never writes into a folder it did not make.
func defaultDemoDir() (dir string, taken bool, err error) {
	switch err := os.Mkdir(demoDir, 0o700); {
	case err == nil:
		return demoDir, false, nil
	case !errors.Is(err, fs.ErrExist):
		return "", false, err
	}
	dir, err = os.MkdirTemp("", demoDir+"-")
	return dir, true, err
}

// demoSpecLines is how many lines of the final spec the demo prints.
const demoSpecLines = 12

// printSpecHead prints where the final spec is (where) and its first
// lines.
func (c *cli) printSpecHead(ctx context.Context, st sessionStore, where string) {
	spec, err := st.Get(ctx, "final_spec.md")
	if err != nil {
		return
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(spec)), "\n")
	more := ""
	if len(lines) > demoSpecLines {
		more = fmt.Sprintf("  … (%d more lines)\n", len(lines)-demoSpecLines)
		lines = lines[:demoSpecLines]
	}
	fmt.Fprintf(c.stdout, "\nThe final spec, %s, begins:\n\n", safeLine(where))
	for _, l := range lines {
		fmt.Fprintln(c.stdout, strings.TrimRight("  "+safeLine(strings.TrimRight(l, "\n")), " "))
	}
	fmt.Fprint(c.stdout, more)
}

// demoAsker answers from demoAnswers and prints each exchange so a reader
// sees the interaction.
type demoAsker struct{ w io.Writer }

func (a *demoAsker) Ask(ctx context.Context, q refine.Question) (refine.Answer, error) {
	printQuestion(a.w, q)
	ans, ok := demoAnswers[fmt.Sprintf("%s/%d", q.Kind, q.Round)]
	how := "scripted answer"
	if !ok {
		var err error
		if ans, err = (refine.DefaultAsker{}).Ask(ctx, q); err != nil {
			return ans, err
		}
		how = "documented default"
	}
	fmt.Fprintf(a.w, "  → %s: %s\n", how, strings.TrimSpace(formatAnswer(ans)))
	return ans, nil
}
