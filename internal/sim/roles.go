package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// scriptedRole is the simulator's Engineer or Reviewer. Its answer to a
// request is a function of (seed, role, call, round, attempt, gaps) and of
// the prompt's listed issues, so a session reopened after a crash gets
// the same answers as its uncrashed twin. The one piece of memory it
// keeps is which calls already failed transiently in this process: a
// transient failure is followed by success on the transport retry.
type scriptedRole struct {
	seed  uint64
	name  refine.RoleName
	known []gap.ID
	mix   Mix
	log   *callLog

	mu        sync.Mutex
	transient map[string]bool
}

// Mix holds the roles' odds of each kind of output.
type Mix struct {
	// Invalid is the chance an attempt's output fails validation.
	Invalid float64
	// Transient and Permanent are the chances a call fails with a
	// transient (retried) or a permanent error (EXECUTION_ERROR).
	Transient, Permanent float64
	// Disagree, Ignore and NewGap are the Engineer's chances, per issue
	// listed against a gap it drafts, of a DISAGREE block, of silently
	// ignoring the issue, and, per gap, of introducing a new gap.
	Disagree, Ignore, NewGap float64
	// Approve is the Reviewer's base chance of finding no issue; it grows
	// by ApproveStep per round so sessions converge.
	Approve, ApproveStep float64
}

// DefaultMix is the mix the simulator uses unless told otherwise.
var DefaultMix = Mix{Invalid: 0.12, Transient: 0.03, Permanent: 0.02, Disagree: 0.12, Ignore: 0.12, NewGap: 0.08, Approve: 0.25, ApproveStep: 0.15}

// errPermanent is the permanent Role error the simulator injects.
var errPermanent = errors.New("sim: the backend refused the request (permanent)")

func (r *scriptedRole) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	if err := ctx.Err(); err != nil {
		return refine.Response{}, err
	}
	ids := make([]string, len(req.Gaps))
	for i, g := range req.Gaps {
		ids[i] = string(g)
	}
	key := fmt.Sprintf("%s/%d/%d/%d/%s", req.Role, req.Call, req.Round, req.Attempt, strings.Join(ids, ","))
	h := hashOf(r.seed, "role", key)
	rnd := rand.New(rand.NewPCG(h, h^0x5851f42d4c957f2d))
	resp, err := r.answer(rnd, key, req)
	r.log.add(callRec{Role: req.Role, Call: req.Call, Round: req.Round, Attempt: req.Attempt, Err: err != nil})
	return resp, err
}

func (r *scriptedRole) answer(rnd *rand.Rand, key string, req refine.Request) (refine.Response, error) {
	usage := refine.Usage{PromptTokens: 100, CompletionTokens: 50}
	transient, permanent := chance(rnd, r.mix.Transient), chance(rnd, r.mix.Permanent)
	if transient || permanent {
		// Once per process: the retry (transport retry, or the run
		// resumed after the failure) succeeds.
		r.mu.Lock()
		seen := r.transient[key]
		r.transient[key] = true
		r.mu.Unlock()
		switch {
		case seen:
		case transient:
			return refine.Response{}, &refine.TransientError{Err: fmt.Errorf("sim: %s call %d: 503 service unavailable", req.Role, req.Call)}
		default:
			return refine.Response{}, fmt.Errorf("%s call %d: %w", req.Role, req.Call, errPermanent)
		}
	}
	prompt := userPrompt(req)
	if chance(rnd, r.mix.Invalid) {
		return refine.Response{Content: r.invalid(rnd, req, prompt), Usage: usage}, nil
	}
	if req.Role == refine.Reviewer {
		return refine.Response{Content: r.review(rnd, req), Usage: usage}, nil
	}
	return refine.Response{Content: r.draft(rnd, req, prompt), Usage: usage}, nil
}

// userPrompt returns the user message of req.
func userPrompt(req refine.Request) string {
	for _, m := range req.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// listedIssue is one Reviewer issue as the Engineer's prompt lists it.
type listedIssue struct {
	ID, Severity string
	Gap          gap.ID
	Summary      string
}

var issueLine = regexp.MustCompile(`(?m)^- \*\*(ISSUE-R\d+-\d+)\*\* \(([A-Z]+), (GAP-[A-Z0-9]+-\d+)\): (.+)$`)
var anyIssue = regexp.MustCompile(`ISSUE-R\d+-\d{3}`)

// listedIssues finds the issues the prompt asks the Engineer to address.
func listedIssues(prompt string) []listedIssue {
	var out []listedIssue
	for _, m := range issueLine.FindAllStringSubmatch(prompt, -1) {
		out = append(out, listedIssue{ID: m[1], Severity: m[2], Gap: gap.ID(m[3]), Summary: strings.TrimSpace(m[4])})
	}
	return out
}

const proposalsHeader = "# Engineer Proposals\n\n"

// draft writes a valid Engineer output: per gap a resolution, a revision
// answering one of its issues, or a resolution that silently ignores
// them; DISAGREE blocks; now and then a new gap.
func (r *scriptedRole) draft(rnd *rand.Rand, req refine.Request, prompt string) string {
	issues := listedIssues(prompt)
	var b strings.Builder
	b.WriteString(proposalsHeader)
	var disagree []string
	for _, g := range req.Gaps {
		var answered bool
		for _, is := range issues {
			if is.Gap != g {
				continue
			}
			switch {
			case chance(rnd, r.mix.Disagree):
				disagree = append(disagree, refinetest.Disagree(is.ID, is.Summary, ""))
			case chance(rnd, r.mix.Ignore):
				// silently ignored: no response paragraph
			case !answered:
				b.WriteString(strings.TrimPrefix(refinetest.Revision(g, is.ID, ""), proposalsHeader))
				answered = true
			}
		}
		if answered {
			continue
		}
		if chance(rnd, r.mix.NewGap) {
			sev := gap.Severity(rnd.IntN(4) + 1)
			id := gap.ID(fmt.Sprintf("GAP-NEW-%03d", 100+rnd.IntN(40)))
			b.WriteString(strings.TrimPrefix(refinetest.NewGap(id, sev, "A gap the simulator's Engineer found", g), proposalsHeader))
			continue
		}
		b.WriteString(strings.TrimPrefix(refinetest.EngineerOutput(g), proposalsHeader))
	}
	for _, d := range disagree {
		b.WriteString("\n" + d)
	}
	return b.String()
}

// review writes a valid Reviewer output for the reviewed gaps: no issue
// (APPROVE) more and more often as rounds go by, else one to three issues
// of any severity, mostly against the reviewed gaps, now and then against
// another gap of the spec (which reopens it).
func (r *scriptedRole) review(rnd *rand.Rand, req refine.Request) string {
	if chance(rnd, r.mix.Approve+r.mix.ApproveStep*float64(req.Round-1)) || len(req.Gaps) == 0 {
		return refinetest.ReviewerOutput(req.Round, req.Gaps)
	}
	n := 1 + rnd.IntN(3)
	var issues []refinetest.Issue
	for i := range n {
		g := req.Gaps[rnd.IntN(len(req.Gaps))]
		if rnd.IntN(8) == 0 && len(r.known) > 0 {
			g = r.known[rnd.IntN(len(r.known))]
		}
		issues = append(issues, refinetest.Issue{Severity: gap.Severity(rnd.IntN(4) + 1), Gap: g, Summary: "finding " + strconv.Itoa(i+1) + " of round " + strconv.Itoa(req.Round)})
	}
	return refinetest.ReviewerOutput(req.Round, req.Gaps, issues...)
}

// invalid writes an output that fails validation, one failure type at a
// time (validate/failure.go).
func (r *scriptedRole) invalid(rnd *rand.Rand, req refine.Request, prompt string) string {
	gaps := req.Gaps
	if len(gaps) == 0 {
		gaps = []gap.ID{"GAP-SIM-001"}
	}
	if req.Role == refine.Reviewer {
		switch rnd.IntN(5) {
		case 0:
			return "" // FILE_MISSING
		case 1:
			return " \n\t\n" // EMPTY_OUTPUT
		case 2:
			return "Looks fine to me, ship it.\n" // WRONG_FORMAT: no review header
		case 3: // WRONG_FORMAT: a malformed issue entry
			return fmt.Sprintf("## Review: %s\n\n### High Priority\n\n- ISSUE-R%d-001 with no bold id\n", gaps[0], req.Round)
		default: // INCONSISTENT_REFS: an issue against a gap that does not exist
			return refinetest.ReviewerOutput(req.Round, gaps, refinetest.Issue{Severity: gap.High, Gap: "GAP-ZZZ-999", Summary: "about a gap nobody has"})
		}
	}
	valid := refinetest.EngineerOutput(gaps...)
	switch rnd.IntN(9) {
	case 0:
		return "" // FILE_MISSING
	case 1:
		return "   \n" // EMPTY_OUTPUT
	case 2:
		return "Here are my thoughts on the spec, in prose.\n" // WRONG_FORMAT
	case 3: // NO_GAPS_ADDRESSED
		return strings.ReplaceAll(valid, "## Gap Resolution: "+string(gaps[0]), "## Gap Resolution: the first one")
	case 4: // INCONSISTENT_REFS
		return refinetest.EngineerOutput(append(slices.Clone(gaps), "GAP-ZZZ-999")...)
	case 5: // INVALID_DISAGREE_REF
		return valid + "\n" + refinetest.Disagree("ISSUE-R98-999", "a concern nobody raised", "")
	case 6: // MALFORMED_DISAGREE: no rationale
		d := refinetest.Disagree(fmt.Sprintf("ISSUE-R%d-001", max(req.Round-1, 1)), "the retry bound is missing", "")
		d = d[:strings.Index(d, "**Rationale:**")]
		return valid + "\n" + d
	case 7: // RE_ARGUED_CONFLICT when the issue was decided; else a disagreement
		if ids := anyIssue.FindAllString(prompt, -1); len(ids) > 0 {
			return valid + "\n" + refinetest.Disagree(ids[rnd.IntN(len(ids))], "the concern as raised", "")
		}
		return valid + "\n## DISAGREE: ISSUE-R1-001, ISSUE-R1-002\n"
	default: // MALFORMED_DISAGREE: two issues in one heading
		return valid + "\n## DISAGREE: ISSUE-R1-001, ISSUE-R1-002\n\n**Reviewer Concern:**\n> x\n\n**Engineer Position:**\ny\n\n**Rationale:**\nz\n\n**Request:** Escalate to user for resolution\n"
	}
}

// callRec is one role call as the simulator saw it.
type callRec struct {
	Role    refine.RoleName
	Call    int
	Round   int
	Attempt int
	Err     bool
	// Commits is how many commits had succeeded when the call returned.
	Commits int
}

// callLog records a branch's role calls, in the order they returned.
type callLog struct {
	mu      sync.Mutex
	calls   []callRec
	commits func() int
}

func (l *callLog) add(c callRec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.commits != nil {
		c.Commits = l.commits()
	}
	l.calls = append(l.calls, c)
}

func (l *callLog) snapshot() []callRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}
