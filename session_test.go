package refine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

func TestSessionCompletesInOneRound(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Status != refine.StatusComplete || out.Round != 1 {
		t.Fatalf("outcome = %+v, want COMPLETE after round 1", out)
	}
	st, _ := s.Status(ctx)
	if st.Gaps[0].State != gap.Accepted {
		t.Errorf("gap state = %s, want ACCEPTED", st.Gaps[0].State)
	}
	keys, _ := cfg.Store.List(ctx, "")
	for _, want := range []string{"state.json", "status.md", "decisions.md", "round_001/engineer.md", "round_001/reviewer.md", "round_001/summary.md",
		"round_001/attempts/engineer-1.md", "round_001/prompts/engineer-1.md", "round_001/attempts/reviewer-1.md", "state_backup_round_0.json"} {
		if !contains(keys, want) {
			t.Errorf("store lacks %s; has %v", want, keys)
		}
	}
	status, _ := cfg.Store.Get(ctx, "status.md")
	if !strings.Contains(string(status), "## Round 1 Validation Log") {
		t.Errorf("status.md lacks the validation log:\n%s", status)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestCancelledContextStopsWithStateCommitted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		cancel()
		return refine.Response{}, ctx.Err()
	})
	cfg := refinetest.Config(eng, refinetest.Script(), auto())
	s, err := refine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if !errors.Is(err, context.Canceled) || out.Status != refine.StatusPaused {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	if _, err := refine.Open(context.Background(), cfg); err != nil {
		t.Fatalf("state not resumable after cancel: %v", err)
	}
}

func TestOpenRefusesNewerOrCorruptState(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		state string
		want  error
	}{
		{`{"schema": 4}`, refine.ErrSchema},
		{`{"schema": 3}`, refine.ErrCorrupt}, // schema 3 carries a checksum
		{`{"schema": 1, "round": "x"`, refine.ErrCorrupt},
		{`not json`, refine.ErrCorrupt},
	} {
		cfg := refinetest.Config(refinetest.Script(), refinetest.Script(), auto())
		if err := cfg.Store.Commit(ctx, store.Put("state.json", []byte(tt.state))); err != nil {
			t.Fatal(err)
		}
		_, err := refine.Open(ctx, cfg)
		if !errors.Is(err, tt.want) {
			t.Errorf("Open(%s) = %v, want %v", tt.state, err, tt.want)
		}
		if b, _ := cfg.Store.Get(ctx, "state.json"); string(b) != tt.state {
			t.Errorf("state.json was modified")
		}
	}
	cfg := refinetest.Config(refinetest.Script(), refinetest.Script(), auto())
	if _, err := refine.Open(ctx, cfg); !errors.Is(err, refine.ErrNoSession) {
		t.Errorf("Open on empty store = %v", err)
	}
	if _, err := refine.New(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := refine.New(ctx, cfg); !errors.Is(err, refine.ErrSessionExists) {
		t.Errorf("second New = %v", err)
	}
}

func TestAnswerValidation(t *testing.T) {
	ctx := context.Background()
	cfg := refinetest.Config(refinetest.Script(exhausted()...), refinetest.Script(), refinetest.Keys("defer"))
	s, _ := refine.New(ctx, cfg)
	out, _ := s.Run(ctx)
	if out.Status != refine.StatusPaused {
		t.Fatalf("want paused, got %+v", out)
	}
	id := out.Pending[0].ID
	if err := s.Answer(ctx, "nope", refine.Answer{Key: "1"}); !errors.Is(err, refine.ErrUnknownQuestion) {
		t.Errorf("unknown question: %v", err)
	}
	if err := s.Answer(ctx, id, refine.Answer{Key: "9"}); !errors.Is(err, refine.ErrInvalidAnswer) || !strings.Contains(err.Error(), "1, 2, 3, 4, 5") {
		t.Errorf("bad key: %v", err)
	}
	if err := s.Answer(ctx, id, refine.Answer{Key: "1"}); err != nil {
		t.Errorf("good answer: %v", err)
	}
}

// noCopies hides a Store's Copier capability.
type noCopies struct{ refine.Store }

func (n noCopies) Appends() bool { return true }

// status.md and decisions.md are rewritten between rounds, even when no
// question waits there (the Asker answers at once): when round 3's
// Engineer is called, status.md shows round 2 completed, and the backup of
// round 2 holds the same text — copied where the Store copies, written
// again where it does not.
func TestStatusCurrentBetweenRounds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func() refine.Store
	}{
		{"copier", func() refine.Store { return memory.New() }},
		{"no copier", func() refine.Store { return noCopies{memory.New()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := tc.store()
			var seen, backup string
			eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
				if req.Round == 3 && seen == "" {
					b, _ := st.Get(ctx, "status.md")
					seen = string(b)
					b, _ = st.Get(ctx, "status_backup_round_2.md")
					backup = string(b)
				}
				return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
			})
			rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
				return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
			})
			cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(4)...)
			cfg.GapsPerRound, cfg.Store = 1, st
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := s.Run(ctx); err != nil || out.Status != refine.StatusComplete {
				t.Fatalf("Run = %+v, %v", out, err)
			}
			if !strings.Contains(seen, "**Round:** 2 completed") {
				t.Errorf("status.md when round 3 started:\n%.300s", seen)
			}
			if backup != seen {
				t.Errorf("status_backup_round_2.md differs from status.md as round 2 ended:\n%.300s", backup)
			}
			for _, k := range []string{"round_002/engineer.md", "round_002/reviewer.md"} {
				attempt := strings.Replace(k, "/", "/attempts/", 1)
				attempt = strings.Replace(attempt, ".md", "-1.md", 1)
				a, _ := st.Get(ctx, k)
				b, _ := st.Get(ctx, attempt)
				if len(a) == 0 || string(a) != string(b) {
					t.Errorf("%s (%d bytes) is not the response %s journaled (%d bytes)", k, len(a), attempt, len(b))
				}
			}
		})
	}
}
