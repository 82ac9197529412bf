package refine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/rollback"
)

// storeBytes reads every key of the session's store.
func storeBytes(t *testing.T, cfg refine.Config) map[string]string {
	t.Helper()
	ctx := context.Background()
	ks, err := cfg.Store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range ks {
		b, err := cfg.Store.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

// failingAsker refuses every question, as `refine rollback --option` does
// with an option the question does not offer.
type failingAsker struct{ asked []refine.Question }

func (a *failingAsker) Ask(_ context.Context, q refine.Question) (refine.Answer, error) {
	a.asked = append(a.asked, q)
	return refine.Answer{}, errors.New("--option: 9 is not offered")
}

// A rollback whose question the Asker cannot answer changes nothing: no
// question left pending, no write (#40 item 1).
func TestRollbackAskerFailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	_, cfg := roundsSession(t, 2, 0)
	before := storeBytes(t, cfg)
	a := &failingAsker{}
	cfg.Asker = a
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "first try"})
	if err == nil || len(a.asked) != 1 || len(rep.Undone) != 0 {
		t.Fatalf("rollback = %+v, %v after %d questions; want the Asker's error after one", rep, err, len(a.asked))
	}
	if diff := cmp.Diff(before, storeBytes(t, cfg)); diff != "" {
		t.Errorf("the store changed (-before +after):\n%s", diff)
	}
	st, err := s.Status(ctx)
	if err != nil || st.Outcome != refine.StatusComplete || len(st.Pending) != 0 {
		t.Errorf("status after the refusal = %s with %d pending, %v; want COMPLETE with none", st.Outcome, len(st.Pending), err)
	}
}

// Every rollback dialog offers "cancel", which leaves the session exactly
// as before the request (#40 item 1; DESIGN §12).
func TestRollbackCancelInEveryDialog(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, title string
		setup       func(*refine.Settings)
		earlier     bool // a first rollback (not cancelled) before the one cancelled
	}{
		{"options", "ROUND 2 ROLLBACK OPTIONS", nil, false},
		{"root-cause analysis", "ROLLBACK ROOT CAUSE ANALYSIS", func(c *refine.Settings) { c.RollbackMode = rollback.ModeStrict }, false},
		{"repeated rollback", "REPEATED ROLLBACK DETECTED", nil, true},
		{"limit", "SESSION ROLLBACK LIMIT REACHED", func(c *refine.Settings) { c.RollbackLimit = 1 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := roundsSession(t, 2, 0)
			sc := &script{answers: []scripted{{tc.title, refine.Answer{Key: "cancel"}}}}
			cfg.Asker = sc
			s, err := refine.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				set := s.Settings()
				tc.setup(&set)
				if err := s.SetSettings(ctx, set); err != nil {
					t.Fatal(err)
				}
			}
			if tc.earlier {
				// Rolled back and played again: round 2's second rollback follows.
				if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "first", Adjustments: []string{"be concrete"}}); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
			before := storeBytes(t, cfg)
			stBefore, _ := s.Status(ctx)
			sc.asked = nil
			rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "again"})
			if err != nil || !rep.Cancelled || len(rep.Undone) != 0 {
				t.Fatalf("rollback = %+v, %v; asked %v", rep, err, sc.titles())
			}
			q, ok := sc.find(tc.title)
			if !ok {
				t.Fatalf("%s not asked; asked %v", tc.title, sc.titles())
			}
			if o, ok := q.Option("cancel"); !ok || !strings.HasPrefix(o.Label, "Cancel the rollback") {
				t.Errorf("%s offers no cancel: %+v", tc.title, q.Options)
			}
			if diff := cmp.Diff(before, storeBytes(t, cfg)); diff != "" {
				t.Errorf("cancel changed the store (-before +after):\n%s", diff)
			}
			if st, _ := s.Status(ctx); st.Outcome != stBefore.Outcome || len(st.Rollbacks) != len(stBefore.Rollbacks) || len(st.Decisions) != len(stBefore.Decisions) {
				t.Errorf("status after cancel: %s, %d rollbacks, %d decisions; before %s, %d, %d", st.Outcome, len(st.Rollbacks), len(st.Decisions),
					stBefore.Outcome, len(stBefore.Rollbacks), len(stBefore.Decisions))
			}
		})
	}
}

// A rollback left waiting is answered by the same request only: one with
// another target or reason is refused, naming the waiting one, and changes
// nothing; the waiting one's "cancel" brings back the questions it set
// aside (#40 item 1).
func TestRollbackRequestOtherThanThePendingOne(t *testing.T) {
	ctx := context.Background()
	_, cfg := roundsSession(t, 2, 0)
	cfg.Asker = refine.DeferAsker{}
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "first try"})
	if err != nil || len(rep.Pending) != 1 {
		t.Fatalf("deferred rollback = %+v, %v", rep, err)
	}
	if st, _ := s.Status(ctx); st.Outcome != refine.StatusComplete || len(st.Pending) != 1 {
		t.Errorf("while the rollback waits: %s with %d pending, want COMPLETE with 1", st.Outcome, len(st.Pending))
	}
	waiting := storeBytes(t, cfg)
	_, err = s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "only undo round 2"})
	var pe *refine.PendingRollbackError
	if !errors.Is(err, refine.ErrRollbackPending) || !errors.As(err, &pe) || pe.Round != 2 || pe.To != 1 || pe.Reason != "first try" || pe.Question != rep.Pending[0].ID {
		t.Fatalf("other request = %v (%+v), want a PendingRollbackError naming round 2 to 1, \"first try\"", err, pe)
	}
	if !strings.Contains(err.Error(), `"cancel"`) {
		t.Errorf("the refusal does not say how to cancel: %v", err)
	}
	if diff := cmp.Diff(waiting, storeBytes(t, cfg)); diff != "" {
		t.Errorf("the refused request changed the store (-before +after):\n%s", diff)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "first try"}); !errors.Is(err, refine.ErrDeferred) {
		t.Errorf("the same request again = %v, want ErrDeferred (it waits)", err)
	}
	if err := s.Answer(ctx, rep.Pending[0].ID, refine.Answer{Key: "cancel"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Status(ctx)
	if st.Outcome != refine.StatusComplete || len(st.Rollbacks) != 0 || st.Round != 2 || len(st.Pending) != 0 {
		t.Errorf("after cancel: %s after round %d, %d rollbacks, %d pending", st.Outcome, st.Round, len(st.Rollbacks), len(st.Pending))
	}
	if d := get(t, cfg, "decisions.md"); strings.Contains(d, "ROLLBACK") {
		t.Errorf("decisions.md records the cancelled rollback:\n%s", d)
	}
}

// "cancel" in the dialog of a rollback chosen in the divergence question
// goes back to that question, which is asked again (#40 item 1).
func TestDivergenceRollbackCancelAsksAgain(t *testing.T) {
	ctx := context.Background()
	sc := &script{answers: []scripted{
		{"Divergence", refine.Answer{Key: "rollback", Text: "the last round went astray"}},
		{"ROUND 3 ROLLBACK OPTIONS", refine.Answer{Key: "cancel"}},
		{"Divergence", refine.Answer{Key: "stop"}},
	}}
	s, err := refine.New(ctx, divergingConfig(sc))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v (asked %v)", err, sc.titles())
	}
	var got []string
	for _, title := range sc.titles() {
		if strings.HasPrefix(title, "Divergence") || strings.Contains(title, "ROLLBACK") {
			got = append(got, title)
		}
	}
	if diff := cmp.Diff([]string{"Divergence warning after round 3", "ROUND 3 ROLLBACK OPTIONS", "Divergence warning after round 3"}, got); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	st, _ := s.Status(ctx)
	if out.Status != refine.StatusStallExit || len(st.Rollbacks) != 0 {
		t.Errorf("outcome %s with %d rollbacks, want STALL_EXIT without any", out.Status, len(st.Rollbacks))
	}
}
