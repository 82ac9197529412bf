package refine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// Answers given later, from another process (`refine resume --answer`, the
// web console, a Temporal Update), must reach the question they answer as
// a person's answer on a terminal does (issue #23). answerLater opens the
// session anew on cfg's Store, answers the first pending question with key
// and text (key "": its default), runs it, and fails if the same question is still pending (the
// session is stuck).
func answerLater(t *testing.T, cfg refine.Config, key, text string) refine.Outcome {
	t.Helper()
	ctx := context.Background()
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pending) == 0 {
		t.Fatalf("no question pending (outcome %s)", st.Outcome)
	}
	q := st.Pending[0]
	if key == "" {
		key = q.Default
	}
	if err := s.Answer(ctx, q.ID, refine.Answer{Key: key, Text: text}); err != nil {
		t.Fatalf("answer %s with %q: %v", q.ID, key, err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("Run after answering %s: %v", q.ID, err)
	}
	if slices.ContainsFunc(out.Pending, func(p refine.Question) bool { return p.ID == q.ID }) {
		t.Fatalf("stuck: %s (%s) is still pending after it was answered %q and the session ran", q.ID, q.Title, key)
	}
	return out
}

// pendingTitle returns the first pending question's title, or "".
func pendingTitle(o refine.Outcome) string {
	if len(o.Pending) == 0 {
		return ""
	}
	return o.Pending[0].Title
}

func TestBothRolesFailedAnsweredLater(t *testing.T) {
	ctx := context.Background()
	id := gap.ID("GAP-TEST-001")
	bad := "no sections at all"
	// Round 1: a valid proposal, then the Reviewer fails three times.
	// Round 2: the Engineer fails three times, then the Reviewer (of
	// round 1's unreviewed proposal) fails again: both roles failed.
	eng := refinetest.Script(refinetest.EngineerOutput(id), bad, bad, bad)
	rev := refinetest.Script(bad, bad, bad, bad, bad, bad)
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{},
		gap.Gap{ID: id, Title: "first", Severity: gap.High}, gap.Gap{ID: "GAP-TEST-002", Title: "second", Severity: gap.Medium})
	cfg.GapsPerRound = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Skip the Reviewer in round 1, the Engineer and the Reviewer in round 2.
	for range 4 {
		if !strings.Contains(pendingTitle(out), "could not produce valid output") {
			break
		}
		t.Logf("answering %q", pendingTitle(out))
		out = answerLater(t, cfg, "1", "")
	}
	if !strings.Contains(pendingTitle(out), "neither role produced valid output") {
		t.Fatalf("pending %q, want the both-roles-failed question", pendingTitle(out))
	}
	out = answerLater(t, cfg, "3", "") // abandon
	if out.Status != refine.StatusAbandoned {
		t.Errorf("outcome %s after abandoning at the both-roles-failed question (pending %q)", out.Status, pendingTitle(out))
	}
}

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

// A rollback started on a finished session whose archive-cleanup question
// waits: the rollback's own question must be the one an answer reaches
// (the cleanup is asked again when the session ends again).
func TestRollbackOfFinishedSessionWithCleanupPending(t *testing.T) {
	ctx := context.Background()
	eng, rev := approvingRoles()
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{}, highGaps(2)...)
	cfg.GapsPerRound = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Run(ctx); err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("first run: %s %v, %v", out.Status, titles(out.Pending), err)
	}
	// A rollback with adjustments asks nothing; the session completes
	// again, now with an archive: the cleanup question waits.
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "redo round 2", Adjustments: []string{"be precise"}}); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete || !strings.Contains(pendingTitle(out), "ARCHIVE CLEANUP") {
		t.Fatalf("second run: %s pending %q, %v; want COMPLETE with the cleanup question", out.Status, pendingTitle(out), err)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "again"}); err != nil && !errors.Is(err, refine.ErrDeferred) {
		t.Fatal(err)
	}
	st, _ := s.Status(ctx)
	// The round's second rollback: the repeated-rollback question.
	if len(st.Pending) != 1 || !strings.Contains(st.Pending[0].Title, "REPEATED ROLLBACK") {
		t.Fatalf("pending after the rollback request: %v, want the repeated-rollback question alone", titles(st.Pending))
	}
	out = answerLater(t, cfg, "2", "state the limits") // additional context
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Errorf("after the retried round: %s round %d pending %v", out.Status, out.Round, titles(out.Pending))
	}
}

func titles(qs []refine.Question) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.Title)
	}
	return out
}

// highGaps returns n HIGH gaps (no good-enough offer before they close).
func highGaps(n int) []gap.Gap {
	var gs []gap.Gap
	for i := 1; i <= n; i++ {
		gs = append(gs, gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-TEST-%03d", i)), Title: fmt.Sprintf("gap %d", i), Severity: gap.High})
	}
	return gs
}

// A conflict decided in round 2, then round 2 rolled back: the
// decision-recovery question, answered from another process, must be
// taken (issue #23: it stayed pending for good).
func TestDecisionRecoveryAnsweredLater(t *testing.T) {
	ctx := context.Background()
	g1 := gap.ID("GAP-TEST-001")
	issue := refinetest.IssueID(1, 1)
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 2 && slices.Contains(req.Gaps, g1) {
			return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...) + "\n" +
				refinetest.Disagree(issue, "retries are unbounded ("+string(g1)+")", "")}, nil
		}
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 1 {
			return refine.Response{Content: refinetest.ReviewerOutput(1, req.Gaps, refinetest.Issue{Severity: gap.High, Gap: g1, Summary: "retries are unbounded"})}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{}, highGaps(2)...)
	cfg.GapsPerRound = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(out.Pending) > 0 && out.Round < 2; i++ {
		if i > 5 {
			t.Fatalf("no end of round 2: pending %v", titles(out.Pending))
		}
		out = answerLater(t, cfg, out.Pending[0].Default, "")
	}
	s, err = refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Status(ctx)
	if st.Round < 2 || len(st.Decisions) == 0 {
		t.Fatalf("round %d, %d decisions: want round 2 over with its conflict decided", st.Round, len(st.Decisions))
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "redo round 2", Adjustments: []string{"be precise"}}); err != nil {
		t.Fatal(err)
	}
	out, err = s.Run(ctx)
	if err != nil || !strings.Contains(pendingTitle(out), "DECISION RECOVERY") {
		t.Fatalf("after the rollback: %s pending %v, %v; want the decision-recovery question", out.Status, titles(out.Pending), err)
	}
	answerLater(t, cfg, "", "") // the default: leave archived
}

// A key that differs from an offered one only in case is refused by
// Answer, in a Run-driven and a Next-driven session alike, and the refusal
// changes nothing (issue #23: it passed the check, then failed the run).
func TestAnswerKeyMatchedExactly(t *testing.T) {
	ctx := context.Background()
	g1 := gap.ID("GAP-TEST-001")
	issue := refinetest.IssueID(1, 1)
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		out := refinetest.EngineerOutput(req.Gaps...)
		if req.Round == 2 {
			out += "\n" + refinetest.Disagree(issue, "retries are unbounded ("+string(g1)+")", "")
		}
		return refine.Response{Content: out}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 1 {
			return refine.Response{Content: refinetest.ReviewerOutput(1, req.Gaps, refinetest.Issue{Severity: gap.High, Gap: g1, Summary: "retries are unbounded"})}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	for _, driver := range []string{"Run", "Next"} {
		t.Run(driver, func(t *testing.T) {
			cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var out refine.Outcome
			if driver == "Run" {
				if out, err = s.Run(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				out = driveToStop(t, s, cfg.Store, eng, rev)
			}
			if len(out.Pending) == 0 || !strings.HasPrefix(out.Pending[0].ID, "conflict-") {
				t.Fatalf("pending %v, want the conflict question", titles(out.Pending))
			}
			q := out.Pending[0]
			before := storeContents(t, cfg.Store)
			err = s.Answer(ctx, q.ID, refine.Answer{Key: "b", Text: "the host decides"})
			if !errors.Is(err, refine.ErrInvalidAnswer) {
				t.Fatalf("Answer with key \"b\" for option \"B\": %v, want ErrInvalidAnswer", err)
			}
			if diff := cmp.Diff(before, storeContents(t, cfg.Store)); diff != "" {
				t.Errorf("the refused answer changed the store (-before +after):\n%s", diff)
			}
			if err := s.Answer(ctx, q.ID, refine.Answer{Key: "B", Text: "the host decides"}); err != nil {
				t.Fatalf("Answer with the offered key: %v", err)
			}
			if driver == "Run" {
				out, err = s.Run(ctx)
			} else {
				out, err = driveToStop(t, s, cfg.Store, eng, rev), nil
			}
			// B keeps the Engineer's position: the gap is accepted without
			// another review, so the good-enough offer follows (the last
			// review was REVISE).
			if err != nil || slices.ContainsFunc(out.Pending, func(p refine.Question) bool { return p.ID == q.ID }) || st(ctx, s).Gaps[0].State != gap.Accepted {
				t.Errorf("after the offered key: %s %v, %v", out.Status, titles(out.Pending), err)
			}
		})
	}
}

// driveToStop plays s with Next, making its calls with eng and rev, until
// it pauses at a question or ends.
func driveToStop(t *testing.T, s *refine.Session, st refine.Store, eng, rev refine.Role) refine.Outcome {
	t.Helper()
	ctx := context.Background()
	for range 200 {
		r, err := s.Next(ctx, refine.Play{})
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		persist(t, s, st, r)
		if len(r.Calls) == 0 {
			return r.Outcome
		}
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
	}
	t.Fatal("no stop after 200 Next calls")
	return refine.Outcome{}
}

// The Reviewer spent its retries and was skipped: its round's summary
// marks the proposals "unreviewed" and the validation log records
// MAX_RETRIES_EXHAUSTED (FLOW-001 §5; issue #23).
func TestReviewerFailedMarksProposalsUnreviewed(t *testing.T) {
	ctx := context.Background()
	id := gap.ID("GAP-TEST-001")
	bad := "no sections at all"
	eng := refinetest.Script(refinetest.EngineerOutput(id))
	rev := refinetest.Script(bad, bad, bad)
	cfg := refinetest.Config(eng, rev, refinetest.Keys("1")) // skip the Reviewer
	cfg.MaxRounds = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	sum, err := cfg.Store.Get(ctx, "round_001/summary.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "**Unreviewed:** GAP-TEST-001") {
		t.Errorf("round 1 summary does not mark the proposal unreviewed:\n%s", sum)
	}
	md, err := cfg.Store.Get(ctx, "status.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| Reviewer | 3 | Escalation | FAIL | MAX_RETRIES_EXHAUSTED: WRONG_FORMAT after 3 attempts; escalated |") {
		t.Errorf("status.md's validation log lacks the MAX_RETRIES_EXHAUSTED row:\n%s", md)
	}
	if !strings.Contains(string(md), "| Reviewer | FAILED | 3 | WRONG_FORMAT |") {
		t.Errorf("the validation summary counts the escalation row as an attempt:\n%s", md)
	}
	st, _ := s.Status(ctx)
	if g := st.Gaps[0]; g.State != gap.Proposed {
		t.Errorf("%s is %s, want PROPOSED (unreviewed, for the next Reviewer)", g.ID, g.State)
	}
}

// The repeated-rollback question's default is the option it recommends,
// and that default can be taken as it stands (automated mode, a client
// that sends the default): a recommended split names its sub-gaps.
func TestRepeatedRollbackDefaultIsRecommended(t *testing.T) {
	ctx := context.Background()
	eng, rev := approvingRoles()
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{}, highGaps(2)...)
	cfg.GapsPerRound = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for i, reason := range []string{"proposals too abstract", "still no concrete examples"} {
		_, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: reason, Adjustments: []string{"be concrete"}})
		if i == 0 && err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, err := s.Run(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, _ := s.Status(ctx)
	if len(st.Pending) != 1 || st.Pending[0].Title != "REPEATED ROLLBACK DETECTED" {
		t.Fatalf("pending %v, want the repeated-rollback question", titles(st.Pending))
	}
	q := st.Pending[0]
	var recommended string
	for _, o := range q.Options {
		if o.Recommended {
			recommended = o.Key
		}
	}
	if recommended != "2" && q.Default != recommended { // context needs the user's text
		t.Errorf("default %q, recommended %q", q.Default, recommended)
	}
	if o, _ := q.Option("1"); o.Recommended && !strings.Contains(q.Body, "Suggested split:\n  - GAP-TEST-002a: ") {
		t.Errorf("a recommended split names no sub-gaps:\n%s", q.Body)
	}
	answerLater(t, cfg, "", "")
}

// A rollback requested while another question waits (found by the
// simulator, seed 14): the rollback's question is the only one pending, so
// the answer given reaches it; the other question comes back if it still
// applies.
func TestRollbackWhileAQuestionWaits(t *testing.T) {
	ctx := context.Background()
	eng, rev := approvingRoles()
	gaps := []gap.Gap{{ID: "GAP-TEST-001", Title: "first", Severity: gap.High}, {ID: "GAP-TEST-002", Title: "second", Severity: gap.Low},
		{ID: "GAP-TEST-003", Title: "third", Severity: gap.Low}}
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{}, gaps...)
	cfg.GapsPerRound = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Round 1 closed the HIGH gap: the good-enough offer waits.
	if !strings.Contains(strings.ToLower(pendingTitle(out)), "good enough") {
		t.Fatalf("pending %v, want the good-enough offer", titles(out.Pending))
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "start over"}); err != nil && !errors.Is(err, refine.ErrDeferred) {
		t.Fatal(err)
	}
	st, _ := s.Status(ctx)
	if len(st.Pending) != 1 || !strings.Contains(st.Pending[0].Title, "ROLLBACK OPTIONS") {
		t.Fatalf("pending %v, want the rollback options question alone", titles(st.Pending))
	}
	out = answerLater(t, cfg, "1", "")
	if out.Round != 1 || !strings.Contains(strings.ToLower(pendingTitle(out)), "good enough") {
		t.Errorf("after the retried round 1: round %d, pending %v; want the offer again", out.Round, titles(out.Pending))
	}
}

func st(ctx context.Context, s *refine.Session) refine.Status {
	status, _ := s.Status(ctx)
	return status
}
