package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/markers"
)

// cmdGaps implements "refine gaps --spec S --offline [--out FILE]": the
// marker scan of a draft (no model) printed as a gap list for a person to
// edit and pass to `refine run --gaps`. Discovery by a model is the
// session's first step when `refine run` has no --gaps (DESIGN §19).
func cmdGaps(_ context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine gaps", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	specFile := fl.String("spec", "", "the draft spec to scan (required)")
	offline := fl.Bool("offline", false, "list the gaps the draft marks itself (TBD, TODO, unspecified, is open, (GAP-…), unanswered questions), without a model (required for now)")
	out := fl.String("out", "", "write the list to this new file instead of standard output (an existing file is not overwritten)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	switch {
	case fl.NArg() > 0:
		fmt.Fprintf(c.stderr, "refine gaps: unexpected argument %q: name the spec with --spec\n", safeLine(fl.Arg(0)))
		return exitUsage
	case *specFile == "":
		fmt.Fprintln(c.stderr, "refine gaps: --spec is required")
		fl.Usage()
		return exitUsage
	case !*offline:
		fmt.Fprintln(c.stderr, "refine gaps: --offline is required: this version lists the gaps a draft marks itself, without a model; a model discovers the rest at the start of `refine run` without --gaps")
		return exitUsage
	}
	spec, err := readFileLimited(*specFile, maxInputBytes)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine gaps: read spec: %v\n", safeErr(err))
		return exitUsage
	}
	ms := markers.Scan(string(spec))
	gaps := markers.Candidates(string(spec), ms)
	name := safeLine(filepath.Base(*specFile))
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
