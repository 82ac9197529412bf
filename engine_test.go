package refine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
)

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

func TestRetryThenSuccess(t *testing.T) {
	eng := refinetest.Script("Here are my thoughts on error recovery, without headers.", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if eng.CallCount() != 2 {
		t.Errorf("engineer called %d times, want 2", eng.CallCount())
	}
	retryPrompt := eng.Prompt(1)
	for _, want := range []string{"RETRY ATTEMPT 1 of 2", "FORMAT CORRECTION REQUIRED:", "EXAMPLE OUTPUT", "Source: ", "## Gap Resolution: [GAP-ID]"} {
		if !strings.Contains(retryPrompt, want) {
			t.Errorf("retry prompt lacks %q", want)
		}
	}
	journal := get(t, cfg, "round_001/prompts/engineer-2.md")
	if !strings.Contains(journal, "RETRY ATTEMPT 1 of 2") {
		t.Errorf("journaled prompt lacks the retry notice")
	}
	if got := get(t, cfg, "round_001/attempts/engineer-1.md"); !strings.Contains(got, "without headers") {
		t.Errorf("raw failed response not journaled: %q", got)
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{
		"| Engineer | SUCCESS | 2 | N/A (passed on retry) |",
		"| 2026-01-12T", "| Engineer | 1 | Structure | FAIL | Missing required header: '## Gap Resolution:'",
		"#### Engineer Retry 1 (", "- **Failure Type:** WRONG_FORMAT", "- **Prompt Modification:** FORMAT CORRECTION REQUIRED (structural headers)",
		"- **Outcome:** Success on retry", "## Round 1 Errors", "| Engineer | WRONG_FORMAT | Retry 1 initiated |", "| Engineer | Retry success |",
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q\n%s", want, status)
		}
	}
}

// exhausted returns an Engineer script whose first three answers fail.
func exhausted(then ...string) []string {
	return append([]string{"no format 1", "no format 2", "no format 3"}, then...)
}

func TestEscalationOptions(t *testing.T) {
	tests := []struct {
		name      string
		answer    refine.Answer
		engineer  []string
		reviewer  []string
		wantCalls int
		wantState map[gap.ID]gap.State
		wantRound string // the round record's Engineer column
		check     func(t *testing.T, eng *refinetest.Role)
	}{
		{
			name: "1 skip", answer: refine.Answer{Key: "1"}, engineer: exhausted(), wantCalls: 3,
			wantState: map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open, "GAP-FLOW-002": gap.Open}, wantRound: "SKIP",
		},
		{
			name: "2 reassign", answer: refine.Answer{Key: "2", Text: "GAP-FLOW-002"}, engineer: exhausted(engineerDoc("GAP-FLOW-002")), reviewer: []string{reviewerDoc(1, "GAP-FLOW-002")},
			wantCalls: 4, wantState: map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open, "GAP-FLOW-002": gap.Accepted}, wantRound: "OK (4 attempts)",
		},
		{
			name: "3 provide context", answer: refine.Answer{Key: "3", Text: "The retry bound is 2."}, engineer: exhausted(engineerDoc("GAP-FLOW-001", "GAP-FLOW-002")),
			reviewer: []string{reviewerDoc(1, "GAP-FLOW-001 and GAP-FLOW-002")}, wantCalls: 4,
			wantState: map[gap.ID]gap.State{"GAP-FLOW-001": gap.Accepted, "GAP-FLOW-002": gap.Accepted}, wantRound: "OK (4 attempts)",
			check: func(t *testing.T, eng *refinetest.Role) {
				if !strings.Contains(eng.Prompt(3), "The retry bound is 2.") {
					t.Errorf("context missing from the extra attempt's prompt")
				}
			},
		},
		{
			name: "4 narrow scope", answer: refine.Answer{Key: "4"}, engineer: exhausted(engineerDoc("GAP-FLOW-002")), reviewer: []string{reviewerDoc(1, "GAP-FLOW-002")},
			wantCalls: 4, wantState: map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open, "GAP-FLOW-002": gap.Accepted}, wantRound: "OK (4 attempts)",
			check: func(t *testing.T, eng *refinetest.Role) {
				if got := eng.Calls()[3].Gaps; !cmp.Equal(got, []gap.ID{"GAP-FLOW-002"}) {
					t.Errorf("narrowed call gaps = %v, want the MEDIUM gap only", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := refinetest.Script(tt.engineer...)
			rev := refinetest.Script(tt.reviewer...)
			ask := then(refinetest.Answers(tt.answer))
			cfg := refinetest.Config(eng, rev, ask, twoGaps...)
			cfg.MaxRounds = 1
			s, out := run(t, cfg)
			if out.Status != refine.StatusMaxRounds && out.Status != refine.StatusComplete {
				t.Fatalf("outcome %+v", out)
			}
			if eng.CallCount() != tt.wantCalls {
				t.Errorf("engineer calls = %d, want %d", eng.CallCount(), tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantState, gapStates(t, s)); diff != "" {
				t.Errorf("gap states (-want +got):\n%s", diff)
			}
			q := ask.Asked()
			if len(q) != 1 || q[0].Kind != refine.KindEscalation || !strings.Contains(q[0].Body, "Engineer could not produce valid output after 3 attempts.") {
				t.Fatalf("questions = %+v", q)
			}
			if !strings.Contains(get(t, cfg, "round_001/summary.md"), "**Engineer:** "+tt.wantRound) {
				t.Errorf("summary lacks Engineer %q:\n%s", tt.wantRound, get(t, cfg, "round_001/summary.md"))
			}
			if !strings.Contains(get(t, cfg, "decisions.md"), "**Chosen Option:** "+tt.answer.Key) {
				t.Errorf("decisions.md lacks the escalation decision")
			}
			if tt.check != nil {
				tt.check(t, eng)
			}
			if tt.name == "1 skip" && rev.CallCount() != 0 {
				t.Errorf("reviewer called after Engineer SKIP")
			}
		})
	}
}

func TestEscalationPauseThenResume(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(exhausted(engineerDoc("GAP-FLOW-001", "GAP-FLOW-002"))...)
	rev := refinetest.Script(reviewerDoc(1, "GAP-FLOW-001, GAP-FLOW-002"))
	cfg := refinetest.Config(eng, rev, then(refinetest.Keys("5")), twoGaps...)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused || len(out.Pending) != 1 {
		t.Fatalf("first run = %+v, %v; want PAUSED with the escalation pending", out, err)
	}
	// Resume in a "new process": Open on the same store with a new asker.
	cfg.Asker = then(refinetest.Keys("3"))
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Answer(ctx, out.Pending[0].ID, refine.Answer{Key: "3", Text: "Bound retries at 2."}); err != nil {
		t.Fatal(err)
	}
	out, err = s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resumed run = %+v, %v", out, err)
	}
	if eng.CallCount() != 4 {
		t.Errorf("engineer calls = %d, want 4 (no repeat after pause)", eng.CallCount())
	}
}

func TestReviewerSkippedLeavesProposalsUnreviewed(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script("bad 1", "bad 2", "bad 3", reviewerDoc(2, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, then(refinetest.Keys("1")))
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v, want COMPLETE in round 2", out)
	}
	if eng.CallCount() != 1 {
		t.Errorf("engineer calls = %d: round 2 has nothing to assign", eng.CallCount())
	}
	if !strings.Contains(get(t, cfg, "round_001/summary.md"), "**Reviewer:** SKIP") {
		t.Errorf("round 1 summary lacks Reviewer SKIP")
	}
	if !strings.Contains(rev.Prompt(3), "## Gap Resolution: GAP-TEST-001") {
		t.Errorf("round 2 reviewer did not get round 1's proposal")
	}
	_ = s
}

func TestPartialEngineerReturnsUnaddressedToOpen(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-FLOW-001"), engineerDoc("GAP-FLOW-002"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-FLOW-001"), reviewerDoc(2, "GAP-FLOW-002"))
	cfg := refinetest.Config(eng, rev, auto(), twoGaps...)
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v", out)
	}
	if got := eng.Calls()[1].Gaps; !cmp.Equal(got, []gap.ID{"GAP-FLOW-002"}) {
		t.Errorf("round 2 assigned %v, want the unaddressed gap", got)
	}
	_ = s
}

func TestNeedsRevisionThenAcceptedAndIssuesCarried(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), revisedDoc("GAP-TEST-001", "ISSUE-R1-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified", "LOW: typo"), reviewerDoc(2, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v", out)
	}
	p := eng.Prompt(1)
	if !strings.Contains(p, "ISSUE-R1-001") || !strings.Contains(p, "retry bound unspecified") {
		t.Errorf("round 2 prompt lacks round 1's issue:\n%s", p)
	}
	if !strings.Contains(rev.Prompt(1), "ISSUE-R2-") {
		t.Errorf("round 2 reviewer prompt lacks the issue ID rule")
	}
	summary := get(t, cfg, "round_001/summary.md")
	if !strings.Contains(summary, "| GAP-TEST-001 | PROPOSED | NEEDS_REVISION | reviewer raised ISSUE-R1-001 |") {
		t.Errorf("summary lacks the transition:\n%s", summary)
	}
	_ = s
}

func TestMaxRounds(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: a"), reviewerDoc(2, "GAP-TEST-001", "CRITICAL: b"))
	cfg := refinetest.Config(eng, rev, auto())
	cfg.MaxRounds = 2
	_, out := run(t, cfg)
	if out.Status != refine.StatusMaxRounds || out.Round != 2 {
		t.Fatalf("outcome %+v, want MAX_ROUNDS after 2", out)
	}
}

func TestNewGapsBecomeOpen(t *testing.T) {
	doc := strings.Replace(engineerDoc("GAP-TEST-001"), "- None", "- GAP-TEST-002 (HIGH): Persistence format undefined", 1)
	eng := refinetest.Script(doc, engineerDoc("GAP-TEST-002"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"), reviewerDoc(2, "GAP-TEST-002"))
	cfg := refinetest.Config(eng, rev, auto())
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v", out)
	}
	st, _ := s.Status(context.Background())
	if len(st.Gaps) != 2 || st.Gaps[1].ID != "GAP-TEST-002" || st.Gaps[1].Severity != gap.High {
		t.Errorf("gaps = %+v", st.Gaps)
	}
}

// transient is a Role error worth retrying.
type transient struct{ after time.Duration }

func (e transient) Error() string             { return "429 too many requests" }
func (e transient) Transient() bool           { return true }
func (e transient) RetryAfter() time.Duration { return e.after }

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

func TestPermanentRoleErrorFailsResumably(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("401 unauthorized: check the API key")
	calls := 0
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		calls++
		if calls == 1 {
			return refine.Response{}, boom
		}
		return refine.Response{Content: engineerDoc("GAP-TEST-001")}, nil
	})
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if !errors.Is(err, boom) || out.Status != refine.StatusFailed {
		t.Fatalf("Run = %+v, %v; want FAILED wrapping the role error", out, err)
	}
	if !strings.Contains(err.Error(), "round 1 engineer attempt 1") {
		t.Errorf("error lacks where: %v", err)
	}
	if !strings.Contains(get(t, cfg, "status.md"), "EXECUTION_ERROR") {
		t.Errorf("status.md lacks the EXECUTION_ERROR row")
	}
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err = s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resume = %+v, %v", out, err)
	}
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

func TestNewRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	base := refinetest.Config(refinetest.Script(), refinetest.Script(), auto())
	tests := []struct {
		name   string
		mutate func(*refine.Config)
		want   error
		field  string
	}{
		{"no gaps", func(c *refine.Config) { c.Gaps = nil }, refine.ErrInvalidConfig, "Gaps"},
		{"duplicate gaps", func(c *refine.Config) { c.Gaps = append(twoGaps, twoGaps[0]) }, gap.ErrDuplicateGap, "GAP-FLOW-001"},
		{"no store", func(c *refine.Config) { c.Store = nil }, refine.ErrInvalidConfig, "Store"},
		{"max rounds 1000", func(c *refine.Config) { c.MaxRounds = 1000 }, refine.ErrInvalidConfig, "MaxRounds"},
		{"zero example budget", func(c *refine.Config) { c.RetryExampleBudget = 0 }, refine.ErrInvalidConfig, "RetryExampleBudget"},
		{"weights unordered", func(c *refine.Config) { c.Weights = gap.Weights{Critical: 1, High: 4, Medium: 2, Low: 1} }, refine.ErrInvalidConfig, "Weights"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.mutate(&cfg)
			_, err := refine.New(ctx, cfg)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("New = %v, want %v naming %s", err, tt.want, tt.field)
			}
		})
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

func TestParallelDrafting(t *testing.T) {
	gaps := []gap.Gap{{ID: "GAP-PAR-001", Severity: gap.High}, {ID: "GAP-PAR-002", Severity: gap.High}, {ID: "GAP-PAR-003", Severity: gap.High}}
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		if len(req.Gaps) != 1 {
			return refine.Response{}, fmt.Errorf("parallel call got %d gaps", len(req.Gaps))
		}
		if req.Gaps[0] == "GAP-PAR-002" && req.Attempt == 1 {
			return refine.Response{Content: "bad format"}, nil
		}
		return refine.Response{Content: engineerDoc(req.Gaps[0])}, nil
	})
	rev := refinetest.Script(reviewerDoc(1, "GAP-PAR-001, GAP-PAR-002, GAP-PAR-003"))
	cfg := refinetest.Config(eng, rev, auto(), gaps...)
	cfg.ParallelGaps = 3
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if eng.CallCount() != 4 {
		t.Errorf("engineer calls = %d, want 4 (one retry)", eng.CallCount())
	}
	merged := get(t, cfg, "round_001/engineer.md")
	i1, i2, i3 := strings.Index(merged, "GAP-PAR-001"), strings.Index(merged, "## Gap Resolution: GAP-PAR-002"), strings.Index(merged, "## Gap Resolution: GAP-PAR-003")
	if !(i1 >= 0 && i1 < i2 && i2 < i3) {
		t.Errorf("merged engineer.md not in gap order")
	}
	get(t, cfg, "round_001/attempts/engineer-GAP-PAR-002-2.md")
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
