package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
)

// Helpers of the tests that drive a whole refine.Session beside the
// decisions (session_*_test.go): refinetest's builders in the shapes these
// tests use, and Stores that fail on purpose.

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

func gapStates(t *testing.T, s *refine.Session) map[gap.ID]gap.State {
	t.Helper()
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[gap.ID]gap.State{}
	for _, g := range st.Gaps {
		out[g.ID] = g.State
	}
	return out
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

// crashingStore fails every Commit from the n-th on, as if the process died
// there: nothing of that commit is applied.
type crashingStore struct {
	refine.Store
	mu      sync.Mutex
	commits int
	failAt  int
}

var errCrash = errors.New("simulated crash")

func (c *crashingStore) Commit(ctx context.Context, ops ...store.Op) error {
	c.mu.Lock()
	c.commits++
	n := c.commits
	c.mu.Unlock()
	if c.failAt > 0 && n >= c.failAt {
		return errCrash
	}
	return c.Store.Commit(ctx, ops...)
}

// persist commits what Next decided and tells the session.
func persist(t *testing.T, s *refine.Session, st refine.Store, r refine.Ready) {
	t.Helper()
	ctx := context.Background()
	if err := st.Commit(ctx, r.Persist...); err != nil {
		t.Fatalf("persist: %v", err)
	}
	if err := s.Advance(ctx); err != nil {
		t.Fatalf("Advance: %v", err)
	}
}

// storeContents reads every key of st.
func storeContents(t *testing.T, st refine.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		b, err := st.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}
