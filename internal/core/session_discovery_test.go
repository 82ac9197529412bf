package core_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/validate"
)

// Discovery through a whole Session (DESIGN §19): a session started from
// hooksSpec alone, whose Reviewer lists its gaps first.

// hooksDiscovery is a valid discovery answer on hooksSpec: its three
// marked gaps, each located.
const hooksDiscovery = `- GAP-HOOK-001 (HIGH): Retry schedule is unspecified
  Location: "The retry schedule is not specified"
  Why: Receivers cannot size their idempotency windows.
- GAP-HOOK-002 (MEDIUM): Signature scheme is unspecified
  Location: "How deliveries are signed is TBD"
  Why: Receivers cannot verify a delivery.
- GAP-HOOK-003 (LOW): Ordering guarantees are unspecified
  Location: 3. Ordering
  Why: Receivers cannot tell whether to reorder.
`

// discoveryConfig is a session over hooksSpec with no gaps: it starts
// with discovery. The Reviewer answers the discovery call first.
func discoveryConfig(eng, rev refine.Role, asker refine.Asker) refine.Config {
	cfg := refinetest.Config(eng, rev, asker)
	cfg.Spec, cfg.Gaps = hooksSpec, nil
	cfg.MaxRounds = 1
	cfg.GapsPerRound = 3
	return cfg
}

// oneRound are the round-1 role scripts that accept the three hooks gaps.
func oneRound() (eng []string, rev []string) {
	ids := []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002", "GAP-HOOK-003"}
	return []string{refinetest.EngineerOutput(ids...)}, []string{refinetest.ReviewerOutput(1, ids)}
}

func discoveryQuestions(a *refinetest.Asker) []refine.Question {
	return slices.DeleteFunc(a.Asked(), func(q refine.Question) bool { return q.Round != 0 })
}

func TestDiscoveryAcceptedFirstTime(t *testing.T) {
	eng, rev := oneRound()
	revRole := refinetest.Script(append([]string{hooksDiscovery}, rev...)...)
	asker := auto()
	engRole := refinetest.Script(eng...)
	cfg := discoveryConfig(engRole, revRole, asker)
	s, out := run(t, cfg)
	if p := engRole.Prompt(0); !strings.Contains(p, "  Location: \"How deliveries are signed is TBD\"\n  Why: Receivers cannot verify a delivery.") {
		t.Errorf("round 1's Engineer prompt does not show the gaps' Location and Why:\n%s", p)
	}
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", out.Status, out.Reason)
	}
	calls := revRole.Calls()
	if !calls[0].Discovery || calls[0].Round != 0 || calls[0].Call != 1 || calls[0].Role != refine.Reviewer {
		t.Errorf("first Reviewer call = %+v, want the discovery call (round 0, call 1)", calls[0])
	}
	if calls[1].Discovery || calls[1].Call != 1 || calls[1].Round != 1 {
		t.Errorf("round 1's review = call %d round %d discovery %v, want the Reviewer's call 1 of round 1", calls[1].Call, calls[1].Round, calls[1].Discovery)
	}
	prompt := revRole.Prompt(0)
	for _, want := range []string{"(GAP-HOOK-002)", "Location:", "keep GAP-HOOK-001", "GAP-AREA-001"} {
		if !strings.Contains(prompt+calls[0].Messages[0].Content, want) {
			t.Errorf("discovery prompt lacks %q", want)
		}
	}
	qs := discoveryQuestions(asker)
	if len(qs) != 1 || qs[0].Kind != question.KindDiscovery || qs[0].Default != "accept" {
		t.Fatalf("round-0 questions = %+v, want one discovery question defaulting to accept", qs)
	}
	if !strings.Contains(qs[0].Body, "Location: \"How deliveries are signed is TBD\"") {
		t.Errorf("question body lacks the gaps' locations:\n%s", qs[0].Body)
	}
	st, _ := s.Status(context.Background())
	var ids []gap.ID
	for _, g := range st.Gaps {
		ids = append(ids, g.ID)
		if g.State != gap.Accepted {
			t.Errorf("%s is %s, want ACCEPTED", g.ID, g.State)
		}
	}
	if diff := cmp.Diff([]gap.ID{"GAP-HOOK-001", "GAP-HOOK-002", "GAP-HOOK-003"}, ids); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
	if i := slices.IndexFunc(st.Gaps, func(g refine.GapStatus) bool { return g.Location == `"How deliveries are signed is TBD"` }); i < 0 || st.Gaps[i].Why != "Receivers cannot verify a delivery." {
		t.Errorf("Status does not carry the discovered Location and Why: %+v", st.Gaps)
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"How deliveries are signed is TBD", "Receivers cannot verify a delivery"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
	if !strings.Contains(get(t, cfg, "decisions.md"), "Accept the list") {
		t.Errorf("decisions.md does not record the discovery answer:\n%s", get(t, cfg, "decisions.md"))
	}
	for _, k := range []string{"discovery/prompts/reviewer-1.md", "discovery/attempts/reviewer-1.md", "discovery/reviewer.md", "discovery/gaps.md"} {
		get(t, cfg, k)
	}
	if g := get(t, cfg, "discovery/gaps.md"); !strings.Contains(g, "Location: 3. Ordering") {
		t.Errorf("discovery/gaps.md lacks the Locations:\n%s", g)
	}
}

// The same session given the discovered list plays the same rounds: the
// discovery call is numbered apart.
func TestDiscoveryThenSameRoundsAsGivenList(t *testing.T) {
	eng, rev := oneRound()
	given := refinetest.Script(rev...)
	cfg := discoveryConfig(refinetest.Script(eng...), given, auto())
	cfg.Gaps = hooksGaps
	_, want := run(t, cfg)
	revRole := refinetest.Script(append([]string{hooksDiscovery}, rev...)...)
	cfg2 := discoveryConfig(refinetest.Script(eng...), revRole, auto())
	_, got := run(t, cfg2)
	if got.Status != want.Status || got.Round != want.Round {
		t.Errorf("discovered session ended %s in round %d, the given one %s in round %d", got.Status, got.Round, want.Status, want.Round)
	}
}

// Each failure type of a discovery answer gets its retry with the
// failure's notice and the built-in example; the next answer is read.
func TestDiscoveryFailureRetried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer refinetest.Reply
		want   validate.FailureType
	}{
		{"malformed", refinetest.Reply{Content: "- GAP-HOOK-001 (HIGH): Retry schedule\n  Why: no location given\n"}, validate.MalformedGap},
		{"duplicate", refinetest.Reply{Content: hooksDiscovery + "- GAP-HOOK-001 (HIGH): again\n  Location: 1. Delivery\n  Why: twice\n"}, validate.DuplicateGap},
		{"unlocated", refinetest.Reply{Content: "- GAP-HOOK-001 (HIGH): Retry schedule\n  Location: \"retries happen hourly\"\n  Why: none\n"}, validate.UnlocatedGap},
		{"wrong format", refinetest.Reply{Content: "The spec looks fine to me."}, validate.WrongFormat},
		{"truncated", refinetest.Reply{Content: hooksDiscovery[:60], FinishReason: "length"}, validate.Truncated},
		{"refusal", refinetest.Reply{Content: "I can't help with that.", FinishReason: "refusal"}, validate.Refusal},
		{"empty", refinetest.Reply{Content: ""}, validate.MissingFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng, rev := oneRound()
			replies := []refinetest.Reply{tc.answer, {Content: hooksDiscovery}}
			for _, r := range rev {
				replies = append(replies, refinetest.Reply{Content: r})
			}
			revRole := refinetest.Replies(replies...)
			cfg := discoveryConfig(refinetest.Script(eng...), revRole, auto())
			_, out := run(t, cfg)
			if out.Status != refine.StatusComplete {
				t.Fatalf("outcome %s (%s), want COMPLETE after the retry", out.Status, out.Reason)
			}
			calls := revRole.Calls()
			if !calls[1].Discovery || calls[1].Call != 2 || calls[1].Attempt != 2 {
				t.Fatalf("second call = discovery %v call %d attempt %d, want discovery call 2, attempt 2", calls[1].Discovery, calls[1].Call, calls[1].Attempt)
			}
			retryPrompt := revRole.Prompt(1)
			if tc.want != validate.Truncated && tc.want != validate.Refusal && tc.want != validate.MissingFile && !strings.Contains(retryPrompt, "Built-in example") {
				t.Errorf("retry prompt after %s lacks the built-in example:\n%s", tc.want, retryPrompt)
			}
			if !strings.Contains(retryPrompt, "RETRY") {
				t.Errorf("retry prompt after %s lacks the retry notice:\n%s", tc.want, retryPrompt)
			}
			if tc.want == validate.Truncated && calls[1].MaxTokens == 0 {
				t.Errorf("the retry after TRUNCATED carries no raised MaxTokens")
			}
			if status := get(t, cfg, "status.md"); !strings.Contains(status, string(tc.want)) {
				t.Errorf("status.md does not show the %s failure", tc.want)
			}
		})
	}
}

// After MaxRetries failures the person is asked; "edit" gives the list.
func TestDiscoveryEscalationEdit(t *testing.T) {
	eng, rev := oneRound()
	revRole := refinetest.Script(append([]string{"nothing", "nothing", "nothing"}, rev...)...)
	asker := then(refinetest.Answers(refine.Answer{Key: "edit", Text: "- GAP-HOOK-001 (HIGH): Retries\n- GAP-HOOK-002 (MEDIUM): Signatures\n- GAP-HOOK-003 (LOW): Ordering\n"}))
	cfg := discoveryConfig(refinetest.Script(eng...), revRole, asker)
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", out.Status, out.Reason)
	}
	qs := discoveryQuestions(asker)
	if len(qs) != 1 || qs[0].Kind != question.KindEscalation || !strings.Contains(qs[0].Body, "WRONG_FORMAT") {
		t.Fatalf("round-0 questions = %+v, want one escalation naming WRONG_FORMAT", qs)
	}
	if n := len(revRole.Calls()); n != 4 {
		t.Errorf("Reviewer calls = %d, want 3 discovery attempts and one review", n)
	}
}

// The escalation's default with --auto pauses: no list, nothing to guess.
func TestDiscoveryEscalationAutoPauses(t *testing.T) {
	revRole := refinetest.Script("nothing", "nothing", "nothing")
	cfg := discoveryConfig(refinetest.Script(), revRole, auto())
	_, out := run(t, cfg)
	if out.Status != refine.StatusPaused || len(out.Pending) != 1 || out.Pending[0].Kind != question.KindEscalation {
		t.Fatalf("outcome %s pending %+v, want PAUSED at the discovery escalation", out.Status, out.Pending)
	}
}

func TestDiscoveryNoGapsFound(t *testing.T) {
	const none = "NO_GAPS_FOUND\n\n- [x] retry schedule\n- [x] signatures\n"
	t.Run("auto ends COMPLETE", func(t *testing.T) {
		asker := auto()
		cfg := discoveryConfig(refinetest.Script(), refinetest.Script(none), asker)
		s, out := run(t, cfg)
		if out.Status != refine.StatusComplete || out.Round != 0 {
			t.Fatalf("outcome %s round %d (%s), want COMPLETE in round 0", out.Status, out.Round, out.Reason)
		}
		qs := discoveryQuestions(asker)
		if len(qs) != 1 || !strings.Contains(qs[0].Title, "NO_GAPS_FOUND") || !strings.Contains(qs[0].Body, "- [x] signatures") {
			t.Fatalf("questions = %+v, want the NO_GAPS_FOUND confirmation with its checklist", qs)
		}
		if st, _ := s.Status(context.Background()); len(st.Gaps) != 0 {
			t.Errorf("gaps = %+v, want none", st.Gaps)
		}
		if !strings.Contains(get(t, cfg, "final_spec.md"), "Hooks API") {
			t.Errorf("final_spec.md is not the spec as it stands")
		}
	})
	t.Run("person asked", func(t *testing.T) {
		asker := refinetest.Answers(refine.Answer{})
		cfg := discoveryConfig(refinetest.Script(), refinetest.Script(none), asker)
		_, out := run(t, cfg)
		if out.Status != refine.StatusPaused || len(out.Pending) != 1 || out.Pending[0].Kind != question.KindDiscovery {
			t.Fatalf("outcome %s pending %+v, want PAUSED at the confirmation", out.Status, out.Pending)
		}
	})
}

func TestDiscoveryDrop(t *testing.T) {
	ids := []gap.ID{"GAP-HOOK-001", "GAP-HOOK-003"}
	revRole := refinetest.Script(hooksDiscovery, refinetest.ReviewerOutput(1, ids))
	asker := then(refinetest.Answers(refine.Answer{Key: "drop", Text: "GAP-HOOK-002"}))
	cfg := discoveryConfig(refinetest.Script(refinetest.EngineerOutput(ids...)), revRole, asker)
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", out.Status, out.Reason)
	}
	if got := gapStates(t, s); len(got) != 2 || got["GAP-HOOK-002"] != "" {
		t.Errorf("gaps = %v, want GAP-HOOK-001 and GAP-HOOK-003 only", got)
	}
}

// An invalid edit or drop is refused with why; the Asker is asked again.
func TestDiscoveryInvalidAnswerAskedAgain(t *testing.T) {
	eng, rev := oneRound()
	revRole := refinetest.Script(append([]string{hooksDiscovery}, rev...)...)
	asker := then(refinetest.Answers(refine.Answer{Key: "drop", Text: "GAP-HOOK-009"}, refine.Answer{Key: "edit", Text: "not a list"}))
	cfg := discoveryConfig(refinetest.Script(eng...), revRole, asker)
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", out.Status, out.Reason)
	}
	qs := discoveryQuestions(asker)
	if len(qs) != 3 || !strings.Contains(qs[1].Body, "GAP-HOOK-009 is not in the proposed list") || !strings.Contains(qs[2].Body, "Previous answer rejected") {
		t.Fatalf("asked %d times; want the question asked again twice with why", len(qs))
	}
}

func TestDiscoveryRediscover(t *testing.T) {
	eng, rev := oneRound()
	first := "- GAP-HOOK-001 (HIGH): Retry schedule is unspecified\n  Location: \"The retry schedule is not specified\"\n  Why: sizing\n"
	revRole := refinetest.Script(append([]string{first, hooksDiscovery}, rev...)...)
	asker := then(refinetest.Answers(refine.Answer{Key: "rediscover", Text: "Also look at signatures and ordering."}))
	cfg := discoveryConfig(refinetest.Script(eng...), revRole, asker)
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", out.Status, out.Reason)
	}
	if p := revRole.Prompt(1); !strings.Contains(p, "Also look at signatures and ordering.") || strings.Contains(p, "RETRY") {
		t.Errorf("the second discovery prompt lacks the guidance or carries a retry notice:\n%s", p)
	}
	if got := gapStates(t, s); len(got) != 3 {
		t.Errorf("gaps = %v, want the three of the second discovery", got)
	}
	qs := discoveryQuestions(asker)
	if len(qs) != 2 || qs[0].ID == qs[1].ID {
		t.Errorf("questions %+v: want two, with distinct IDs", qs)
	}
}

// refine run --gaps G --discover: discovery proposes additions; one that
// repeats a given gap is DUPLICATE_GAP.
func TestDiscoveryAdditions(t *testing.T) {
	given := []gap.Gap{hooksGaps[0]}
	add := "- GAP-HOOK-002 (MEDIUM): Signature scheme is unspecified\n  Location: \"How deliveries are signed is TBD\"\n  Why: verification\n"
	ids := []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"}
	revRole := refinetest.Script(hooksDiscovery, add, refinetest.ReviewerOutput(1, ids))
	cfg := discoveryConfig(refinetest.Script(refinetest.EngineerOutput(ids...)), revRole, auto())
	cfg.Gaps, cfg.Discover = given, true
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", out.Status, out.Reason)
	}
	if p := revRole.Prompt(0); !strings.Contains(p, "GAP-HOOK-001 (HIGH): Retry schedule is unspecified") {
		t.Errorf("the prompt does not list the given gap:\n%s", p)
	}
	if p := revRole.Prompt(1); !strings.Contains(p, "DUPLICATE GAP") {
		t.Errorf("the retry prompt does not name DUPLICATE_GAP:\n%s", p)
	}
	if got := gapStates(t, s); len(got) != 2 {
		t.Errorf("gaps = %v, want the given one and the addition", got)
	}
}

// A crash while the discovery call is in flight repeats that call once on
// reopen, and only that call.
func TestDiscoveryCrashRepeatsOneCall(t *testing.T) {
	ctx := context.Background()
	eng, rev := oneRound()
	base := memory.New()
	crash := &crashingStore{Store: base}
	calls := 0
	revRole := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		calls++
		if req.Discovery {
			crash.failAt = crash.commits + 1 // the commit after the answer never lands
			return refine.Response{Content: hooksDiscovery}, nil
		}
		return refine.Response{Content: rev[0]}, nil
	})
	cfg := discoveryConfig(refinetest.Script(eng...), revRole, auto())
	cfg.Store = crash
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); !errors.Is(err, errCrash) {
		t.Fatalf("Run: %v, want the crash", err)
	}
	if calls != 1 {
		t.Fatalf("calls before the crash = %d, want 1", calls)
	}
	crash.failAt = 0
	var discoveryCalls []refine.Request
	rev2 := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Discovery {
			discoveryCalls = append(discoveryCalls, req)
			return refine.Response{Content: hooksDiscovery}, nil
		}
		return refine.Response{Content: rev[0]}, nil
	})
	cfg.Reviewer = rev2
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run after reopen: %s, %v; want COMPLETE", out.Status, err)
	}
	if len(discoveryCalls) != 1 || discoveryCalls[0].Call != 1 {
		t.Errorf("discovery calls after reopen = %+v, want the one in flight again (call 1)", discoveryCalls)
	}
}

// The question answered later from another process: the run pauses, a
// new Session over the same Store answers, and the next run plays on.
func TestDiscoveryAnsweredFromAnotherProcess(t *testing.T) {
	ctx := context.Background()
	eng, rev := oneRound()
	revRole := refinetest.Script(append([]string{hooksDiscovery}, rev...)...)
	cfg := discoveryConfig(refinetest.Script(eng...), revRole, refine.DeferAsker{})
	s, out := run(t, cfg)
	_ = s
	if out.Status != refine.StatusPaused || len(out.Pending) != 1 {
		t.Fatalf("outcome %s, want PAUSED at the discovery question", out.Status)
	}
	q := out.Pending[0]
	other, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Answer(ctx, q.ID, refine.Answer{Key: "drop", Text: "GAP-HOOK-404"}); !errors.Is(err, refine.ErrInvalidAnswer) {
		t.Fatalf("Answer dropping an unknown gap: %v, want ErrInvalidAnswer", err)
	}
	if err := other.Answer(ctx, q.ID, refine.Answer{Key: "accept"}); err != nil {
		t.Fatal(err)
	}
	third, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err = third.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run after the answer: %s (%s), %v; want COMPLETE", out.Status, out.Reason, err)
	}
	if n := len(revRole.Calls()); n != 2 {
		t.Errorf("Reviewer calls = %d, want discovery once and one review", n)
	}
}

// A spec whose discovery prompt is above its cap is refused, naming the
// cap, before anything is stored.
func TestDiscoverySpecAboveCap(t *testing.T) {
	cfg := discoveryConfig(refinetest.Script(), refinetest.Script(), auto())
	cfg.PromptBudget = 200
	_, err := refine.New(context.Background(), cfg)
	if !errors.Is(err, refine.ErrInvalidConfig) || !strings.Contains(err.Error(), "cap of 400 tokens") {
		t.Fatalf("New: %v, want ErrInvalidConfig naming the cap", err)
	}
	if keys, _ := cfg.Store.List(context.Background(), ""); len(keys) != 0 {
		t.Errorf("the refused session stored %v", keys)
	}
}

// A discovery answer read as meant (wrapped in a fence, numbered) is
// counted with the Reviewer's NORMALIZED quirks in status.md.
func TestDiscoveryNormalizedCounted(t *testing.T) {
	eng, rev := oneRound()
	wrapped := "```markdown\n" + hooksDiscovery + "```\n"
	revRole := refinetest.Script(append([]string{wrapped}, rev...)...)
	cfg := discoveryConfig(refinetest.Script(eng...), revRole, auto())
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %s (%s), want COMPLETE", out.Status, out.Reason)
	}
	if n := len(revRole.Calls()); n != 2 {
		t.Errorf("Reviewer calls = %d, want the wrapped answer read at once", n)
	}
	if status := get(t, cfg, "status.md"); !strings.Contains(status, "wrapper-fence") {
		t.Errorf("status.md does not count the discovery answer's quirk")
	}
}

// A discovered session rolled back to round 0 keeps the confirmed list:
// round 0 is the state after discovery, so the rounds play again over the
// discovered gaps without a second discovery call or question; the
// discovery's decision and files stay.
func TestDiscoveryKeptByARollbackToRoundZero(t *testing.T) {
	ctx := context.Background()
	eng, rev := oneRound()
	revRole := refinetest.Script(append(append([]string{hooksDiscovery}, rev...), rev...)...)
	engRole := refinetest.Script(append(eng, eng...)...)
	asker := auto()
	cfg := discoveryConfig(engRole, revRole, asker)
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %s, want COMPLETE", out.Status)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "round 1 read the signature gap too narrowly"})
	if err != nil || rep.Round != 0 || len(rep.Undone) != 1 {
		t.Fatalf("rollback = %+v, %v; want round 1 undone", rep, err)
	}
	st, _ := s.Status(ctx)
	var rows []string
	for _, g := range st.Gaps {
		rows = append(rows, string(g.ID)+" "+string(g.State)+" "+g.Location)
	}
	want := []string{`GAP-HOOK-001 OPEN "The retry schedule is not specified"`, `GAP-HOOK-002 OPEN "How deliveries are signed is TBD"`, "GAP-HOOK-003 OPEN 3. Ordering"}
	if diff := cmp.Diff(want, rows); diff != "" || len(st.Pending) != 0 {
		t.Errorf("after the rollback: pending %v, gaps (-want +got):\n%s", st.Pending, diff)
	}
	out, err = s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run after the rollback: %+v, %v", out, err)
	}
	if n := len(discoveryQuestions(asker)); n != 1 {
		t.Errorf("%d discovery questions, want the first one only", n)
	}
	for i, c := range revRole.Calls() {
		if c.Discovery && i > 0 {
			t.Errorf("Reviewer call %d is a second discovery call", i+1)
		}
	}
	if revRole.CallCount() != 3 || engRole.CallCount() != 2 {
		t.Errorf("calls: reviewer %d, engineer %d; want 3 and 2 (discovery once, round 1 twice)", revRole.CallCount(), engRole.CallCount())
	}
	if d := get(t, cfg, "decisions.md"); !strings.Contains(d, "DECISION-R0-001") || !strings.Contains(d, "Accept the list") {
		t.Errorf("decisions.md lost the discovery's decision:\n%s", d)
	}
	get(t, cfg, "discovery/gaps.md")
}
