package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"log/slog"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/readlimit"
	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/internal/storeurl"
	"github.com/refine-spec/refine/internal/termtext"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
	refinetemporal "github.com/refine-spec/refine/temporal"
)

// conn are the flags every command takes to reach the server.
type conn struct {
	address, namespace, taskQueue string
}

func (c *conn) flags(fl *flag.FlagSet) {
	fl.StringVar(&c.address, "address", "127.0.0.1:7233", "Temporal frontend host:port")
	fl.StringVar(&c.namespace, "namespace", "default", "Temporal namespace")
	fl.StringVar(&c.taskQueue, "task-queue", refinetemporal.DefaultTaskQueue, "task queue of the refine workers")
}

func (c *conn) dial(ctx context.Context, e env) (client.Client, error) {
	cl, err := client.DialContext(ctx, client.Options{HostPort: c.address, Namespace: c.namespace, Logger: quietLogger(e.stderr)})
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s: %w; start one with `temporal server start-dev --headless --ip 127.0.0.1 --dynamic-config-value system.enableActivityEagerExecution=true` or pass --address", c.address, err)
	}
	return cl, nil
}

// quietLogger passes the SDK's warnings and errors on, not its chatter.
func quietLogger(w io.Writer) tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// parse parses a command's flags; it reports usage errors itself.
func parse(fl *flag.FlagSet, args []string, e env) (int, bool) {
	fl.SetOutput(e.stderr)
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(e.stderr, "refine-temporal %s: unexpected argument %q\n", fl.Name(), fl.Arg(0))
		return exitUsage, false
	}
	return 0, true
}

// fail reports a failed operation. A workflow's error reaches the client
// wrapped with its failure type; only its message is shown.
func fail(e env, what string, err error) int {
	msg := err.Error()
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		msg = appErr.Message()
	}
	fmt.Fprintf(e.stderr, "refine-temporal %s: %s\n", what, termtext.Escape(msg))
	return exitFail
}

func cmdWorker(ctx context.Context, args []string, e env) int {
	fl := flag.NewFlagSet("worker", flag.ContinueOnError)
	var c conn
	c.flags(fl)
	var rf roleFlags
	rf.flags(fl)
	mirror := fl.String("mirror", "", "store to mirror each session to (file:ROOT or a folder, sqlite:PATH, postgres://…); sessions are named after their workflow IDs")
	if code, ok := parse(fl, args, e); !ok {
		return code
	}
	eng, rev, err := rf.roles(e)
	if err != nil {
		fmt.Fprintf(e.stderr, "refine-temporal worker: %v\n", err)
		return exitUsage
	}
	acts := &refinetemporal.Activities{Engineer: eng, Reviewer: rev}
	if *mirror != "" {
		u, err := storeurl.Parse(*mirror)
		if err != nil {
			fmt.Fprintf(e.stderr, "refine-temporal worker: --mirror: %v\n", err)
			return exitUsage
		}
		b, err := storeurl.Open(ctx, u)
		if err != nil {
			return fail(e, "worker", err)
		}
		defer b.Close()
		acts.Mirror = b
	}
	cl, err := c.dial(ctx, e)
	if err != nil {
		return fail(e, "worker", err)
	}
	defer cl.Close()
	w := worker.New(cl, c.taskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(refinetemporal.RefineSession, workflow.RegisterOptions{Name: refinetemporal.WorkflowName})
	acts.Register(w)
	if err := w.Start(); err != nil {
		return fail(e, "worker", err)
	}
	fmt.Fprintf(e.stderr, "refine-temporal worker: %s; polling task queue %q on %s (Ctrl-C stops)\n", rf.describe(), c.taskQueue, c.address)
	if e.ready != nil {
		e.ready()
	}
	<-ctx.Done()
	w.Stop()
	return exitOK
}

func cmdStart(ctx context.Context, args []string, e env) int {
	fl := flag.NewFlagSet("start", flag.ContinueOnError)
	var c conn
	c.flags(fl)
	specFile := fl.String("spec", "", "the spec to refine (markdown)")
	gapsFile := fl.String("gaps", "", "its open gaps: lines \"- GAP-AREA-NNN (SEVERITY): title\" or a JSON array (without it the session discovers them from the spec and asks you to confirm the list)")
	id := fl.String("id", "", "the session's workflow ID (default: refine-TIMESTAMP); also its name in the mirror")
	maxRounds := fl.Int("max-rounds", 0, "stop after this many rounds (0: the default)")
	noIntegrate := fl.Bool("no-integrate", false, "keep the appendix form of final_spec.md: no integration step writing the refined spec at the session's end")
	noMirror := fl.Bool("no-mirror", false, "do not copy the session to the workers' --mirror store (status and answers still work through the workflow)")
	localCalls := fl.Bool("local-calls", false, "make the role calls local activities on the worker running the session: no task-queue round trip per call, for roles that answer within seconds (a local model, --llm replay); a worker that dies repeats up to ~8 s of completed calls")
	if code, ok := parse(fl, args, e); !ok {
		return code
	}
	if *specFile == "" {
		fmt.Fprintln(e.stderr, "refine-temporal start: --spec is required (--gaps too, unless the session is to discover its gaps from the spec)")
		return exitUsage
	}
	spec, err := readlimit.File(*specFile, readlimit.MaxInput)
	if err != nil {
		return fail(e, "start", fmt.Errorf("--spec: %w", err))
	}
	var gaps []gap.Gap
	if *gapsFile != "" { // without --gaps the session discovers them first
		gapsData, err := readlimit.File(*gapsFile, readlimit.MaxInput)
		if err != nil {
			return fail(e, "start", fmt.Errorf("--gaps: %w", err))
		}
		if gaps, err = gapsfile.Parse(*gapsFile, gapsData); err != nil {
			fmt.Fprintf(e.stderr, "refine-temporal start: %v\n", termtext.Escape(err.Error()))
			return exitUsage
		}
	}
	in := refinetemporal.SessionInput{Spec: string(spec), Gaps: gaps, Mirror: !*noMirror}
	in.Activities.Local = *localCalls
	if *maxRounds > 0 || *noIntegrate {
		set := refine.DefaultConfig().Settings
		if *maxRounds > 0 {
			set.MaxRounds = *maxRounds
		}
		set.Integrate = !*noIntegrate
		in.Settings = &set
	}
	if err := checkInput(in); err != nil {
		fmt.Fprintf(e.stderr, "refine-temporal start: %v\n", err)
		return exitUsage
	}
	if *id == "" {
		*id = "refine-" + time.Now().UTC().Format("20060102T150405Z")
	}
	if err := store.ValidSessionID(*id); err != nil {
		fmt.Fprintf(e.stderr, "refine-temporal start: --id: %v\n", err)
		return exitUsage
	}
	cl, err := c.dial(ctx, e)
	if err != nil {
		return fail(e, "start", err)
	}
	defer cl.Close()
	run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: *id, TaskQueue: c.taskQueue}, refinetemporal.WorkflowName, in)
	if err != nil {
		return fail(e, "start", err)
	}
	fmt.Fprintf(e.stdout, "started session %s (run %s)\n", run.GetID(), run.GetRunID())
	fmt.Fprintf(e.stdout, "  see it:    refine-temporal status --id %s\n", run.GetID())
	fmt.Fprintf(e.stdout, "  answer it: refine-temporal answer --id %s --key KEY [--text TEXT]\n", run.GetID())
	return exitOK
}

// checkInput checks what the workflow would check, before it starts: a
// bad gap list fails here, not in a workflow.
func checkInput(in refinetemporal.SessionInput) error {
	// The input goes to the server as JSON, which would turn an invalid
	// byte into U+FFFD: a binary draft is refused here, as New refuses it.
	if !utf8.ValidString(in.Spec) || strings.IndexByte(in.Spec, 0) >= 0 {
		return errors.New("--spec is not UTF-8 text: give the draft as text, not a binary file")
	}
	cfg := in.Config()
	cfg.Store = memory.New()
	cfg.Engineer, cfg.Reviewer = noRole{}, noRole{}
	cfg.Asker = refine.DeferAsker{}
	return cfg.Validate()
}

type noRole struct{}

func (noRole) Respond(context.Context, refine.Request) (refine.Response, error) {
	return refine.Response{}, errors.New("not called")
}

func cmdAnswer(ctx context.Context, args []string, e env) int {
	fl := flag.NewFlagSet("answer", flag.ContinueOnError)
	var c conn
	c.flags(fl)
	id := fl.String("id", "", "the session's workflow ID")
	key := fl.String("key", "", "the option chosen (refine-temporal status --id ID lists them)")
	text := fl.String("text", "", "the free text the option takes")
	question := fl.String("question", "", "the question's ID (default: the first pending question)")
	if code, ok := parse(fl, args, e); !ok {
		return code
	}
	if *id == "" || *key == "" {
		fmt.Fprintln(e.stderr, "refine-temporal answer: --id and --key are required")
		return exitUsage
	}
	cl, err := c.dial(ctx, e)
	if err != nil {
		return fail(e, "answer", err)
	}
	defer cl.Close()
	h, err := cl.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   *id,
		UpdateName:   refinetemporal.UpdateAnswer,
		Args:         []any{refinetemporal.AnswerRequest{Question: *question, Key: *key, Text: *text}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fail(e, "answer", err)
	}
	fmt.Fprintf(e.stdout, "answered %s with %s; the session goes on (refine-temporal status --id %s)\n", *id, *key, *id)
	return exitOK
}

func cmdStatus(ctx context.Context, args []string, e env) int {
	fl := flag.NewFlagSet("status", flag.ContinueOnError)
	var c conn
	c.flags(fl)
	id := fl.String("id", "", "the session's workflow ID")
	asJSON := fl.Bool("json", false, "print the status as JSON (the shape of refine status --json)")
	if code, ok := parse(fl, args, e); !ok {
		return code
	}
	if *id == "" {
		fmt.Fprintln(e.stderr, "refine-temporal status: --id is required")
		return exitUsage
	}
	cl, err := c.dial(ctx, e)
	if err != nil {
		return fail(e, "status", err)
	}
	defer cl.Close()
	v, err := cl.QueryWorkflow(ctx, *id, "", refinetemporal.QueryStatus)
	var st statusjson.Status
	if err == nil {
		err = v.Get(&st)
	}
	if err != nil {
		return fail(e, "status", err)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			return fail(e, "status", err)
		}
		return exitOK
	}
	writeStatus(e.stdout, *id, st)
	return exitOK
}

// writeStatus prints the status for a person; every LLM-written text is
// escaped for the terminal.
func writeStatus(w io.Writer, id string, st statusjson.Status) {
	fmt.Fprintf(w, "session %s: %s, round %d\n", id, st.Outcome, st.Round)
	counts := map[string]int{}
	var states []string
	for _, g := range st.Gaps {
		if counts[g.State] == 0 {
			states = append(states, g.State)
		}
		counts[g.State]++
	}
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = fmt.Sprintf("%d %s", counts[s], s)
	}
	fmt.Fprintf(w, "gaps: %s\n", strings.Join(parts, ", "))
	for _, q := range st.Pending {
		fmt.Fprintf(w, "\nquestion %s: %s\n", q.ID, termtext.Line(q.Title))
		if q.Body != "" {
			fmt.Fprintln(w, termtext.Escape(q.Body)) // the body lists the options
		} else {
			for _, o := range q.Options {
				fmt.Fprintf(w, "  %s) %s\n", o.Key, termtext.Line(o.Label))
			}
		}
		var text []string
		for _, o := range q.Options {
			if o.Text {
				text = append(text, o.Key)
			}
		}
		fmt.Fprintf(w, "answer: refine-temporal answer --id %s --key KEY [--text TEXT]", id)
		if q.Default != "" {
			fmt.Fprintf(w, " (default %s)", q.Default)
		}
		if len(text) > 0 {
			fmt.Fprintf(w, "; %s take --text", strings.Join(text, ", "))
		}
		fmt.Fprintln(w)
	}
}
