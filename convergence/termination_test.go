package convergence

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func TestDecide(t *testing.T) {
	var (
		done = func(t *testing.T) *gap.Ledger {
			return ledgerOf(t, g(1, gap.High, gap.Accepted), g(2, gap.Low, gap.Deferred))
		}
		polishLeft = func(t *testing.T) *gap.Ledger {
			return ledgerOf(t, g(1, gap.High, gap.Accepted), g(2, gap.Medium, gap.Open), g(3, gap.Low, gap.Proposed))
		}
		highLeft = func(t *testing.T) *gap.Ledger {
			return ledgerOf(t, g(1, gap.High, gap.NeedsRevision), g(2, gap.Low, gap.Open))
		}
		allBlocked = func(t *testing.T) *gap.Ledger {
			return ledgerOf(t, g(1, gap.High, gap.Blocked), g(2, gap.Low, gap.Blocked), g(3, gap.Low, gap.Accepted))
		}
		someBlocked = func(t *testing.T) *gap.Ledger {
			return ledgerOf(t, g(1, gap.Low, gap.Blocked), g(2, gap.Low, gap.Open))
		}
		blocking = func(t *testing.T) *gap.Ledger {
			b := g(1, gap.Medium, gap.Open)
			b.Blocking = true
			return ledgerOf(t, b)
		}
		critical = ConflictBlock{UnresolvedCritical: 1}
		high     = ConflictBlock{UnresolvedHigh: 2}
	)
	type want struct {
		outcome               Outcome
		offer, decisions, ack bool
		reason                string // substring of Verdict.Reason
	}
	tests := []struct {
		name   string
		ledger func(*testing.T) *gap.Ledger
		in     Input // Ledger is filled from ledger
		want   want
	}{
		// Outcomes.
		{"COMPLETE: no open gaps and APPROVE", done, Input{Round: 4, MaxRounds: 10, LastReviewApproved: true}, want{outcome: Complete, reason: "no open gaps"}},
		{"COMPLETE wins at the round limit", done, Input{Round: 10, MaxRounds: 10, LastReviewApproved: true}, want{outcome: Complete}},
		{"COMPLETE wins over a standing accept", done, Input{Round: 3, LastReviewApproved: true, Choice: ChoiceAccept}, want{outcome: Complete}},
		{"no open gaps without APPROVE continues and offers", done, Input{Round: 4, MaxRounds: 10}, want{outcome: Continue, offer: true}},
		{"GOOD_ENOUGH: accepted with only polish left", polishLeft, Input{Round: 5, MaxRounds: 10, Choice: ChoiceAccept}, want{outcome: GoodEnough, reason: "2 open gaps (0 Critical, 0 High, 1 Medium, 1 Low)"}},
		{"USER_APPROVED: accepted with a HIGH gap open", highLeft, Input{Round: 5, Choice: ChoiceAccept}, want{outcome: UserApproved, reason: "1 CRITICAL/HIGH gap(s) open"}},
		{"USER_APPROVED: force complete", polishLeft, Input{Round: 5, Choice: ChoiceForceComplete}, want{outcome: UserApproved}},
		{"MAX_ROUNDS", highLeft, Input{Round: 10, MaxRounds: 10}, want{outcome: MaxRounds, reason: "limit of 10 rounds"}},
		{"MAX_ROUNDS past the limit", polishLeft, Input{Round: 12, MaxRounds: 10}, want{outcome: MaxRounds}},
		{"no limit when MaxRounds is 0", highLeft, Input{Round: 99}, want{outcome: Continue}},
		{"STALL_EXIT", highLeft, Input{Round: 3, Choice: ChoiceStop}, want{outcome: StallExit}},
		{"ABANDONED", highLeft, Input{Round: 3, Choice: ChoiceAbandon}, want{outcome: Abandoned}},
		{"PAUSED by choice", highLeft, Input{Round: 3, Choice: ChoicePause}, want{outcome: Paused}},
		{"PAUSED on pending questions", done, Input{Round: 3, LastReviewApproved: true, PendingQuestions: 2}, want{outcome: Paused, reason: "2 question(s)"}},
		{"FAILED", highLeft, Input{Round: 3, Failure: "store: disk full"}, want{outcome: Failed, reason: "disk full"}},
		{"ABANDONED wins over FAILED", highLeft, Input{Choice: ChoiceAbandon, Failure: "boom"}, want{outcome: Abandoned}},
		{"CONTINUE with HIGH gaps open", highLeft, Input{Round: 3, MaxRounds: 10}, want{outcome: Continue}},
		{"CONTINUE after declining keeps going", polishLeft, Input{Round: 3, Choice: ChoiceContinue, OfferedOpenSet: offeredBefore}, want{outcome: Continue}},
		{"every open gap BLOCKED: present decisions", allBlocked, Input{Round: 3, MaxRounds: 10}, want{outcome: Continue, decisions: true, reason: "blocked"}},
		{"some gaps BLOCKED: no offer, no decisions flag", someBlocked, Input{Round: 3}, want{outcome: Continue}},
		{"open Blocking gap: no offer", blocking, Input{Round: 3}, want{outcome: Continue}},

		// Conflict blocking (GAP-FLOW-006 §8).
		{"CRITICAL conflict blocks COMPLETE", done, Input{Round: 4, LastReviewApproved: true, Conflicts: critical}, want{outcome: Continue, decisions: true, reason: "CRITICAL conflict"}},
		{"CRITICAL conflict blocks MAX_ROUNDS", highLeft, Input{Round: 10, MaxRounds: 10, Conflicts: critical}, want{outcome: Continue, decisions: true}},
		{"CRITICAL conflict blocks GOOD_ENOUGH", polishLeft, Input{Round: 4, Choice: ChoiceAccept, Conflicts: critical}, want{outcome: Continue, decisions: true}},
		{"CRITICAL conflict blocks USER_APPROVED even acknowledged", polishLeft, Input{Round: 4, Choice: ChoiceForceComplete, HighConflictsAcknowledged: true, Conflicts: critical}, want{outcome: Continue, decisions: true}},
		{"CRITICAL conflict blocks STALL_EXIT", highLeft, Input{Round: 4, Choice: ChoiceStop, Conflicts: critical}, want{outcome: Continue, decisions: true}},
		{"CRITICAL conflict allows ABANDONED", highLeft, Input{Round: 4, Choice: ChoiceAbandon, Conflicts: critical}, want{outcome: Abandoned}},
		{"HIGH conflict blocks COMPLETE", done, Input{Round: 4, LastReviewApproved: true, Conflicts: high}, want{outcome: Continue}},
		{"HIGH conflict blocks GOOD_ENOUGH and asks acknowledgment", polishLeft, Input{Round: 4, Choice: ChoiceAccept, Conflicts: high}, want{outcome: Continue, ack: true, reason: "2 unresolved HIGH"}},
		{"HIGH conflict: USER_APPROVED needs acknowledgment", polishLeft, Input{Round: 4, Choice: ChoiceForceComplete, Conflicts: high}, want{outcome: Continue, ack: true}},
		{"HIGH conflict: USER_APPROVED once acknowledged", polishLeft, Input{Round: 4, Choice: ChoiceForceComplete, Conflicts: high, HighConflictsAcknowledged: true}, want{outcome: UserApproved, reason: "HIGH/CRITICAL conflict(s) unresolved"}},
		{"HIGH conflict: accept acknowledged is USER_APPROVED, not GOOD_ENOUGH", polishLeft, Input{Round: 4, Choice: ChoiceAccept, Conflicts: high, HighConflictsAcknowledged: true}, want{outcome: UserApproved}},
		{"HIGH conflict does not block MAX_ROUNDS", highLeft, Input{Round: 10, MaxRounds: 10, Conflicts: high}, want{outcome: MaxRounds}},
		{"HIGH conflict does not block STALL_EXIT", highLeft, Input{Round: 4, Choice: ChoiceStop, Conflicts: high}, want{outcome: StallExit}},
		{"HIGH conflict suppresses the offer", polishLeft, Input{Round: 4, Conflicts: high}, want{outcome: Continue}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Ledger = tt.ledger(t)
			if in.OfferedOpenSet == offeredBefore {
				in.OfferedOpenSet = OpenSetFingerprint(in.Ledger) // the user declined this very set
			}
			d := Decide(in)
			got := want{outcome: d.Outcome, offer: d.OfferEarlyTermination, decisions: d.NeedsUserDecisions, ack: d.NeedsAcknowledgment, reason: tt.want.reason}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("Decide (-want +got):\n%s\nreason: %s", diff, d.Reason)
			}
			if d.Reason == "" || !strings.Contains(d.Reason, tt.want.reason) {
				t.Errorf("Reason = %q, want it to contain %q", d.Reason, tt.want.reason)
			}
			if d.OpenSet != OpenSetFingerprint(in.Ledger) {
				t.Errorf("OpenSet = %q, want the ledger's fingerprint", d.OpenSet)
			}
		})
	}
}

// TestEarlyTerminationOfferedOncePerOpenSet plays a session where the
// good-enough criteria start to hold and checks that the host, storing
// Verdict.OpenSet whenever it makes the offer, asks exactly when the open
// set changes.
func TestEarlyTerminationOfferedOncePerOpenSet(t *testing.T) {
	l := ledgerOf(t, g(1, gap.High, gap.Open), g(2, gap.Medium, gap.Open), g(3, gap.Low, gap.Open), g(4, gap.Low, gap.Open))
	offered := ""
	check := func(round int, wantOffer bool) {
		t.Helper()
		d := Decide(Input{Round: round, MaxRounds: 10, Ledger: l, OfferedOpenSet: offered})
		if d.OfferEarlyTermination != wantOffer {
			t.Errorf("round %d: offer = %v, want %v (open set %q, offered %q)", round, d.OfferEarlyTermination, wantOffer, d.OpenSet, offered)
		}
		if d.OfferEarlyTermination {
			offered = d.OpenSet // the user answered Continue
		}
	}
	check(1, false) // HIGH gap open: not good enough
	accept(t, l, gid(1), 2)
	check(2, true) // criteria first hold
	move(t, l, gid(2), 3, gap.InProgress, gap.Proposed)
	check(3, false) // same open set, only lifecycle moves
	check(4, false)
	accept(t, l, gid(3), 5)
	check(5, true) // open set shrank
	check(6, false)
	if err := l.SetSeverity(gid(4), gap.Medium); err != nil {
		t.Fatal(err)
	}
	check(7, true) // severity change counts as a change of the set
	if err := l.SetSeverity(gid(4), gap.High); err != nil {
		t.Fatal(err)
	}
	check(8, false) // not good enough any more
	if err := l.SetSeverity(gid(4), gap.Medium); err != nil {
		t.Fatal(err)
	}
	check(9, false) // back to the set already offered
}

// offeredBefore stands, in a test table, for the fingerprint of the
// test's own open set.
const offeredBefore = "(offered before)"

func TestShouldOffer(t *testing.T) {
	l := ledgerOf(t, g(2, gap.Medium, gap.Open), g(1, gap.Low, gap.Proposed), g(3, gap.Critical, gap.Accepted))
	offer, set := ShouldOffer(l, ConflictBlock{}, "")
	same := ledgerOf(t, g(1, gap.Low, gap.Open), g(2, gap.Medium, gap.NeedsRevision))
	if !offer || set != OpenSetFingerprint(same) || !strings.HasPrefix(set, "2:") {
		t.Errorf("ShouldOffer = %v, %q", offer, set)
	}
	if offer, _ := ShouldOffer(l, ConflictBlock{}, set); offer {
		t.Error("offered again for the same open set")
	}
	if offer, _ := ShouldOffer(l, ConflictBlock{UnresolvedHigh: 1}, ""); offer {
		t.Error("offered despite an unresolved HIGH conflict")
	}
}

func TestIsGoodEnough(t *testing.T) {
	b := g(5, gap.Low, gap.Open)
	b.Blocking = true
	l := ledgerOf(t, g(1, gap.Critical, gap.Open), g(2, gap.Low, gap.Blocked), b, g(6, gap.High, gap.Accepted))
	ok, why := IsGoodEnough(l, ConflictBlock{UnresolvedHigh: 1})
	want := "1 CRITICAL/HIGH gap(s) open, 1 gap(s) blocked, 1 blocking gap(s) open, 1 HIGH/CRITICAL conflict(s) unresolved"
	if ok || why != want {
		t.Errorf("IsGoodEnough = %v, %q; want false, %q", ok, why, want)
	}
	if ok, why := IsGoodEnough(nil, ConflictBlock{}); !ok || why != "" {
		t.Errorf("IsGoodEnough(nil) = %v, %q; want true", ok, why)
	}
}

func TestOutcomeKinds(t *testing.T) {
	terminal := []Outcome{Complete, GoodEnough, UserApproved, MaxRounds, StallExit, Abandoned}
	other := []Outcome{Paused, Failed, Continue}
	for _, o := range terminal {
		if !o.Terminal() || !o.Valid() {
			t.Errorf("%s: Terminal %v Valid %v, want both", o, o.Terminal(), o.Valid())
		}
	}
	for _, o := range other {
		if o.Terminal() || !o.Valid() {
			t.Errorf("%s: Terminal %v Valid %v, want non-terminal and valid", o, o.Terminal(), o.Valid())
		}
	}
	if Outcome("DONE").Valid() {
		t.Error(`Outcome("DONE") is valid`)
	}
}

func TestCountOpenString(t *testing.T) {
	l := ledgerOf(t, g(1, gap.Medium, gap.Open), g(2, gap.Medium, gap.NeedsRevision), g(3, gap.Low, gap.Blocked), g(4, gap.Critical, gap.Accepted))
	if got, want := CountOpen(l).String(), "3 open gaps (0 Critical, 0 High, 2 Medium, 1 Low)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := CountOpen(ledgerOf(t, g(1, gap.High, gap.Open))).String(), "1 open gap (0 Critical, 1 High, 0 Medium, 0 Low)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
