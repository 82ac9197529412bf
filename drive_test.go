package refine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// Run's driver asks its Asker again when an answer does not fit the
// question, saying why, and fails the run after three such answers.
func TestDriverAsksAgainAfterAnInvalidAnswer(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		keys    []string
		wantErr bool
	}{
		{"then a valid one", []string{"zz", "1"}, false},
		{"three invalid", []string{"zz", "yy", "xx"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := refinetest.Script(exhausted(engineerDoc("GAP-FLOW-001", "GAP-FLOW-002"))...)
			rev := refinetest.Script(reviewerDoc(1, "GAP-FLOW-001, GAP-FLOW-002"))
			ask := refinetest.Keys(tt.keys...)
			cfg := refinetest.Config(eng, rev, then(ask), twoGaps...)
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			out, err := s.Run(ctx)
			asked := ask.Asked()
			if len(asked) < 2 {
				t.Fatalf("asked %d questions, want the escalation asked again", len(asked))
			}
			if asked[1].ID != asked[0].ID || !strings.Contains(asked[1].Body, "(Previous answer rejected: ") || strings.Contains(asked[0].Body, "Previous answer rejected") {
				t.Errorf("second ask of %s does not say why the first answer was refused:\n%s", asked[0].ID, asked[1].Body)
			}
			if !tt.wantErr {
				if err != nil || out.Status == refine.StatusFailed {
					t.Fatalf("Run = %+v, %v; want the session to go on after the valid answer", out, err)
				}
				return
			}
			if !errors.Is(err, refine.ErrInvalidAnswer) || out.Status != refine.StatusFailed {
				t.Fatalf("Run = %+v, %v; want FAILED wrapping ErrInvalidAnswer", out, err)
			}
			if len(asked) != 3 {
				t.Errorf("asked %d times, want 3", len(asked))
			}
		})
	}
}

// immediateThenDefer is a policy Asker (Immediate) that answers its first
// question and defers the rest: a question it does not answer must still
// be durable when Run returns, though the policy's questions need no
// commit of their own.
type immediateThenDefer struct {
	answers *refinetest.Asker
	asked   int
}

func (a *immediateThenDefer) Immediate() bool { return true }

func (a *immediateThenDefer) Ask(ctx context.Context, q refine.Question) (refine.Answer, error) {
	a.asked++
	if a.asked > 1 {
		return refine.Answer{}, refine.ErrDeferred
	}
	return a.answers.Ask(ctx, q)
}

// A policy Asker's unanswered question is in the Store when Run returns:
// another process sees it pending.
func TestImmediateAskerLeavesItsUnansweredQuestionDurable(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(exhausted(exhausted(engineerDoc("GAP-FLOW-001", "GAP-FLOW-002"))...)...)
	rev := refinetest.Script(reviewerDoc(1, "GAP-FLOW-001, GAP-FLOW-002"), reviewerDoc(2, "GAP-FLOW-001, GAP-FLOW-002"))
	ask := &immediateThenDefer{answers: refinetest.Keys("1")}
	cfg := refinetest.Config(eng, rev, ask, twoGaps...)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused || len(out.Pending) == 0 {
		t.Fatalf("Run = %+v, %v; want PAUSED at the deferred question", out, err)
	}
	if ask.asked < 2 {
		t.Fatalf("the policy was asked %d questions, want an answered one and a deferred one", ask.asked)
	}
	st, err := refine.Inspect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, q := range st.Pending {
		stored = append(stored, q.ID)
	}
	for _, q := range out.Pending {
		if !slices.Contains(stored, q.ID) {
			t.Errorf("question %s is pending in Run's outcome but not in the Store (pending there: %v)", q.ID, stored)
		}
	}

	// Another process (the first dropped, as after a crash) opens the
	// session, answers the question with its default and plays on: the
	// answer is recorded as a decision and the session goes past it.
	cfg2 := refinetest.Config(eng, rev, refine.DeferAsker{}, twoGaps...)
	cfg2.Store = cfg.Store
	s2, err := refine.Open(ctx, cfg2)
	if err != nil {
		t.Fatal(err)
	}
	q := st.Pending[0]
	if err := s2.Answer(ctx, q.ID, refine.Answer{Key: q.Default}); err != nil {
		t.Fatalf("answer %s from another process: %v", q.ID, err)
	}
	out2, err := s2.Run(ctx)
	if err != nil {
		t.Fatalf("Run after the answer: %+v, %v", out2, err)
	}
	if slices.ContainsFunc(out2.Pending, func(p refine.Question) bool { return p.ID == q.ID }) {
		t.Errorf("question %s still pending after it was answered from another process", q.ID)
	}
	after, err := refine.Inspect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Decisions) <= len(st.Decisions) {
		t.Errorf("no decision recorded for %s answered from another process: %d decisions before, %d after", q.ID, len(st.Decisions), len(after.Decisions))
	}
}

func TestTransportRetriesDoNotSpendValidationBudget(t *testing.T) {
	eng := refinetest.Replies(
		refinetest.Reply{Err: transient{after: 3 * time.Second}},
		refinetest.Reply{Err: transient{}},
		refinetest.Reply{Content: engineerDoc("GAP-TEST-001"), Usage: refine.Usage{PromptTokens: 10, CompletionTokens: 5}},
	)
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	clock := cfg.Clock.(*refinetest.Clock)
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	slept := clock.Slept()
	if len(slept) != 2 || slept[0] < 3*time.Second {
		t.Errorf("backoff sleeps = %v, want 2 with the first ≥ the 3s hint", slept)
	}
	st, _ := s.Status(context.Background())
	if st.Calls != 4 || st.Usage.PromptTokens != 110 {
		t.Errorf("calls = %d usage = %+v", st.Calls, st.Usage)
	}
	if strings.Contains(get(t, cfg, "status.md"), "RETRY ATTEMPT") || strings.Count(get(t, cfg, "status.md"), "Transport retry") != 2 {
		t.Errorf("status.md transport rows wrong:\n%s", get(t, cfg, "status.md"))
	}
}

func TestTransportGivesUpAfterTheBoundAndStaysResumable(t *testing.T) {
	ctx := context.Background()
	calls := 0
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		calls++
		if calls <= 4 {
			return refine.Response{}, transient{after: 2 * time.Second}
		}
		return refine.Response{Content: engineerDoc("GAP-TEST-001")}, nil
	})
	cfg := refinetest.Config(eng, refinetest.Script(reviewerDoc(1, "GAP-TEST-001")), auto())
	cfg.TransportRetries = 3
	cfg.BackoffMax = 5 * time.Second
	clock := cfg.Clock.(*refinetest.Clock)
	s, _ := refine.New(ctx, cfg)
	out, err := s.Run(ctx)
	if out.Status != refine.StatusFailed || err == nil || !strings.Contains(err.Error(), "gave up after 3 transport retries") {
		t.Fatalf("Run = %+v, %v; want FAILED after 3 transport retries", out, err)
	}
	slept := clock.Slept()
	if len(slept) != 3 {
		t.Errorf("slept %v, want 3 backoffs", slept)
	}
	for _, d := range slept {
		if d < 2*time.Second || d > 5*time.Second {
			t.Errorf("backoff %s outside [hint 2s, max 5s]", d)
		}
	}
	// Resumable: the next Run succeeds and the validation budget was untouched.
	s2, _ := refine.Open(ctx, cfg)
	out, err = s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resume = %+v, %v", out, err)
	}
	if strings.Contains(get(t, cfg, "round_001/prompts/engineer-1.md"), "RETRY ATTEMPT") {
		t.Errorf("a transport failure was treated as a validation retry")
	}
}
