package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/termtext"
	"github.com/refine-spec/refine/validate"
)

const validateUsage = `Usage: refine validate --role engineer|reviewer [--gaps FILE] [--round N] [--json] FILE

Validates one Engineer or Reviewer output the way the Mediator does: it reads
the answer as meant (a fence around it, other heading levels, separators and
forms are normalized, each kind reported as a "NORMALIZED:" warning), checks
structure, then content, and prints the verdict, the failure with its line,
warnings, and what was found. FILE "-" reads standard input.

Exit status: 0 valid (warnings allowed), 1 invalid, 2 usage or I/O error.

Flags:
`

// cmdValidate implements "refine validate": exit 0 when the output is valid
// (warnings allowed), 1 when invalid, 2 on a usage or I/O error; --json
// prints the result's JSON form (package validate's Report: success,
// failure_type, retriable, message, …, sections, new_gaps, normalized,
// snake_case, every field present).
func cmdValidate(_ context.Context, c *cli, args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // usage is printed by us, once, to the right stream
	role := fs.String("role", "", "output's role: engineer or reviewer (required)")
	gapsPath := fs.String("gaps", "", "gap list (markdown \"- GAP-AREA-NNN (SEVERITY): title\" lines or JSON); enables the cross-reference check")
	round := fs.Int("round", 0, "current round: Reviewer issue IDs must be ISSUE-R{N}-NNN (0: any round)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	usage := func(w io.Writer) {
		fmt.Fprint(w, validateUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(c.stderr, "refine validate: "+format+"\n\n", a...)
		usage(c.stderr)
		return exitUsage
	}

	files, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		usage(c.stdout)
		return exitOK
	}
	if err != nil {
		return usageErr("%v", err)
	}
	switch {
	case *role == "":
		return usageErr("--role is required (engineer or reviewer)")
	case gap.Role(*role) != gap.Engineer && gap.Role(*role) != gap.Reviewer:
		return usageErr("unknown role %q: want engineer or reviewer", *role)
	case *round < 0 || *round > 999:
		return usageErr("--round %d out of range: want 1-999, or 0 for any round", *round)
	case len(files) != 1:
		return usageErr("want exactly one FILE, got %d", len(files))
	}

	opt := validate.Options{Round: *round}
	if *gapsPath != "" {
		data, err := readFileLimited(*gapsPath, maxInputBytes)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine validate: reading gap list: %v\n", err)
			return exitUsage
		}
		gaps, err := parseGapsFile(*gapsPath, data)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine validate: %v\n", safeErr(err))
			return exitUsage
		}
		opt.KnownGaps = make([]gap.ID, len(gaps))
		for i, g := range gaps {
			opt.KnownGaps[i] = g.ID
		}
	}

	res, err := validateFile(c, *role, files[0], opt)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine validate: %v\n", safeErr(err))
		return exitUsage
	}
	if *asJSON {
		if err := termtext.WriteJSON(c.stdout, res); err != nil {
			fmt.Fprintf(c.stderr, "refine validate: %v\n", err)
			return exitUsage
		}
	} else {
		printValidation(c.stdout, *role, files[0], res)
	}
	if !res.Success {
		return exitFailed
	}
	return exitOK
}

// parseInterspersed parses flags that may come before or after positional
// arguments ("validate FILE --role engineer"); everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// validateFile reads the output and validates it. It reads at most
// MaxOutputBytes plus one byte, so standard input, a pipe or a device that
// never ends fails as too large instead of filling memory; a regular file
// above the limit is rejected from its size alone, without reading it.
func validateFile(c *cli, role, name string, opt validate.Options) (validate.Result, error) {
	limit := int64(opt.MaxOutputBytes)
	if limit <= 0 {
		limit = validate.DefaultMaxOutputBytes
	}
	var in io.Reader
	what := name
	if name == "-" {
		if c.stdin == nil {
			return validate.Result{}, errors.New("no standard input to read")
		}
		in, what = c.stdin, "standard input"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return validate.Result{}, err // *PathError names the file
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return validate.Result{}, err
		}
		if fi.IsDir() {
			return validate.Result{}, fmt.Errorf("%s is a directory, not an output file", name)
		}
		if fi.Mode().IsRegular() && fi.Size() > limit {
			return validate.TooLarge(fi.Size(), opt), nil
		}
		in = f
	}
	data, err := readLimited(what, in, limit)
	if errors.Is(err, errTooLarge) {
		return validate.Fail(validate.WrongFormat, fmt.Sprintf("output is too large: %s holds more than %d bytes, the limit (MaxOutputBytes); it was not read further", what, limit)), nil
	}
	if err != nil {
		return validate.Result{}, err
	}
	return validate.Validate(gap.Role(role), string(data), opt)
}

// printValidation writes the human form: verdict, failure, warnings, findings.
// Every string from the output or the file name is escaped for the terminal.
func printValidation(w io.Writer, role, name string, r validate.Result) {
	name = safeLine(name)
	if r.Success {
		fmt.Fprintf(w, "VALID %s output %s\n", role, name)
		fmt.Fprintf(w, "  %s\n", safeText(r.Message))
	} else {
		fmt.Fprintf(w, "INVALID %s output %s\n", role, name)
		retry := "not retriable"
		if r.Retriable {
			retry = "retriable"
		}
		where := ""
		if r.Line > 0 {
			where = fmt.Sprintf(" at line %d", r.Line)
		}
		fmt.Fprintf(w, "  %s (%s tier, %s)%s\n", r.FailureType, r.Tier, retry, where)
		fmt.Fprintf(w, "  %s\n", safeText(r.Message))
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(w, "Warnings (%d):\n", len(r.Warnings))
		for _, s := range r.Warnings {
			fmt.Fprintf(w, "  %s\n", safeText(s))
		}
	}
	if gap.Role(role) == gap.Engineer {
		printEngineerFindings(w, r)
	} else {
		printReviewerFindings(w, r)
	}
	if len(r.NewGaps) > 0 {
		fmt.Fprintf(w, "New gaps (%d):\n", len(r.NewGaps))
		for _, g := range r.NewGaps {
			fmt.Fprintf(w, "  %-14s %-8s line %-5d %s\n", g.ID, g.Severity, g.Line, safeLine(g.Title))
		}
	}
}

func printEngineerFindings(w io.Writer, r validate.Result) {
	if len(r.Sections) > 0 {
		fmt.Fprintf(w, "Gaps addressed (%d): %s\n", len(r.GapsAddressed), joinGapIDs(r.GapsAddressed))
		for _, s := range r.Sections {
			conf := s.Confidence
			if conf == "" {
				conf = "-"
			}
			fmt.Fprintf(w, "  %-14s lines %d-%d, %d chars, confidence %s %s\n", s.ID, s.Line, s.EndLine, s.Chars, safeLine(string(conf)), safeLine(s.Suffix))
		}
	}
	if len(r.Disagreements) > 0 {
		fmt.Fprintf(w, "Disagreements (%d):\n", len(r.Disagreements))
		for _, d := range r.Disagreements {
			fmt.Fprintf(w, "  %-14s line %d\n", d.IssueID, d.Line)
		}
	}
	if len(r.Responses) > 0 {
		fmt.Fprintf(w, "Responses to: %s\n", safeLine(strings.Join(r.Responses, ", ")))
	}
}

func printReviewerFindings(w io.Writer, r validate.Result) {
	if r.Verdict == "" {
		return // failed before the issues were read
	}
	counts := map[gap.Severity]int{}
	for _, is := range r.Issues {
		counts[is.Severity]++
	}
	var parts []string
	for _, s := range gap.All() {
		parts = append(parts, fmt.Sprintf("%s %d", s, counts[s]))
	}
	fmt.Fprintf(w, "Verdict: %s\n", r.Verdict)
	if r.NoIssuesFound {
		fmt.Fprintln(w, "Issues: none (NO_ISSUES_FOUND)")
	} else {
		fmt.Fprintf(w, "Issues (%d): %s\n", len(r.Issues), strings.Join(parts, ", "))
	}
	for _, s := range gap.All() {
		for _, is := range r.Issues {
			if is.Severity != s {
				continue
			}
			g := string(is.Gap)
			if g == "" {
				g = "-"
			}
			fmt.Fprintf(w, "  %-8s %-14s %-14s line %-5d %s\n", is.Severity, safeLine(is.ID), g, is.Line, safeLine(is.Summary))
		}
	}
}

func joinGapIDs(ids []gap.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

// parseGapsFile reads a gap list (see gapsfile.Parse).
func parseGapsFile(name string, data []byte) ([]gap.Gap, error) { return gapsfile.Parse(name, data) }
