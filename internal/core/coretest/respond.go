package coretest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/refinetest"
)

// t0 is the context of the harness's Store calls: nothing ends it.
func t0() context.Context { return context.Background() }

// stage keeps one call's result for the next deliver.
func (h *harness) stage(t *testing.T, td *datadriven.TestData) string {
	var role string
	var call int
	td.ScanArgs(t, "role", &role)
	td.ScanArgs(t, "call", &call)
	req := llm.Request{Role: llm.RoleName(role), Call: call}
	for _, r := range h.last.Calls {
		if r.Role == req.Role && r.Call == call {
			req = r
		}
	}
	id := core.CallID{Role: req.Role, Call: call}
	res := core.RoleResult{Calls: 1}
	if td.HasArg("notes") {
		var n int
		td.ScanArgs(t, "notes", &n)
		for k := 1; k <= n; k++ {
			h.notes = append(h.notes, core.TransportNote{Role: req.Role, Round: req.Round, Attempt: req.Attempt,
				Err: errors.New("503 Service Unavailable"), Try: k, Delay: time.Duration(k) * time.Second})
		}
		res.Calls += n
	}
	if td.HasArg("err") {
		var msg string
		td.ScanArgs(t, "err", &msg)
		res.Err = errors.New(msg)
		switch {
		case msg == "cancelled":
			res.Err, res.Failure.Cancelled = context.Canceled, true
		case td.HasArg("retries"):
			td.ScanArgs(t, "retries", &res.Failure.Retries)
			res.Calls += res.Failure.Retries
		}
		h.staged = append(h.staged, core.CallResult{Call: id, Result: res})
		return fmt.Sprintf("staged %s call %d: fails: %s", role, call, res.Err)
	}
	content := expand(t, td, td.Input)
	if td.HasArg("gen") {
		var err error
		if content, err = generate(t, td, req); err != nil {
			return "stage: " + err.Error()
		}
	}
	res.Resp = llm.Response{Content: content, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 50}}
	if td.HasArg("finish") {
		td.ScanArgs(t, "finish", &res.Resp.FinishReason)
	}
	if td.HasArg("tokens") {
		td.ScanArgs(t, "tokens", &res.Resp.Usage.CompletionTokens)
	}
	h.staged = append(h.staged, core.CallResult{Call: id, Result: res})
	return fmt.Sprintf("staged %s call %d (%d bytes)", role, call, len(content))
}

// generate builds a valid response for req with refinetest's builders:
// resolve (an Engineer output for the request's gaps), revise (a revision
// answering issue=), disagree (an output that disagrees with issue=),
// newgap (an output that introduces new=ID:SEV), approve (a Reviewer
// output with no issues) or issue (a Reviewer output with one issue of
// severity sev=, HIGH by default).
func generate(t *testing.T, td *datadriven.TestData, req llm.Request) (string, error) {
	var kind string
	td.ScanArgs(t, "gen", &kind)
	if len(req.Gaps) == 0 {
		return "", fmt.Errorf("gen=%s: the last Ready has no %s call %d with gaps", kind, req.Role, req.Call)
	}
	issue := func() string {
		var id string
		td.ScanArgs(t, "issue", &id)
		return id
	}
	switch kind {
	case "resolve":
		return refinetest.EngineerOutput(req.Gaps...), nil
	case "revise":
		return refinetest.Revision(req.Gaps[0], issue(), ""), nil
	case "disagree":
		return refinetest.EngineerOutput(req.Gaps...) + "\n" + refinetest.Disagree(issue(), "the retry bound is missing", ""), nil
	case "newgap":
		var spec string
		td.ScanArgs(t, "new", &spec)
		id, sev, _ := strings.Cut(spec, ":")
		level, err := gap.ParseSeverity(sev)
		if err != nil {
			td.Fatalf(t, "new=%s: %v", spec, err)
		}
		return refinetest.NewGap(gap.ID(id), level, "a gap found on the way", req.Gaps...), nil
	case "approve":
		return refinetest.ReviewerOutput(req.Round, req.Gaps), nil
	case "issue":
		sev := gap.High
		if td.HasArg("sev") {
			var name string
			td.ScanArgs(t, "sev", &name)
			var err error
			if sev, err = gap.ParseSeverity(name); err != nil {
				td.Fatalf(t, "sev=%s: %v", name, err)
			}
		}
		return refinetest.ReviewerOutput(req.Round, req.Gaps, refinetest.Issue{Severity: sev, Summary: "the retry bound is missing"}), nil
	}
	return "", fmt.Errorf("gen=%s: want resolve, revise, disagree, newgap, approve or issue", kind)
}

// expand turns a response block into the role's output, expanding the
// lines that start with @ with refinetest's builders:
//
//	@engineer-output GAP… [+NEW-GAP:SEV…]   EngineerOutput (with new gaps)
//	@revision GAP ISSUE                     Revision
//	@disagree ISSUE concern…                Disagree
//	@review ROUND GAP…                      ReviewerOutput, with the @issue lines after it
//	@issue SEV GAP summary…                 one issue of the @review above
//	@resolution GAP                         the body of EngineerOutput's section for GAP
//	                                        (what an integrated spec carries as accepted)
//
// Other lines are kept as they are.
func expand(t *testing.T, td *datadriven.TestData, body string) string {
	if body == "" {
		return ""
	}
	var b strings.Builder
	type review struct {
		round  int
		gaps   []gap.ID
		issues []refinetest.Issue
	}
	var rev *review
	for _, line := range strings.Split(body, "\n") {
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
		case f[0] == "@resolution" && len(f) == 2:
			b.WriteString(resolutionBody(gap.ID(f[1])) + "\n")
		case f[0] == "@revision" && len(f) == 3:
			b.WriteString(refinetest.Revision(gap.ID(f[1]), f[2], ""))
		case f[0] == "@disagree" && len(f) >= 3:
			b.WriteString("\n" + refinetest.Disagree(f[1], strings.Join(f[2:], " "), ""))
		case f[0] == "@review" && len(f) >= 3:
			n, err := strconv.Atoi(f[1])
			if err != nil {
				td.Fatalf(t, "%s: %v", line, err)
			}
			rev = &review{round: n}
			for _, id := range f[2:] {
				rev.gaps = append(rev.gaps, gap.ID(id))
			}
		case f[0] == "@issue" && len(f) >= 4 && rev != nil:
			sev, err := gap.ParseSeverity(f[1])
			if err != nil {
				td.Fatalf(t, "%s: %v", line, err)
			}
			rev.issues = append(rev.issues, refinetest.Issue{Severity: sev, Gap: gap.ID(f[2]), Summary: strings.Join(f[3:], " ")})
		default:
			td.Fatalf(t, "cannot expand %q", line)
		}
	}
	if rev != nil {
		b.WriteString(refinetest.ReviewerOutput(rev.round, rev.gaps, rev.issues...))
	}
	return b.String()
}

// resolutionBody is the body of refinetest.EngineerOutput's section for
// id, past its heading: the resolution the decisions accept from it.
func resolutionBody(id gap.ID) string {
	out := refinetest.EngineerOutput(id)
	_, body, _ := strings.Cut(out, "## Gap Resolution: "+string(id)+"\n")
	return strings.TrimSpace(body)
}
