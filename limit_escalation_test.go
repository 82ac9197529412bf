package refine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// A rollback chosen in the Engineer's escalation question that meets the
// session's rollback limit, answered "accept" there at once (a terminal,
// an automated policy), ends the session: the escalation is not asked
// again on the finished session (found by the session simulator, #23:
// seed 1527, where it stayed pending for good). Answered later
// (deferred), it worked.
func TestLimitAcceptFromEscalationEndsTheSession(t *testing.T) {
	for _, now := range []bool{false, true} {
		t.Run(map[bool]string{false: "deferred", true: "at once"}[now], func(t *testing.T) { limitAcceptFromEscalation(t, now) })
	}
}

func limitAcceptFromEscalation(t *testing.T, now bool) {
	ctx := context.Background()
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 1 {
			return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
		}
		return refine.Response{Content: "not a proposal"}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	var limitAnswered bool
	asker := refine.AskerFunc(func(_ context.Context, q refine.Question) (refine.Answer, error) {
		if !now || !strings.Contains(q.ID, "rollback-limit") {
			return refine.Answer{}, refine.ErrDeferred
		}
		for _, o := range q.Options {
			if strings.HasPrefix(o.Label, "Accept") {
				limitAnswered = true
				return refine.Answer{Key: o.Key}, nil
			}
		}
		return refine.Answer{}, refine.ErrDeferred
	})
	cfg := refinetest.Config(eng, rev, asker,
		gap.Gap{ID: "GAP-TEST-001", Title: "The first gap", Severity: gap.High},
		gap.Gap{ID: "GAP-TEST-002", Title: "The second gap", Severity: gap.High})
	cfg.GapsPerRound, cfg.MaxRetries, cfg.RollbackLimit = 1, 0, 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	answer := func(q refine.Question, key string) {
		t.Helper()
		a := refine.Answer{Key: key}
		if slices.Contains(q.TextRequired, key) {
			a.Text = "a reason"
		}
		if err := s.Answer(ctx, q.ID, a); err != nil {
			t.Fatal(err)
		}
	}
	optionKey := func(q refine.Question, label string) string {
		for _, o := range q.Options {
			if strings.HasPrefix(o.Label, label) {
				return o.Key
			}
		}
		t.Fatalf("%s offers no %q: %+v", q.ID, label, q.Options)
		return ""
	}
	for range 20 {
		o, err := s.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if o.Status.Terminal() {
			break
		}
		if len(o.Pending) == 0 {
			t.Fatalf("Run = %+v, want a pause at a question or the end", o)
		}
		q := o.Pending[0]
		switch {
		case limitAnswered:
			t.Fatalf("after accepting at the rollback limit the session is %s with %s pending", o.Status, q.ID)
		case q.Kind == refine.KindEscalation:
			answer(q, optionKey(q, "Roll back"))
		case strings.Contains(q.ID, "rollback-limit"):
			answer(q, optionKey(q, "Accept"))
			limitAnswered = true
		default:
			answer(q, q.Default)
		}
	}
	st, _ := s.Status(ctx)
	if !limitAnswered || st.Outcome != refine.StatusUserApproved || slices.ContainsFunc(st.Pending, func(q refine.Question) bool { return q.Title != "ARCHIVE CLEANUP" }) {
		t.Errorf("limit question answered: %v; status %s, pending %v; want USER_APPROVED and no question but the archive cleanup", limitAnswered, st.Outcome, st.Pending)
	}
}
