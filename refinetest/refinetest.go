// Package refinetest helps hosts test code that drives refine, the way
// net/http/httptest helps test HTTP code: scripted Roles and Askers, a fixed
// clock, sequential IDs, and a ready Config on an in-memory Store.
//
// Everything here is deterministic and safe for concurrent use.
package refinetest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/store/memory"
)

// Role answers calls with scripted responses in order, and records every
// Request it receives.
type Role struct {
	mu        sync.Mutex
	responses []Reply
	fn        func(context.Context, refine.Request) (refine.Response, error)
	calls     []refine.Request
}

// Reply is one scripted answer: content with usage, or an error.
type Reply struct {
	Content string
	Usage   refine.Usage
	Err     error
	// FinishReason is the backend's reason for ending the answer ("length"
	// for one the token limit cut, "refusal", "tool_use"; "" for a plain
	// stop).
	FinishReason string
}

// Script returns a Role that answers successive calls with contents, in
// order, each with a usage of 100 prompt and 50 completion tokens. A call
// past the end fails with an error naming the call.
func Script(contents ...string) *Role {
	r := &Role{}
	for _, c := range contents {
		r.responses = append(r.responses, Reply{Content: c, Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 50}})
	}
	return r
}

// Replies returns a Role that answers successive calls with replies, in order.
func Replies(replies ...Reply) *Role { return &Role{responses: replies} }

// Func returns a Role whose answers come from fn.
func Func(fn func(context.Context, refine.Request) (refine.Response, error)) *Role {
	return &Role{fn: fn}
}

// Respond implements refine.Role.
func (r *Role) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	r.mu.Lock()
	n := len(r.calls)
	r.calls = append(r.calls, req)
	fn := r.fn
	var reply Reply
	ok := n < len(r.responses)
	if ok {
		reply = r.responses[n]
	}
	r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return refine.Response{}, err
	}
	if fn != nil {
		return fn(ctx, req)
	}
	if !ok {
		return refine.Response{}, fmt.Errorf("refinetest: %s call %d (round %d attempt %d) has no scripted response: the script has %d: %w", req.Role, n+1, req.Round, req.Attempt, len(r.responses), refine.ErrNoResponse)
	}
	return refine.Response{Content: reply.Content, Usage: reply.Usage, FinishReason: reply.FinishReason}, reply.Err
}

// Calls returns the requests received so far.
func (r *Role) Calls() []refine.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]refine.Request(nil), r.calls...)
}

// CallCount returns how many times Respond was called.
func (r *Role) CallCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// Prompt returns the user message of call i (0-based), or "".
func (r *Role) Prompt(i int) string {
	calls := r.Calls()
	if i < 0 || i >= len(calls) {
		return ""
	}
	for _, m := range calls[i].Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// Asker answers questions from a script and records what it was asked.
type Asker struct {
	mu      sync.Mutex
	answers []refine.Answer
	asked   []refine.Question
	// DeferAfterScript makes the Asker defer (refine.ErrDeferred) once the
	// script is used up, instead of failing.
	DeferAfterScript bool
	// DefaultAfterScript makes the Asker answer with each question's
	// default once the script is used up.
	DefaultAfterScript bool
}

// Answers returns an Asker that gives answers in order. An answer with
// Key "" defers that question (refine.ErrDeferred).
func Answers(answers ...refine.Answer) *Asker { return &Asker{answers: answers} }

// Keys returns an Asker that answers with these option keys in order; the
// key "defer" defers.
func Keys(keys ...string) *Asker {
	a := &Asker{}
	for _, k := range keys {
		if k == "defer" {
			k = ""
		}
		a.answers = append(a.answers, refine.Answer{Key: k})
	}
	return a
}

// Ask implements refine.Asker.
func (a *Asker) Ask(_ context.Context, q refine.Question) (refine.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	if len(a.answers) == 0 {
		switch {
		case a.DeferAfterScript:
			return refine.Answer{}, refine.ErrDeferred
		case a.DefaultAfterScript:
			return refine.DefaultAsker{}.Ask(context.Background(), q)
		}
		return refine.Answer{}, fmt.Errorf("refinetest: unscripted question %s (%s)", q.ID, q.Title)
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	if ans.Key == "" {
		return refine.Answer{}, refine.ErrDeferred
	}
	return ans, nil
}

// Asked returns the questions asked so far.
func (a *Asker) Asked() []refine.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]refine.Question(nil), a.asked...)
}

// Clock is a fixed clock: Now starts at a fixed instant and advances by
// Step on every call; Sleep advances time instead of waiting and records
// the durations.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	Step  time.Duration
	slept []time.Duration
}

// NewClock returns a Clock at 2026-01-12T14:30:00Z advancing one second per reading.
func NewClock() *Clock {
	return &Clock{now: time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC), Step: time.Second}
}

// Now implements refine.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.Step)
	return t
}

// Sleep implements refine.Clock without waiting.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return nil
}

// Slept returns the durations passed to Sleep.
func (c *Clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// IDs returns "session-1", "session-2", … .
type IDs struct {
	mu sync.Mutex
	n  int
}

// NewID implements refine.IDSource.
func (s *IDs) NewID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("session-%d", s.n)
}

// Config returns refine.DefaultConfig with a fresh in-memory Store, the
// given roles and asker, a fixed Clock, sequential IDs, a fixed jitter
// seed, a small spec and the gaps (GAP-TEST-001 at HIGH when none, so a session runs until it completes).
// Integration is off (Settings.Integrate false): a script plays rounds, and
// a test of the integration step turns it on and scripts its calls.
func Config(engineer, reviewer refine.Role, asker refine.Asker, gaps ...gap.Gap) refine.Config {
	cfg := refine.DefaultConfig()
	cfg.Integrate = false
	cfg.Store = memory.New()
	cfg.Engineer, cfg.Reviewer, cfg.Asker = engineer, reviewer, asker
	cfg.Clock = NewClock()
	cfg.IDs = &IDs{}
	cfg.JitterSeed = 1
	cfg.Spec = "# Test Spec\n\nA small spec under refinement.\n"
	if len(gaps) == 0 {
		gaps = []gap.Gap{{ID: "GAP-TEST-001", Title: "The test gap", Severity: gap.High}}
	}
	cfg.Gaps = gaps
	return cfg
}
