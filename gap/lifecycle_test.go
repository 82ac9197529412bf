package gap

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var allStates = []State{Open, InProgress, Proposed, NeedsRevision, Blocked, Accepted, Deferred, Superseded}

func TestTransitionTable(t *testing.T) {
	// The allowed set, written out from the lifecycle table of
	// docs/workflow.md#gap-states so that any change to
	// CanTransition shows up here.
	allowed := map[[2]State]bool{
		{Open, InProgress}: true, {InProgress, Proposed}: true, {InProgress, Open}: true,
		{Proposed, Accepted}: true, {Proposed, NeedsRevision}: true, {NeedsRevision, InProgress}: true,
		{Blocked, InProgress}: true, {Blocked, Open}: true, {Blocked, Accepted}: true,
		{Accepted, NeedsRevision}: true, {Deferred, Open}: true,
	}
	for _, from := range []State{Open, InProgress, Proposed, NeedsRevision, Blocked} {
		for _, to := range []State{Deferred, Superseded} {
			allowed[[2]State{from, to}] = true
		}
		if from != Blocked {
			allowed[[2]State{from, Blocked}] = true
		}
	}
	for _, from := range allStates {
		for _, to := range allStates {
			want := allowed[[2]State{from, to}]
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
			err := CheckTransition(from, to)
			if want != (err == nil) || (!want && !errors.Is(err, ErrInvalidTransition)) {
				t.Errorf("CheckTransition(%s, %s) = %v", from, to, err)
			}
		}
	}
	if CanTransition("BOGUS", Open) || CanTransition(Open, "") {
		t.Error("invalid states must not transition")
	}
}

func TestOpenClosed(t *testing.T) {
	open := 0
	for _, s := range allStates {
		if s.IsOpen() == s.IsClosed() {
			t.Errorf("%s is both or neither open and closed", s)
		}
		if s.IsOpen() {
			open++
		}
	}
	if open != 5 {
		t.Errorf("%d open states, want 5", open)
	}
}

func TestLedger(t *testing.T) {
	at := time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)
	var l Ledger
	for _, g := range []Gap{
		{ID: "GAP-FLOW-001", Severity: High},
		{ID: "GAP-FLOW-002"},
		{ID: "GAP-UX-001", Severity: Low, State: Accepted},
	} {
		if err := l.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Add(Gap{ID: "GAP-FLOW-001"}); !errors.Is(err, ErrDuplicateGap) {
		t.Errorf("duplicate add: %v", err)
	}
	if err := l.Add(Gap{ID: "GAP-X-1"}); err == nil {
		t.Error("bad ID accepted")
	}
	g, _ := l.Get("GAP-FLOW-002")
	if g.Severity != Medium || g.State != Open {
		t.Errorf("defaults: %+v", g)
	}
	if err := l.Transition("GAP-FLOW-001", InProgress, 1, at, "assigned"); err != nil {
		t.Fatal(err)
	}
	if err := l.Transition("GAP-FLOW-001", Accepted, 1, at, "skip"); !errors.Is(err, ErrInvalidTransition) {
		t.Errorf("IN_PROGRESS→ACCEPTED: %v", err)
	}
	if err := l.Transition("GAP-NOPE-001", Open, 1, at, ""); !errors.Is(err, ErrUnknownGap) {
		t.Errorf("unknown: %v", err)
	}
	g, _ = l.Get("GAP-FLOW-001")
	want := []Transition{{From: Open, To: InProgress, Round: 1, At: at, Reason: "assigned"}}
	if diff := cmp.Diff(want, g.History); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if len(l.Open()) != 2 || len(l.Closed()) != 1 || len(l.InState(InProgress)) != 1 {
		t.Errorf("open/closed: %d/%d", len(l.Open()), len(l.Closed()))
	}
	c := l.Clone()
	_ = l.Transition("GAP-FLOW-001", Proposed, 1, at, "")
	if g, _ := c.Get("GAP-FLOW-001"); g.State != InProgress || len(g.History) != 1 {
		t.Errorf("clone shares state: %+v", g)
	}
}

func TestAssignmentOrder(t *testing.T) {
	gaps := []Gap{
		{ID: "GAP-BB-001", Severity: Low},
		{ID: "GAP-AA-002", Severity: High},
		{ID: "GAP-AA-001", Severity: High},
		{ID: "GAP-CC-001", Severity: Low, State: NeedsRevision},
		{ID: "GAP-DD-001", Severity: High, Blocking: true},
		{ID: "GAP-EE-001", Severity: Critical},
	}
	AssignmentOrder(gaps)
	var got []ID
	for _, g := range gaps {
		got = append(got, g.ID)
	}
	want := []ID{"GAP-CC-001", "GAP-EE-001", "GAP-DD-001", "GAP-AA-001", "GAP-AA-002", "GAP-BB-001"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	SimplestOrder(gaps, DefaultWeights(), map[ID]int{"GAP-BB-001": 2})
	if gaps[0].ID != "GAP-CC-001" || gaps[1].ID != "GAP-BB-001" {
		t.Errorf("simplest order: %s %s", gaps[0].ID, gaps[1].ID)
	}
}

func TestSeverity(t *testing.T) {
	for _, s := range All() {
		p, err := ParseSeverity(" " + s.String() + " ")
		if err != nil || p != s {
			t.Errorf("round trip %s: %v %v", s, p, err)
		}
		b, _ := s.MarshalText()
		var q Severity
		if err := q.UnmarshalText(b); err != nil || q != s {
			t.Errorf("text round trip %s", s)
		}
	}
	if _, err := ParseSeverity("urgent"); err == nil {
		t.Error("unknown severity accepted")
	}
	if _, err := ParseSeverity("high"); err != nil {
		t.Error("lowercase rejected")
	}
	w := DefaultWeights()
	if w.Of(Critical) != 16 || w.Of(High) != 4 || w.Of(Medium) != 2 || w.Of(Low) != 1 || w.Validate() != nil {
		t.Errorf("default weights %+v", w)
	}
	for _, bad := range []Weights{{16, 4, 2, 0}, {1, 4, 2, 1}, {16, 4, -2, 1}} {
		if bad.Validate() == nil {
			t.Errorf("weights %+v accepted", bad)
		}
	}
	if !High.AtLeastHigh() || Medium.AtLeastHigh() {
		t.Error("AtLeastHigh")
	}
}
