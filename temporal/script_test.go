package refinetemporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
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

func callKey(req refine.Request) string { return fmt.Sprintf("%s/%d", req.Role, req.Call) }

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
	return SessionInput{
		Spec: "# Webhooks\n\nRetries are unbounded (GAP-HOOK-001).\n",
		Gaps: []gap.Gap{{ID: "GAP-HOOK-001", Title: "Retry schedule is unspecified", Severity: gap.High}},
	}
}

// requests returns the completed calls' requests, in completion order.
func (s *script) requests() []refine.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}
