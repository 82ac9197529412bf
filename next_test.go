package refine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// drive plays s with Next as a durable-execution host would: it makes the
// calls Next returns itself (with eng and rev), delivers them, and answers
// questions with asker. It returns the final outcome and every Ready.
func drive(t *testing.T, s *refine.Session, st refine.Store, eng, rev refine.Role, asker refine.Asker) (refine.Outcome, []refine.Ready) {
	t.Helper()
	ctx := context.Background()
	var readies []refine.Ready
	for range 200 {
		r, err := s.Next(ctx, refine.Play{})
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		persist(t, s, st, r)
		readies = append(readies, r)
		switch {
		case len(r.Calls) > 0:
			for _, req := range r.Calls {
				role := eng
				if req.Role == refine.Reviewer {
					role = rev
				}
				resp, err := role.Respond(ctx, req)
				if err != nil {
					t.Fatalf("%s call %d: %v", req.Role, req.Call, err)
				}
				if err := s.Deliver(ctx, req, resp); err != nil {
					t.Fatalf("Deliver: %v", err)
				}
			}
		case len(r.Outcome.Pending) > 0:
			q := r.Outcome.Pending[0]
			a, err := asker.Ask(ctx, q)
			if err != nil {
				t.Fatalf("ask %s: %v", q.ID, err)
			}
			if err := s.Answer(ctx, q.ID, a); err != nil {
				t.Fatalf("Answer: %v", err)
			}
		default:
			return r.Outcome, readies
		}
	}
	t.Fatal("no outcome after 200 Next calls")
	return refine.Outcome{}, nil
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

// nextScenario is a session with a retry, an escalation question answered
// with context, a Reviewer issue and a second round.
func nextScenario() (eng, rev func() refine.Role, cfg func(eng, rev refine.Role, asker refine.Asker) refine.Config) {
	eng = func() refine.Role {
		return refinetest.Script("not a proposal", "still not", "nope", engineerDoc("GAP-TEST-001"),
			refinetest.Revision("GAP-TEST-001", "ISSUE-R1-001", ""))
	}
	rev = func() refine.Role {
		return refinetest.Script(
			refinetest.ReviewerOutput(1, []gap.ID{"GAP-TEST-001"}, refinetest.Issue{Severity: gap.High, Summary: "the retry bound is missing"}),
			refinetest.ReviewerOutput(2, []gap.ID{"GAP-TEST-001"}))
	}
	cfg = func(eng, rev refine.Role, asker refine.Asker) refine.Config {
		c := refinetest.Config(eng, rev, asker)
		clock := refinetest.NewClock()
		clock.Step = 0 // one instant: both runs read the same times
		c.Clock = clock
		return c
	}
	return eng, rev, cfg
}

// Next and Deliver play a session exactly as Run does: the same outcome
// and, key for key, the same session in the Store.
func TestNextPlaysAsRun(t *testing.T) {
	ctx := context.Background()
	mkEng, mkRev, mkCfg := nextScenario()
	answers := func() *refinetest.Asker {
		return refinetest.Answers(refine.Answer{Key: "3", Text: "Use ## Gap Resolution headers"})
	}

	runCfg := mkCfg(mkEng(), mkRev(), answers())
	runCfg.Store = memory.New()
	byRun, err := refine.New(ctx, runCfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := byRun.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}

	eng, rev := mkEng(), mkRev()
	nextCfg := mkCfg(refinetest.Script(), refinetest.Script(), refine.DeferAsker{}) // Next calls neither
	nextCfg.Store = memory.New()
	byNext, err := refine.New(ctx, nextCfg)
	if err != nil {
		t.Fatal(err)
	}
	got, readies := drive(t, byNext, nextCfg.Store, eng, rev, answers())
	if want.Status != refine.StatusComplete || got.Status != want.Status || got.Round != want.Round {
		t.Fatalf("Next ended %s after round %d; Run ended %s after round %d", got.Status, got.Round, want.Status, want.Round)
	}
	// The same session, but for how it got there: Next pauses at the
	// question (Run's Asker answered at once), so its journal has more
	// records, which state.json and the backups point into.
	facts := func(st refine.Store) map[string]string {
		m := storeContents(t, st)
		for k := range m {
			if strings.HasPrefix(k, "journal/") || strings.HasPrefix(k, "state") || k == store.SummaryKey {
				delete(m, k)
			}
		}
		return m
	}
	if diff := cmp.Diff(facts(runCfg.Store), facts(nextCfg.Store)); diff != "" {
		t.Errorf("the sessions differ (-Run +Next):\n%s", diff)
	}
	runStatus, _ := byRun.Status(ctx)
	nextStatus, _ := byNext.Status(ctx)
	if diff := cmp.Diff(runStatus, nextStatus); diff != "" {
		t.Errorf("the statuses differ (-Run +Next):\n%s", diff)
	}
	var calls int
	for _, r := range readies {
		calls += len(r.Calls)
		if len(r.Calls) > 0 && r.Outcome.Status != refine.StatusRunning {
			t.Errorf("a Ready with calls says %s, want RUNNING", r.Outcome.Status)
		}
	}
	if calls != 7 {
		t.Errorf("Next asked for %d calls, want 7 (5 Engineer, 2 Reviewer)", calls)
	}
}

// Parallel drafting hands every part's call to the caller at once.
func TestNextReturnsParallelCallsTogether(t *testing.T) {
	ctx := context.Background()
	gaps := []gap.Gap{{ID: "GAP-TEST-001", Title: "One", Severity: gap.High}, {ID: "GAP-TEST-002", Title: "Two", Severity: gap.High}}
	cfg := refinetest.Config(refinetest.Script(), refinetest.Script(), refine.DeferAsker{}, gaps...)
	cfg.ParallelGaps = 2
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Next(ctx, refine.Play{})
	if err != nil {
		t.Fatal(err)
	}
	persist(t, s, cfg.Store, r)
	if len(r.Calls) != 2 || r.Calls[0].Call == r.Calls[1].Call || len(r.Calls[0].Gaps) != 1 {
		t.Fatalf("first Ready: %d calls %+v, want one Engineer call per gap", len(r.Calls), r.Calls)
	}
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: engineerDoc(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: reviewerDoc(req.Round, joinIDs(req.Gaps))}, nil
	})
	for _, req := range r.Calls {
		resp, _ := eng.Respond(ctx, req)
		if err := s.Deliver(ctx, req, resp); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := drive(t, s, cfg.Store, eng, rev, refine.DefaultAsker{})
	if out.Status != refine.StatusComplete {
		t.Errorf("outcome %s (%s), want COMPLETE", out.Status, out.Reason)
	}
}

// A response for a call Next did not ask for is refused; a call asked for
// before a crash is asked for again, with the same call number, after Open.
func TestNextDeliverAndReopen(t *testing.T) {
	ctx := context.Background()
	s, store := deferredSession(t)
	r, err := s.Next(ctx, refine.Play{})
	if err != nil || len(r.Calls) != 1 {
		t.Fatalf("Next: %v, %d calls", err, len(r.Calls))
	}
	persist(t, s, store, r)
	stray := r.Calls[0]
	stray.Call++
	if err := s.Deliver(ctx, stray, refine.Response{Content: "x"}); !errors.Is(err, refine.ErrUnknownCall) {
		t.Errorf("Deliver of an unasked call: %v, want ErrUnknownCall", err)
	}

	// The process dies here; another opens the session.
	_, r2 := reopenAndNext(t, store)
	if diff := cmp.Diff(r.Calls, r2.Calls); diff != "" {
		t.Errorf("after reopening, Next asks for other calls (-before +after):\n%s", diff)
	}
}

// deferredSession starts a one-gap session on a memory store whose
// questions defer, for driving with Next.
func deferredSession(t *testing.T) (*refine.Session, refine.Store) {
	t.Helper()
	store := memory.New()
	cfg := refinetest.Config(refinetest.Script(), refinetest.Script(), refine.DeferAsker{})
	cfg.Store = store
	s, err := refine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, store
}

// reopenAndNext opens the session in store, as another process would,
// and plays it to its next Ready.
func reopenAndNext(t *testing.T, store refine.Store) (*refine.Session, refine.Ready) {
	t.Helper()
	ctx := context.Background()
	cfg := refinetest.Config(refinetest.Script(), refinetest.Script(), refine.DeferAsker{})
	cfg.Store = store
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Next(ctx, refine.Play{})
	if err != nil {
		t.Fatal(err)
	}
	return s, r
}

// Next writes nothing itself: its decisions reach the Store only when the
// caller commits Ready.Persist, Status reports them only after Advance,
// and until then the session takes no other call. A process that dies
// before persisting resumes from what was persisted and asks for the same
// call again.
func TestNextHandsOverItsWrites(t *testing.T) {
	ctx := context.Background()
	s, store := deferredSession(t)
	before := storeContents(t, store)
	statusBefore, _ := s.Status(ctx)
	r, err := s.Next(ctx, refine.Play{})
	if err != nil || len(r.Calls) != 1 || len(r.Persist) == 0 {
		t.Fatalf("Next: %v, %d calls, %d writes", err, len(r.Calls), len(r.Persist))
	}
	if diff := cmp.Diff(before, storeContents(t, store)); diff != "" {
		t.Errorf("Next wrote to the Store itself (-before +after):\n%s", diff)
	}
	if st, _ := s.Status(ctx); st.Round != statusBefore.Round || st.Phase != statusBefore.Phase {
		t.Errorf("Status reports round %d %s before Advance; it was round %d %s", st.Round, st.Phase, statusBefore.Round, statusBefore.Phase)
	}
	if err := s.Deliver(ctx, r.Calls[0], refine.Response{Content: engineerDoc(r.Calls[0].Gaps...)}); !errors.Is(err, refine.ErrNotPersisted) {
		t.Errorf("Deliver before Advance = %v, want ErrNotPersisted", err)
	}
	if _, err := s.Next(ctx, refine.Play{}); !errors.Is(err, refine.ErrNotPersisted) {
		t.Errorf("Next before Advance = %v, want ErrNotPersisted", err)
	}

	// The process dies before persisting; another opens the session.
	again, r2 := reopenAndNext(t, store)
	if diff := cmp.Diff(r.Calls, r2.Calls); diff != "" {
		t.Errorf("after an unpersisted Ready, Next asks for other calls (-before +after):\n%s", diff)
	}
	promptOf := func(r refine.Ready) string {
		for _, op := range r.Persist {
			if op.Key == "round_001/prompts/engineer-1.md" {
				return string(op.Value)
			}
		}
		return ""
	}
	if p1, p2 := promptOf(r), promptOf(r2); p1 == "" || p1 != p2 {
		t.Errorf("the second Next built another prompt:\n%.200s\nvs\n%.200s", p1, p2)
	}
	persist(t, again, store, r2)
	if st, _ := again.Status(ctx); st.Phase == statusBefore.Phase && st.Round == statusBefore.Round {
		t.Errorf("Status after Advance still reports round %d %s", st.Round, st.Phase)
	}
}

// Next carries the discovery call like any role call: a session given no
// gaps hands the host the Reviewer's discovery request (round 0, marked
// Discovery, numbered apart), then the confirmation question, and plays
// to the same session as Run.
func TestNextCarriesDiscovery(t *testing.T) {
	ctx := context.Background()
	const spec = "# Hooks\n\n## 1. Delivery\n\nThe retry schedule is not specified (GAP-HOOK-001).\n"
	const found = "- GAP-HOOK-001 (HIGH): Retry schedule is unspecified\n  Location: \"The retry schedule is not specified\"\n  Why: receivers cannot size their windows\n"
	mkEng := func() refine.Role { return refinetest.Script(engineerDoc("GAP-HOOK-001")) }
	mkRev := func() refine.Role {
		return refinetest.Script(found, refinetest.ReviewerOutput(1, []gap.ID{"GAP-HOOK-001"}))
	}
	mkCfg := func(eng, rev refine.Role, asker refine.Asker) refine.Config {
		c := refinetest.Config(eng, rev, asker)
		c.Spec, c.Gaps = spec, nil
		clock := refinetest.NewClock()
		clock.Step = 0
		c.Clock = clock
		return c
	}
	runCfg := mkCfg(mkEng(), mkRev(), &refinetest.Asker{DefaultAfterScript: true})
	byRun, err := refine.New(ctx, runCfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := byRun.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nextCfg := mkCfg(refinetest.Script(), refinetest.Script(), refine.DeferAsker{})
	byNext, err := refine.New(ctx, nextCfg)
	if err != nil {
		t.Fatal(err)
	}
	got, readies := drive(t, byNext, nextCfg.Store, mkEng(), mkRev(), &refinetest.Asker{DefaultAfterScript: true})
	if want.Status != refine.StatusComplete || got.Status != want.Status || got.Round != want.Round {
		t.Fatalf("Next ended %s after round %d; Run ended %s after round %d", got.Status, got.Round, want.Status, want.Round)
	}
	first := readies[0]
	if len(first.Calls) != 1 || !first.Calls[0].Discovery || first.Calls[0].Role != refine.Reviewer || first.Calls[0].Round != 0 || first.Calls[0].Call != 1 {
		t.Fatalf("first Ready's calls = %+v, want the discovery call", first.Calls)
	}
	var asked bool
	for _, r := range readies {
		for _, q := range r.Outcome.Pending {
			asked = asked || (q.Kind == refine.KindDiscovery && q.Round == 0)
		}
	}
	if !asked {
		t.Errorf("no Ready carried the discovery question")
	}
	runStatus, _ := byRun.Status(ctx)
	nextStatus, _ := byNext.Status(ctx)
	if diff := cmp.Diff(runStatus, nextStatus); diff != "" {
		t.Errorf("the statuses differ (-Run +Next):\n%s", diff)
	}
}
