package refinetemporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/validate"
)

// script is a scripted pair of roles for the workflow tests: the Engineer
// resolves its gaps (after badEngineer invalid answers), the Reviewer
// raises one HIGH issue in round 1 and approves from round 2, so a
// session takes two rounds. It counts the calls that completed, per role
// and call number, and fails the calls listed in transient once each.
type script struct {
	badEngineer int
	// badCalls are further Engineer call numbers answered invalidly.
	badCalls  map[int]bool
	mu        sync.Mutex
	completed map[string]int
	reqs      []refine.Request
	transient map[string]bool // "engineer/2": fail that call once
	// block, when set, is called before each call returns; a test uses it
	// to hold a call in flight.
	block func(ctx context.Context, key string) error
}

func newScript() *script {
	return &script{completed: map[string]int{}, transient: map[string]bool{}}
}

func callKey(req refine.Request) string { return fmt.Sprintf("%s/%d", req.FileRole(), req.Call) }

func (s *script) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	key := callKey(req)
	if s.block != nil {
		if err := s.block(ctx, key); err != nil {
			return refine.Response{}, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.transient[key] {
		delete(s.transient, key)
		return refine.Response{}, &refine.TransientError{Err: errors.New("503 service unavailable")}
	}
	s.completed[key]++
	s.reqs = append(s.reqs, req)
	if prompt := req.Messages[len(req.Messages)-1].Content; strings.HasPrefix(prompt, "# Integration:") {
		return refine.Response{Content: integratedWebhooks()}, nil
	} else if strings.HasPrefix(prompt, "# Consistency review") {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round+1, req.Gaps)}, nil
	}
	if req.Role == refine.Engineer {
		if req.Call <= s.badEngineer || s.badCalls[req.Call] {
			return refine.Response{Content: "not a proposal"}, nil
		}
		if req.Round > 1 {
			return refine.Response{Content: refinetest.Revision(req.Gaps[0], refinetest.IssueID(req.Round-1, 1), "specify the retry bound explicitly")}, nil
		}
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	}
	if req.Round == 1 {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps,
			refinetest.Issue{Severity: gap.High, Summary: "the retry bound is missing"})}, nil
	}
	return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
}

// repeated returns the calls that completed more than once.
func (s *script) repeated() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k, n := range s.completed {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	return out
}

func (s *script) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.completed {
		n += c
	}
	return n
}

func testInput() SessionInput {
	set := refine.DefaultConfig().Settings
	set.Integrate = false // the rounds only; TestIntegrationInAWorkflow plays the integration step
	return SessionInput{
		Spec:     "# Webhooks\n\nRetries are unbounded (GAP-HOOK-001).\n",
		Gaps:     []gap.Gap{{ID: "GAP-HOOK-001", Title: "Retry schedule is unspecified", Severity: gap.High}},
		Settings: &set,
	}
}

// integratedWebhooks is the integration of testInput's spec with the
// script's round-2 resolution.
func integratedWebhooks() string {
	rev := validate.Engineer(refinetest.Revision("GAP-HOOK-001", refinetest.IssueID(1, 1), "specify the retry bound explicitly"), validate.Options{})
	return "# Webhooks\n\n" + strings.TrimSpace(rev.Sections[0].Body) +
		"\n\n## Resolution Log\n\n| Item | Section(s) | Note |\n|---|---|---|\n| GAP-HOOK-001 | Webhooks | retry schedule merged |\n"
}

// requests returns the completed calls' requests, in completion order.
func (s *script) requests() []refine.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}
