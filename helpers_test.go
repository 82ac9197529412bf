package refine_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// auto answers every question with its documented default.
func auto() *refinetest.Asker { return &refinetest.Asker{DefaultAfterScript: true} }

// then makes a scripted asker answer defaults once its script is used up.
func then(a *refinetest.Asker) *refinetest.Asker { a.DefaultAfterScript = true; return a }

// engineerDoc is a valid Engineer output resolving the given gaps.
func engineerDoc[T ~string](ids ...T) string {
	gs := make([]gap.ID, len(ids))
	for i, id := range ids {
		gs[i] = gap.ID(id)
	}
	return refinetest.EngineerOutput(gs...)
}

// reviewerDoc reviews gap with the given issues ("HIGH: text" form); no
// issues gives the NO_ISSUES_FOUND form.
func reviewerDoc[T ~string](round int, gapID T, issues ...string) string {
	var is []refinetest.Issue
	for _, s := range issues {
		sev, text, _ := strings.Cut(s, ": ")
		level, err := gap.ParseSeverity(sev)
		if err != nil {
			panic("reviewerDoc: " + err.Error())
		}
		is = append(is, refinetest.Issue{Severity: level, Summary: text})
	}
	return refinetest.ReviewerOutput(round, []gap.ID{gap.ID(gapID)}, is...)
}

// revisedDoc is a round-N+1 Engineer output that addresses issueID in
// substance: a revised section, a response paragraph naming the issue and
// using the suggestion's words ("specify the retry bound explicitly").
func revisedDoc(gapID, issueID string) string {
	return fmt.Sprintf(`## Gap Resolution: %s (Revised)

**Confidence:** HIGH

### Response to %s

%s asked us to specify the retry bound explicitly. We now specify it: the
retry bound is 2 validation retries per role per round, after which the
Mediator escalates to the user with the five documented options.

### Proposed Solution

The Mediator validates each output, retries at most twice with a
failure-specific prompt modification, and escalates when the bound is hit.
Every retry is journaled with its prompt and raw response.

### Examples

`+"```"+`
attempt 1: WRONG_FORMAT -> retry 1
attempt 2: valid
`+"```"+`

### Trade-offs

**Pros:**
- Bounded cost
- Predictable behaviour

**Cons:**
- Two retries may not fix every failure

### New Gaps Introduced

- None
`, gapID, issueID, issueID)
}

var twoGaps = []gap.Gap{
	{ID: "GAP-FLOW-001", Title: "Error recovery", Severity: gap.High},
	{ID: "GAP-FLOW-002", Title: "Stall detection", Severity: gap.Medium},
}

func get(t *testing.T, cfg refine.Config, key string) string {
	t.Helper()
	b, err := cfg.Store.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return string(b)
}

func run(t *testing.T, cfg refine.Config) (*refine.Session, refine.Outcome) {
	t.Helper()
	ctx := context.Background()
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return s, out
}

// exhausted returns an Engineer script whose first three answers fail.
func exhausted(then ...string) []string {
	return append([]string{"no format 1", "no format 2", "no format 3"}, then...)
}

// transient is a Role error worth retrying.
type transient struct{ after time.Duration }

func (e transient) Error() string             { return "429 too many requests" }
func (e transient) Transient() bool           { return true }
func (e transient) RetryAfter() time.Duration { return e.after }

// stallingRoles: the Engineer proposes every assigned gap, the Reviewer
// always raises a HIGH issue, so no round makes progress and the
// divergence question comes after round 2.
func stallingRoles() (refine.Role, refine.Role) {
	eng := refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: strings.Replace(engineerDoc(req.Gaps...), "### Proposed Solution", "### Proposed Solution\n\nRound "+itoa(req.Round)+" revision.", 1)}, nil
	})
	rev := refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: reviewerDoc(req.Round, req.Gaps[0], "HIGH: still unclear")}, nil
	})
	return eng, rev
}

func itoa(n int) string { return strconv.Itoa(n) }

// approving roles: the Engineer resolves what it is given, the Reviewer
// approves it.
func approvingRoles() (eng, rev refine.Role) {
	eng = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	return eng, rev
}

// disagreeBlock is one more DISAGREE block for an output.
func disagreeBlock(issueID, quote string) string {
	return fmt.Sprintf(`
## DISAGREE: %s

**Reviewer Concern:**
> %s

**Engineer Position:**
Timeouts belong to the host's deployment, not to the spec.

**Rationale:**
A fixed timeout is a trade-off analysis the host owns.

**Request:** Escalate to user for resolution
`, issueID, quote)
}
