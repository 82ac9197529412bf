package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm/record"
	"github.com/refine-spec/refine/rollback"
)

// sessionFlags are the flags run and resume share.
type sessionFlags struct {
	// locFlags are --dir, or --store with --session (storeurl.go).
	locFlags
	llm           string
	model         string
	engineerModel string
	reviewerModel string
	// engineer and reviewer are --engineer/--reviewer PROVIDER:MODEL, with
	// their own endpoints (providers.go).
	engineer, reviewer               string
	engineerBaseURL, reviewerBaseURL string
	baseURL                          string
	replayDir                        string
	recordDir                        string
	answers                          string
	auto                             bool
	maxRounds                        int
	parallel                         int
	timeout                          time.Duration
	quiet                            bool
	retries                          int
	backoff                          time.Duration
	rollbackMode                     string
	noIntegrate                      bool
	// otlpEndpoint and otlpContent configure telemetry (telemetry.go);
	// telemetry is what sessionConfig set up, closed when the command ends.
	otlpEndpoint string
	otlpContent  bool
	telemetry    *telemetry
	// The spec's other configurable settings (#27), stored with the
	// session; 0 or "" on resume: unchanged.
	gapsPerRound      int
	rollbackLimit     int
	analysisThreshold int
	backupRetention   int
	coldDir           string
	// maxTokens and maxTokensCap bound each answer and the raised bound
	// of a retry after an answer the token limit cut (#38).
	maxTokens    int
	maxTokensCap int
	cold         *lazyStore // the cold store sessionConfig set up; closed when the command ends
}

func (f *sessionFlags) register(fl *flag.FlagSet, run bool) {
	f.locFlags.register(fl, "session folder (required unless --store)", "session ID in --store (run: default a new session, whose ID it prints)")
	fl.StringVar(&f.llm, "llm", "", "backend of both roles: openai, anthropic, ollama or replay (run: required unless --engineer and --reviewer; resume: default replay when --replay is given)")
	fl.StringVar(&f.model, "model", "", "model name for both roles")
	fl.StringVar(&f.engineerModel, "engineer-model", "", "model for the Engineer (overrides --model)")
	fl.StringVar(&f.reviewerModel, "reviewer-model", "", "model for the Reviewer (overrides --model)")
	fl.StringVar(&f.baseURL, "base-url", "", "backend URL (OpenAI-compatible /v1 endpoint or Ollama server)")
	f.registerProviders(fl)
	fl.StringVar(&f.replayDir, "replay", "", "folder of engineer-NNN.md / reviewer-NNN.md responses (--llm replay)")
	fl.StringVar(&f.recordDir, "record", "", "also write every response to this folder in the replay layout")
	fl.StringVar(&f.answers, "answers", "", "file of answers, one per line: KEY or KEY: text")
	fl.BoolVar(&f.auto, "auto", false, "answer every question with its documented default")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "timeout of one LLM call")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	fl.IntVar(&f.retries, "transport-retries", 5, "retries of a call that failed with a rate limit, timeout or server error")
	fl.DurationVar(&f.backoff, "backoff-base", time.Second, "first backoff ceiling between transport retries (doubles each retry, at most 60s)")
	fl.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", "send traces and metrics over OTLP/HTTP to this collector URL (http://127.0.0.1:4318); none when unset")
	fl.BoolVar(&f.otlpContent, "otlp-include-content", false, "with --otlp-endpoint, also record prompts, responses and answers in spans (they may be confidential)")
	fl.StringVar(&f.rollbackMode, "rollback-mode", "", "interactive, auto-retry or strict: what a rollback asks (stored with the session; default interactive)")
	fl.BoolVar(&f.noIntegrate, "no-integrate", false, "keep the appendix form of final_spec.md: no integration step writing the refined spec when the session ends (stored with the session; resume --no-integrate=false turns it back on)")
	def := refine.DefaultConfig()
	change := "change the session's "
	if run {
		change = ""
	}
	fl.IntVar(&f.gapsPerRound, "gaps-per-round", 0, fmt.Sprintf("%show many open gaps a round takes on (default %d; stored with the session)", change, def.GapsPerRound))
	fl.IntVar(&f.rollbackLimit, "rollback-limit", 0, fmt.Sprintf("%show many rollbacks the session allows before it asks what to do (default %d; stored with the session)", change, def.RollbackLimit))
	fl.IntVar(&f.analysisThreshold, "analysis-threshold", 0, fmt.Sprintf("%srollbacks of one round before a root-cause analysis (default %d; stored with the session)", change, def.RollbackAnalysisThreshold))
	fl.IntVar(&f.backupRetention, "backup-retention", 0, fmt.Sprintf("%show many round backups are kept (default %d; stored with the session)", change, def.BackupRetention))
	fl.IntVar(&f.maxTokens, "max-tokens", 0, fmt.Sprintf("%scap of each answer in tokens (default 0: the backend's own; stored with the session)", change))
	fl.IntVar(&f.maxTokensCap, "max-tokens-cap", 0, fmt.Sprintf("%shighest answer cap a retry after an answer cut by the token limit asks for; each such retry doubles the cap (default %d; stored with the session)", change, def.MaxTokensCap))
	fl.StringVar(&f.coldDir, "cold-dir", "", "cold-storage folder offered for rollback archives when the session ends (the default answer with --auto; stored with the session)")
	if run {
		fl.IntVar(&f.maxRounds, "max-rounds", 10, "stop with MAX_ROUNDS after this many rounds (1-999)")
		fl.IntVar(&f.parallel, "parallel", 1, "draft up to N assigned gaps concurrently")
	} else {
		fl.IntVar(&f.maxRounds, "max-rounds", 0, "change the session's round limit (1-999; stored with the session)")
		fl.IntVar(&f.parallel, "parallel", 0, "change how many assigned gaps are drafted concurrently (stored with the session)")
	}
}

// backendInfo is what the session stores about its backend, so resume
// rebuilds it without the flags being given again. Never a key.
func (f *sessionFlags) backendInfo() refine.BackendInfo {
	src := f.replayDir
	if src != "" {
		if abs, err := filepath.Abs(src); err == nil {
			src = abs
		}
	}
	b := refine.BackendInfo{Kind: f.llm, EngineerModel: cmp.Or(f.engineerModel, f.model), ReviewerModel: cmp.Or(f.reviewerModel, f.model),
		BaseURL: f.baseURL, Source: src}
	f.rolesInfo(&b)
	return b
}

// fillFromSession completes the backend flags a resume did not give from
// what the session stored when it started.
func (f *sessionFlags) fillFromSession(b refine.BackendInfo) {
	if f.engineer != "" || f.reviewer != "" {
		return // roles named anew: only the flags given count
	}
	if f.llm == "" && f.replayDir != "" && b.EngineerKind == "" && b.ReviewerKind == "" {
		f.llm = "replay"
	}
	if f.llm != "" && f.llm != b.Kind {
		return // another backend: only the flags given count
	}
	f.llm = cmp.Or(f.llm, b.Kind)
	if f.model == "" {
		f.engineerModel = cmp.Or(f.engineerModel, b.EngineerModel)
		f.reviewerModel = cmp.Or(f.reviewerModel, b.ReviewerModel)
	}
	f.baseURL = cmp.Or(f.baseURL, b.BaseURL)
	f.replayDir = cmp.Or(f.replayDir, b.Source)
	f.fillRolesFromSession(b)
}

// settingsFromFlags returns set with the flags given on the command line
// applied: on resume, those are the explicit changes to the session.
func (f *sessionFlags) settingsFromFlags(fl *flag.FlagSet, set refine.Settings) (refine.Settings, error) {
	var err error
	fl.Visit(func(x *flag.Flag) {
		switch x.Name {
		case "max-rounds":
			set.MaxRounds = f.maxRounds
		case "parallel":
			set.ParallelGaps = f.parallel
		case "transport-retries":
			set.TransportRetries = f.retries
		case "backoff-base":
			set.BackoffBase = f.backoff
		case "rollback-mode":
			m, perr := rollback.ParseMode(f.rollbackMode)
			if perr != nil {
				err = fmt.Errorf("--rollback-mode %s: want %s", f.rollbackMode, rollbackModeNames)
			}
			set.RollbackMode = m
		case "no-integrate":
			set.Integrate = !f.noIntegrate
		case "llm", "model", "engineer-model", "reviewer-model", "base-url", "replay",
			"engineer", "reviewer", "engineer-base-url", "reviewer-base-url":
			set.Backend = f.backendInfo()
		case "gaps-per-round":
			set.GapsPerRound = f.gapsPerRound
		case "rollback-limit":
			set.RollbackLimit = f.rollbackLimit
		case "analysis-threshold":
			set.RollbackAnalysisThreshold = f.analysisThreshold
		case "backup-retention":
			set.BackupRetention = f.backupRetention
		case "cold-dir":
			set.ColdStorage = absPath(f.coldDir)
		case "max-tokens":
			set.MaxTokens = f.maxTokens
		case "max-tokens-cap":
			set.MaxTokensCap = f.maxTokensCap
		}
	})
	return set, err
}

func cmdRun(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine run", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	var f sessionFlags
	var specFile, gapsFile string
	var discover bool
	fl.StringVar(&specFile, "spec", "", "the spec to refine (required)")
	fl.StringVar(&gapsFile, "gaps", "", "the gap list: '- GAP-AREA-NNN (SEVERITY): title' lines (each optionally with Location: and Why: lines) or JSON; without it, the session starts by discovering the gaps and asks you to confirm them")
	fl.BoolVar(&discover, "discover", false, "with --gaps: start by discovering gaps the list does not hold, and ask you to confirm the additions")
	f.register(fl, true)
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if specFile == "" || (f.dir == "" && f.store == "") || !f.hasBackend() {
		fmt.Fprintln(c.stderr, "refine run: --spec, --dir (or --store) and --llm (or --engineer and --reviewer) are required")
		fl.Usage()
		return exitUsage
	}
	if discover && gapsFile == "" {
		fmt.Fprintln(c.stderr, "refine run: --discover proposes additions to --gaps FILE; without --gaps the session discovers its gaps anyway")
		return exitUsage
	}
	if f.answers != "" && f.auto {
		fmt.Fprintln(c.stderr, "refine run: use --answers or --auto, not both")
		return exitUsage
	}
	// Every argument is checked before anything is created: a refused run
	// leaves no folder, lock or database behind (#40).
	if err := checkFlagValues(fl); err != nil {
		fmt.Fprintf(c.stderr, "refine run: %v\n", err)
		return exitUsage
	}
	if f.store == "" {
		if err := refuseUsedDir(f.dir); err != nil {
			fmt.Fprintf(c.stderr, "refine run: %v\n", err)
			return exitUsage
		}
	}
	spec, err := readFileLimited(specFile, maxInputBytes)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine run: read spec: %v\n", safeErr(err))
		return exitUsage
	}
	var gaps []gap.Gap
	if gapsFile != "" {
		gapsData, err := readFileLimited(gapsFile, maxInputBytes)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine run: read gaps: %v\n", safeErr(err))
			return exitUsage
		}
		if gaps, err = parseGapsFile(gapsFile, gapsData); err != nil {
			fmt.Fprintf(c.stderr, "refine run: %v\n", safeErr(err))
			return exitUsage
		}
	}
	// The roles, the asker and the settings before the store: a bad
	// --llm, a missing --replay or key, an unreadable --answers file.
	cfg, code := c.sessionConfig(ctx, &f, nil)
	if code != exitOK {
		return code
	}
	telemetryOpen := true // closed here unless the store opens
	defer func() {
		if telemetryOpen {
			c.closeTelemetry(ctx, &f)
		}
	}()
	defer f.closeCold()
	cfg.Spec, cfg.Gaps, cfg.Discover = string(spec), gaps, discover
	cfg.MaxRounds, cfg.ParallelGaps = f.maxRounds, f.parallel
	if cfg.Settings, err = f.settingsFromFlags(fl, cfg.Settings); err != nil {
		fmt.Fprintf(c.stderr, "refine run: %v\n", safeErr(err))
		return exitUsage
	}
	st, loc, err := c.openLoc(ctx, f.dir, f.store, f.session, openCreate)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine run: %v\n", safeErr(err))
		return exitUsage
	}
	defer st.Close()
	cfg.Store = st
	if f.telemetry != nil {
		f.telemetry.store = st // it reports the session's gaps and rollbacks at the end
	}
	telemetryOpen = false
	defer c.closeTelemetry(ctx, &f) // before the store closes
	s, err := refine.New(ctx, cfg)
	if errors.Is(err, refine.ErrSessionExists) {
		err = fmt.Errorf("%s already holds a session: continue it with refine resume %s, or start a new one elsewhere", loc.describe(), loc.flags())
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine run: %v\n", safeErr(err))
		return exitUsage
	}
	if f.store != "" && f.session == "" {
		fmt.Fprintf(c.stdout, "Session ID: %s\n", loc.id)
	}
	if err := s.SetRollbackMode(ctx, cfg.RollbackMode); err != nil {
		fmt.Fprintf(c.stderr, "refine run: %v\n", safeErr(err))
		return exitFailed
	}
	return c.drive(ctx, s, st, loc)
}

func cmdResume(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine resume", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	var f sessionFlags
	var answer, answerGaps string
	fl.StringVar(&answer, "answer", "", "answer the first pending question: KEY or KEY:text")
	fl.StringVar(&answerGaps, "gaps", "", "with --answer edit: the gap list FILE that replaces the one discovery proposed (the answer's text)")
	f.register(fl, false)
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if answerGaps != "" {
		text, err := gapsAnswerText(answer, answerGaps)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine resume: %v\n", safeErr(err))
			return exitUsage
		}
		answer += ":" + text
	}
	if f.dir == "" && f.store == "" {
		fmt.Fprintln(c.stderr, "refine resume: --dir (or --store with --session) is required")
		return exitUsage
	}
	if err := checkFlagValues(fl); err != nil {
		fmt.Fprintf(c.stderr, "refine resume: %v\n", err)
		return exitUsage
	}
	// The store first: its log may hold the session's first commit.
	st, loc, err := c.openLoc(ctx, f.dir, f.store, f.session, openWrite)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine resume: %v\n", safeErr(err))
		return exitUsage
	}
	defer st.Close()
	// Settings live with the session: the backend it was started with,
	// unless flags name another.
	if status, err := refine.Inspect(ctx, st); err == nil {
		given := f.hasBackend() || f.replayDir != ""
		f.fillFromSession(status.Settings.Backend)
		if !given && f.llm == "replay" && f.replayDir == "" && f.engineer == "" && f.reviewer == "" {
			// A replay with no folder (the demo's built-in recording)
			// cannot be rebuilt: the session is resumed without a backend.
			f.llm = ""
		}
		if f.coldDir == "" {
			f.coldDir = status.Settings.ColdStorage
		}
	}
	if !f.hasBackend() && answer != "" {
		return c.resumeWithoutBackend(ctx, st, loc, answer)
	}
	if !f.hasBackend() {
		fmt.Fprintln(c.stderr, "refine resume: --llm (or --engineer and --reviewer, or --replay DIR) is required: the session does not say which backend it was started with")
		return exitUsage
	}
	cfg, code := c.sessionConfig(ctx, &f, st)
	if code != exitOK {
		return code
	}
	defer c.closeTelemetry(ctx, &f)
	defer f.closeCold()
	s, err := refine.Open(ctx, cfg)
	if errors.Is(err, refine.ErrNoSession) {
		err = loc.noSession()
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine resume: %v\n", safeErr(err))
		return exitUsage
	}
	// Flags given to resume change the session's settings, recorded.
	set, err := f.settingsFromFlags(fl, s.Settings())
	if err == nil {
		err = s.SetSettings(ctx, set)
	}
	if err == nil && f.rollbackMode != "" {
		err = s.SetRollbackMode(ctx, set.RollbackMode)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine resume: %v\n", safeErr(err))
		return exitUsage
	}
	if answer != "" {
		if code := c.applyAnswer(ctx, s, answer); code != exitOK {
			return code
		}
	}
	return c.drive(ctx, s, st, loc)
}

// sessionConfig builds the Config shared by run and resume: roles for the
// backend (resumed past the calls the session already made), the asker and
// progress reporting.
//
// st is nil when the store is not open yet (run opens it only once every
// flag has passed); the caller sets Config.Store.
func (c *cli) sessionConfig(ctx context.Context, f *sessionFlags, st refine.Store) (refine.Config, int) {
	cfg := refine.DefaultConfig()
	cfg.Store = st
	cfg.TransportRetries = f.retries
	if f.maxRounds > 0 {
		cfg.MaxRounds = f.maxRounds
	}
	if f.parallel > 0 {
		cfg.ParallelGaps = f.parallel
	}
	cfg.Backend = f.backendInfo()
	cfg.Integrate = !f.noIntegrate
	if f.coldDir != "" {
		f.cold = &lazyStore{dir: absPath(f.coldDir), open: c.openStore}
		cfg.ColdStore, cfg.ColdStorage = f.cold, f.cold.dir
	}
	if f.rollbackMode != "" {
		m, err := rollback.ParseMode(f.rollbackMode)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine: --rollback-mode %s: want %s\n", safeLine(f.rollbackMode), rollbackModeNames)
			return cfg, exitUsage
		}
		cfg.RollbackMode = m
	}
	if f.backoff > 0 {
		cfg.BackoffBase = f.backoff
	}
	eng, rev, err := c.roles(f, cfg.MaxOutputBytes)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine: %v\n", safeErr(err))
		return cfg, exitUsage
	}
	if f.recordDir != "" {
		e, err := record.New(eng, f.recordDir, record.WithMaxBytes(cfg.MaxOutputBytes))
		if err != nil {
			fmt.Fprintf(c.stderr, "refine: --record: %v\n", safeErr(err))
			return cfg, exitUsage
		}
		r, err := record.New(rev, f.recordDir, record.WithMaxBytes(cfg.MaxOutputBytes))
		if err != nil {
			fmt.Fprintf(c.stderr, "refine: --record: %v\n", safeErr(err))
			return cfg, exitUsage
		}
		eng, rev = e, r
	}
	// A resumed replay or recording continues after the responses the
	// session already received (counted in state, so rollbacks, which
	// archive journals, do not rewind it).
	var responses map[refine.RoleName]int
	if st == nil {
		// A new session: no responses yet.
	} else if status, err := refine.Inspect(ctx, st); err == nil {
		responses = status.Responses
	} else if !errors.Is(err, refine.ErrNoSession) {
		fmt.Fprintf(c.stderr, "refine: %v\n", safeErr(err))
		return cfg, exitFailed
	}
	for _, role := range []refine.RoleName{refine.Engineer, refine.Reviewer} {
		n := responses[role]
		for _, r := range []refine.Role{eng, rev} {
			if res, ok := r.(interface {
				Resume(refine.RoleName, int)
			}); ok {
				res.Resume(role, n)
			}
		}
	}
	cfg.Engineer, cfg.Reviewer = eng, rev
	asker, err := c.asker(f)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine: %v\n", safeErr(err))
		return cfg, exitUsage
	}
	cfg.Asker = asker
	if !f.quiet {
		cfg.Observer = newProgress(c.stderr, c.isTerminal)
	}
	if code := c.setupTelemetry(ctx, f, &cfg); code != exitOK {
		return cfg, code
	}
	return cfg, exitOK
}

// roles builds the roles the flags name, each reading an answer no
// further than maxOutput bytes (the session's Config.MaxOutputBytes).
func (c *cli) roles(f *sessionFlags, maxOutput int) (refine.Role, refine.Role, error) {
	choice, err := f.choice()
	if err != nil {
		return nil, nil, err
	}
	choice.MaxOutputBytes = maxOutput
	return choice.Roles(c.getenv)
}

func (c *cli) asker(f *sessionFlags) (refine.Asker, error) {
	switch {
	case f.auto:
		return &autoAsker{w: c.stderr}, nil
	case f.answers != "":
		b, err := readFileLimited(f.answers, maxInputBytes)
		if err != nil {
			return nil, fmt.Errorf("--answers: %w", err)
		}
		return &fileAsker{w: c.stderr, answers: parseAnswers(string(b))}, nil
	case c.isTerminal:
		return &terminalAsker{in: bufio.NewReader(c.stdin), w: c.stderr}, nil
	}
	return refine.DeferAsker{}, nil
}

// drive runs the session and reports its outcome.
func (c *cli) drive(ctx context.Context, s *refine.Session, st refine.Store, loc sessionLoc) int {
	out, err := s.Run(ctx)
	return c.report(ctx, s, loc, out, err)
}

// report prints where a session stands after a run and returns the exit
// code for it.
func (c *cli) report(ctx context.Context, s *refine.Session, loc sessionLoc, out refine.Outcome, err error) int {
	status, serr := s.Status(context.WithoutCancel(ctx))
	if serr == nil {
		printSummary(c.stdout, loc.named(status), loc)
	}
	switch {
	case err != nil && out.Status == refine.StatusPaused:
		fmt.Fprintf(c.stderr, "refine: interrupted (%v); state is saved: refine resume %s\n", safeErr(err), loc.flags())
		return exitFailed
	case err != nil:
		fmt.Fprintf(c.stderr, "refine: %v\nstate is saved; fix the cause and run: refine resume %s\n", safeErr(err), loc.flags())
		return exitFailed
	case out.Status == refine.StatusPaused:
		for _, q := range out.Pending {
			printQuestion(c.stdout, q)
		}
		fmt.Fprintf(c.stdout, "\nAnswer with: refine resume %s --answer KEY[:text]\n", loc.flags())
		return exitPaused
	case out.Status.Terminal():
		if len(out.Pending) > 0 {
			// Finished; only the archive cleanup question waits.
			for _, q := range out.Pending {
				printQuestion(c.stdout, q)
			}
			fmt.Fprintf(c.stdout, "\nThe session is finished (%s); this question waits: refine resume %s --answer KEY\n", out.Status, loc.flags())
		}
		return exitOK
	}
	return exitFailed
}

func printSummary(w io.Writer, st refine.Status, loc sessionLoc) {
	dir := loc.dir
	open := 0
	for _, g := range st.Gaps {
		if g.State.IsOpen() {
			open++
		}
	}
	fmt.Fprintf(w, "\nSession %s: %s\n", safeLine(st.SessionID), headline(st, loc.live))
	if st.Reason != "" {
		fmt.Fprintf(w, "  %s\n", safeText(st.Reason))
	}
	fmt.Fprintf(w, "  gaps: %d open, %d closed; tokens: %d prompt + %d completion in %d calls\n",
		open, len(st.Gaps)-open, st.Usage.PromptTokens, st.Usage.CompletionTokens, st.Calls)
	printRoles(w, st)
	for _, g := range st.Gaps {
		fmt.Fprintf(w, "  %-16s %-8s %-15s %s\n", g.ID, g.Severity, g.State, safeLine(g.Title))
	}
	for _, r := range st.Repairs {
		fmt.Fprintf(w, "  repaired %s: %s from the store's log (it held %s)\n", r.At.UTC().Format(time.DateTime), safeLine(r.Key), safeLine(r.Detail))
	}
	switch st.FinalSpec {
	case refine.FinalSpecIntegrated:
		fmt.Fprintln(w, "  final spec: integrated (v1.0), final_spec.md")
	case refine.FinalSpecAppendix:
		if st.FinalSpecReason != "" {
			fmt.Fprintf(w, "  final spec: appendix form, final_spec.md (%s)\n", safeText(st.FinalSpecReason))
		}
	}
	if dir != "" { // a SQL store has no folder: refine export writes one
		fmt.Fprintf(w, "  folder: %s (open status.md first)\n", dir)
	}
}

// headline says where the session stands: its outcome after its last
// round, IDLE while it is RUNNING but no run drives it (live says one
// does), and that a question waits when a finished session has one.
func headline(st refine.Status, live bool) string {
	if st.Outcome == refine.StatusRunning && !live {
		return fmt.Sprintf("IDLE after round %d (resume to continue)", st.Round)
	}
	h := fmt.Sprintf("%s after round %d", st.Outcome, st.Round)
	switch n := len(st.Pending); {
	case !st.Outcome.Terminal() || n == 0:
	case n == 1:
		h += "; a question waits for an answer"
	default:
		h += fmt.Sprintf("; %d questions wait for an answer", n)
	}
	return h
}

func cmdStatus(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine status", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	var at locFlags
	at.register(fl, "session folder (required unless --store)", "session ID in --store")
	asJSON := fl.Bool("json", false, "print the status as one JSON object (snake_case keys, every field present)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if at.missing() {
		fmt.Fprintln(c.stderr, "refine status: --dir (or --store with --session) is required")
		return exitUsage
	}
	// The store first (read-only only while a run holds it): its log may
	// hold commits, even the session's first, that opening redoes.
	st, loc, err := c.openLoc(ctx, at.dir, at.store, at.session, openRead)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine status: %v\n", safeErr(err))
		return exitUsage
	}
	defer st.Close()
	status, err := loc.inspect(ctx, st)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine status: %v\n", safeErr(err))
		return exitUsage
	}
	if *asJSON {
		if err := writeStatusJSON(c.stdout, status, loc.live); err != nil {
			fmt.Fprintf(c.stderr, "refine status: %v\n", safeErr(err))
			return exitUsage
		}
		return exitOK
	}
	printSummary(c.stdout, status, loc)
	printSettings(c.stdout, status.Settings, loc)
	if len(status.Pending) > 0 {
		fmt.Fprintln(c.stdout, "\nPending questions:")
		for _, q := range status.Pending {
			printQuestion(c.stdout, q)
		}
	}
	return exitOK
}

// gapsAnswerText is the text of `resume --answer KEY --gaps FILE`: the
// file's gap list, which must read as one; KEY names the option (edit)
// and carries no text of its own.
func gapsAnswerText(answer, file string) (string, error) {
	key, text := parseAnswerFlag(answer)
	switch {
	case key == "":
		return "", errors.New("--gaps FILE goes with --answer edit: the list replaces the one discovery proposed")
	case text != "":
		return "", fmt.Errorf("--answer %s carries its own text and --gaps names a file: give one of them", safeLine(key))
	}
	data, err := readFileLimited(file, maxInputBytes)
	if err != nil {
		return "", fmt.Errorf("--gaps: %w", err)
	}
	if _, err := parseGapsFile(file, data); err != nil {
		return "", fmt.Errorf("--gaps: %w", err)
	}
	return string(data), nil
}

// parseAnswerFlag splits --answer's "KEY" or "KEY:text".
func parseAnswerFlag(answer string) (key, text string) {
	key, text, _ = strings.Cut(answer, ":")
	return strings.TrimSpace(key), strings.TrimSpace(text)
}

// parseAnswers reads an answers file: "KEY" or "KEY: text" per line, "#"
// comments and blank lines ignored.
func parseAnswers(text string) []refine.Answer {
	var out []refine.Answer
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, rest, _ := strings.Cut(line, ":")
		out = append(out, refine.Answer{Key: strings.TrimSpace(key), Text: strings.TrimSpace(rest)})
	}
	return out
}

// fileAsker answers from an answers file in order; when the file is used
// up the question is deferred.
type fileAsker struct {
	w       io.Writer
	answers []refine.Answer
}

func (a *fileAsker) Ask(_ context.Context, q refine.Question) (refine.Answer, error) {
	printQuestion(a.w, q)
	if len(a.answers) == 0 {
		fmt.Fprintln(a.w, "  (answers file used up: deferring)")
		return refine.Answer{}, refine.ErrDeferred
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	if err := q.Check(ans); err != nil {
		return refine.Answer{}, fmt.Errorf("answers file: %w", err)
	}
	fmt.Fprintf(a.w, "  answer (from file): %s\n", safeLine(formatAnswer(ans)))
	return ans, nil
}

// autoAsker takes each question's documented default and says so.
type autoAsker struct{ w io.Writer }

// Immediate reports true: automated mode never waits for a person.
func (*autoAsker) Immediate() bool { return true }

func (a *autoAsker) Ask(ctx context.Context, q refine.Question) (refine.Answer, error) {
	printQuestion(a.w, q)
	ans, err := refine.DefaultAsker{}.Ask(ctx, q)
	if err == nil {
		fmt.Fprintf(a.w, "  answer (--auto default): %s\n", formatAnswer(ans))
	}
	return ans, err
}

// terminalAsker asks on the terminal; an empty line defers.
type terminalAsker struct {
	in *bufio.Reader
	w  io.Writer
}

func (a *terminalAsker) Ask(ctx context.Context, q refine.Question) (refine.Answer, error) {
	printQuestion(a.w, q)
	for {
		fmt.Fprintf(a.w, "Your choice (option key, optionally ': text'; empty line to pause) [%s]: ", q.Default)
		line, err := a.in.ReadString('\n')
		if err != nil && line == "" {
			return refine.Answer{}, refine.ErrDeferred
		}
		line = strings.TrimSpace(line)
		if line == "" {
			return refine.Answer{}, refine.ErrDeferred
		}
		key, text, _ := strings.Cut(line, ":")
		ans := refine.Answer{Key: q.CanonicalKey(strings.TrimSpace(key)), Text: strings.TrimSpace(text)}
		if n, err := strconv.Atoi(ans.Key); err == nil && n >= 1 && n <= len(q.Options) && !hasKey(q, ans.Key) {
			ans.Key = q.Options[n-1].Key // numbered choice for lettered options
		}
		if err := q.Check(ans); err != nil {
			fmt.Fprintf(a.w, "  %v\n", safeErr(err))
			continue
		}
		return ans, nil
	}
}

func hasKey(q refine.Question, key string) bool {
	for _, o := range q.Options {
		if o.Key == key {
			return true
		}
	}
	return false
}

func printQuestion(w io.Writer, q refine.Question) {
	fmt.Fprintf(w, "\n── Question %s ──\n%s\n\n%s\n", safeLine(q.ID), safeLine(q.Title), safeText(strings.TrimSpace(q.Body)))
	if len(q.Options) > 0 && !strings.Contains(q.Body, q.Options[0].Label) {
		// One label per option: its key, the spec's number or letter, which
		// is what an answer gives.
		for _, o := range q.Options {
			rec := ""
			if o.Recommended {
				rec = " (recommended)"
			}
			fmt.Fprintf(w, "  %s) %s%s\n", safeLine(o.Key), safeLine(o.Label), rec)
		}
	}
	if q.Default != "" {
		fmt.Fprintf(w, "  default: %s\n", safeLine(q.Default))
	}
}

func formatAnswer(a refine.Answer) string {
	if a.Text != "" {
		return a.Key + ": " + a.Text
	}
	return a.Key
}
