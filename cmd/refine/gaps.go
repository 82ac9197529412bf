package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/markers"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/store/memory"
)

// cmdGaps implements "refine gaps --spec S [--out FILE]": discovery alone
// (DESIGN §19): the chosen backend's Reviewer lists the draft's gaps, each
// with its Location and Why, and the list is written for a person to edit
// and pass to `refine run --gaps`; nothing is stored. With --offline, the
// draft's own markers are listed instead, without a model.
func cmdGaps(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine gaps", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	specFile := fl.String("spec", "", "the draft spec to scan (required)")
	offline := fl.Bool("offline", false, "list the gaps the draft marks itself (TBD, TODO, unspecified, is open, (GAP-…), unanswered questions), without a model")
	out := fl.String("out", "", "write the list to this new file instead of standard output (an existing file is not overwritten)")
	var f sessionFlags
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr while the Reviewer discovers")
	f.registerBackend(fl)
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	// Only the Reviewer discovers: --reviewer alone names the backend, and
	// --replay alone a recording.
	if f.llm == "" && f.engineer == "" && f.reviewer != "" {
		f.engineer = f.reviewer
	}
	if f.llm == "" && f.engineer == "" && f.replayDir != "" {
		f.llm = "replay"
	}
	switch {
	case fl.NArg() > 0:
		fmt.Fprintf(c.stderr, "refine gaps: unexpected argument %q: name the spec with --spec\n", safeLine(fl.Arg(0)))
		return exitUsage
	case *specFile == "":
		fmt.Fprintln(c.stderr, "refine gaps: --spec is required")
		fl.Usage()
		return exitUsage
	case !*offline && !f.hasBackend():
		fmt.Fprintln(c.stderr, "refine gaps: --llm (or --reviewer, or --replay DIR) is required: the Reviewer discovers the gaps; or --offline to list the draft's own markers without a model")
		return exitUsage
	}
	if err := checkFlagValues(fl); err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: %v\n", err)
		return exitUsage
	}
	spec, err := readFileLimited(*specFile, maxInputBytes)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: read spec: %v\n", safeErr(err))
		return exitUsage
	}
	if !utf8.Valid(spec) || bytes.IndexByte(spec, 0) >= 0 {
		fmt.Fprintf(c.stderr, "refine gaps: %s is not UTF-8 text: give the draft as text, not a binary file\n", safeLine(*specFile))
		return exitUsage
	}
	name := safeLine(filepath.Base(*specFile))
	if !*offline {
		return c.discoverGaps(ctx, &f, string(spec), name, *specFile, *out)
	}
	ms := markers.Scan(string(spec))
	gaps := markers.Candidates(string(spec), ms)
	list := fmt.Sprintf("# Gap candidates in %s, from the places it marks open itself (refine gaps --offline).\n", name) +
		"# Edit them: fix titles and severities, delete what is no gap, add what the draft leaves open without saying so.\n" +
		gapsfile.Format(gaps)
	if *out == "" {
		fmt.Fprint(c.stdout, list)
	} else if err := writeNewFile(*out, list); err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: %v\n", safeErr(err))
		return exitUsage
	}
	switch {
	case len(gaps) == 0:
		fmt.Fprintf(c.stderr, "refine gaps: %s marks nothing as open (no TBD, TODO, unspecified, open point, (GAP-…) or unanswered question outside code)\n", name)
	case *out != "":
		fmt.Fprintf(c.stderr, "refine gaps: %d candidates written to %s; edit them, then: refine run --spec %s --gaps %s\n",
			len(gaps), safeLine(*out), safeLine(*specFile), safeLine(*out))
	}
	return exitOK
}

// registerBackend adds the flags that choose the backend of a command
// that makes role calls without a session of its own (refine gaps).
func (f *sessionFlags) registerBackend(fl *flag.FlagSet) {
	fl.StringVar(&f.llm, "llm", "", "backend: openai, anthropic, ollama or replay")
	f.registerProviders(fl)
	fl.StringVar(&f.model, "model", "", "model name")
	fl.StringVar(&f.reviewerModel, "reviewer-model", "", "model for the Reviewer, which discovers (overrides --model)")
	fl.StringVar(&f.baseURL, "base-url", "", "backend URL (OpenAI-compatible /v1 endpoint or Ollama server)")
	fl.StringVar(&f.replayDir, "replay", "", "folder holding discovery-NNN.md answers (--llm replay)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "timeout of one LLM call")
	fl.IntVar(&f.retries, "transport-retries", 5, "retries of a call that failed with a rate limit, timeout or server error")
	fl.DurationVar(&f.backoff, "backoff-base", time.Second, "first backoff ceiling between transport retries")
}

// discoverGaps runs discovery alone: a session in memory, stepped once
// (round 0), whose discovery question is accepted; the list it confirms
// is written like --offline's.
func (c *cli) discoverGaps(ctx context.Context, f *sessionFlags, spec, name, specFile, out string) int {
	cfg := refine.DefaultConfig()
	cfg.Store = memory.New()
	cfg.Spec = spec
	cfg.TransportRetries = f.retries
	if f.backoff > 0 {
		cfg.BackoffBase = f.backoff
	}
	eng, rev, err := c.roles(f, cfg.MaxOutputBytes)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: %v\n", safeErr(err))
		return exitUsage
	}
	cfg.Engineer, cfg.Reviewer, cfg.Asker = eng, rev, acceptDiscovery{}
	if !f.quiet {
		// A real model takes a while to read a draft: say what runs, as
		// refine run does (stderr, so the list on stdout stays clean).
		cfg.Observer = newProgress(c.stderr, c.isTerminal)
	}
	s, err := refine.New(ctx, cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: %v\n", safeErr(err))
		return exitUsage
	}
	if _, err := s.Step(ctx); err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: %v\n", safeErr(err))
		return exitFailed
	}
	status, err := s.Status(ctx)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: %v\n", safeErr(err))
		return exitFailed
	}
	if len(status.Pending) > 0 {
		// Every attempt failed validation: the escalation waits.
		fmt.Fprintf(c.stderr, "refine gaps: %s\n%s\n", safeLine(status.Pending[0].Title), safeText(status.Pending[0].Body))
		return exitFailed
	}
	if len(status.Gaps) == 0 {
		fmt.Fprintf(c.stderr, "refine gaps: the Reviewer found no gaps in %s (NO_GAPS_FOUND)\n", name)
		return exitOK
	}
	b, err := cfg.Store.Get(ctx, "discovery/gaps.md")
	if err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: %v\n", safeErr(err))
		return exitFailed
	}
	list := fmt.Sprintf("# Gaps of %s, discovered by the Reviewer (refine gaps).\n", name) +
		"# Edit them: fix titles and severities, delete what is no gap, add what is missing.\n" + string(b)
	if out == "" {
		fmt.Fprint(c.stdout, list)
		return exitOK
	}
	if err := writeNewFile(out, list); err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: %v\n", safeErr(err))
		return exitUsage
	}
	fmt.Fprintf(c.stderr, "refine gaps: %d gaps written to %s; edit them, then: refine run --spec %s --gaps %s\n",
		len(status.Gaps), safeLine(out), safeLine(specFile), safeLine(out))
	return exitOK
}

// acceptDiscovery accepts the list discovery proposes and defers every
// other question (the escalation after every attempt failed).
type acceptDiscovery struct{}

func (acceptDiscovery) Ask(_ context.Context, q refine.Question) (refine.Answer, error) {
	if q.Kind == question.KindDiscovery {
		return refine.Answer{Key: q.Default}, nil
	}
	return refine.Answer{}, refine.ErrDeferred
}

// writeNewFile writes text to a file that must not exist yet, so a gap
// list a person has edited is never overwritten.
func writeNewFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists: choose another --out, or remove it first", name)
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}
