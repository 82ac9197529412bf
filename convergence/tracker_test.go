package convergence

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// step is one thing that happens to a tracker in a scripted session.
type step struct {
	net, weighted int    // a round with these nets, or
	op            string // "accept" (complexity) or "reset"
	want          State  // expected state of the round
}

func flatRound(want State) step         { return step{net: 0, weighted: 0, want: want} }
func goodRound(want State) step         { return step{net: 1, weighted: 1, want: want} }
func netRound(net int, want State) step { return step{net: net, weighted: net, want: want} }
func opStep(op string) step             { return step{op: op} }
func mustTracker(t testing.TB, s Settings) *Tracker {
	t.Helper()
	tr, err := NewTracker(s)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// play runs steps on tr, numbering rounds from after the last recorded one,
// and returns the states the rounds got.
func play(tr *Tracker, steps []step) (got, want []State) {
	for _, s := range steps {
		switch s.op {
		case "accept":
			tr.AcceptComplexity()
		case "reset":
			tr.ResetStall()
		default:
			got = append(got, tr.Record(Row{Net: s.net, WeightedNet: s.weighted}).State)
			want = append(want, s.want)
		}
	}
	return got, want
}

func TestTrackerStates(t *testing.T) {
	def := DefaultSettings()
	tests := []struct {
		name     string
		settings Settings
		steps    []step
	}{
		{"spec example", def, []step{netRound(1, Converging), flatRound(Stalled(1)), netRound(-4, DivergenceWarning)}},
		{"stall reaches StallRounds", def, []step{flatRound(Stalled(1)), flatRound(DivergenceWarning)}},
		{"warning repeats while still stalled", def, []step{flatRound(Stalled(1)), flatRound(DivergenceWarning), flatRound(DivergenceWarning)}},
		{"progress resets the count", def, []step{flatRound(Stalled(1)), goodRound(Converging), flatRound(Stalled(1)), flatRound(DivergenceWarning)}},
		{"Net < -2 warns at once", def, []step{netRound(-3, DivergenceWarning)}},
		{"Net = -2 is only a stall", def, []step{netRound(-2, Stalled(1))}},
		{"count explosion warns even with weighted progress", def, []step{{net: -3, weighted: 10, want: DivergenceWarning}, flatRound(Stalled(1))}},
		{"weighted loss is a stall despite plain progress", def, []step{{net: 2, weighted: -13, want: Stalled(1)}}},
		{"accept complexity: quiet for StallRounds rounds, then warns again", def, []step{
			flatRound(Stalled(1)), flatRound(DivergenceWarning), opStep("accept"),
			flatRound(Stalled(1)), flatRound(Stalled(2)), flatRound(DivergenceWarning),
		}},
		{"accept complexity also silences a single-round explosion", def, []step{
			flatRound(Stalled(1)), flatRound(DivergenceWarning), opStep("accept"),
			netRound(-5, Stalled(1)), goodRound(Converging), netRound(-5, DivergenceWarning),
		}},
		{"reset restarts the count but keeps warnings armed", def, []step{
			flatRound(Stalled(1)), flatRound(DivergenceWarning), opStep("reset"),
			flatRound(Stalled(1)), netRound(-3, DivergenceWarning),
		}},
		{"StallRounds 3", Settings{StallRounds: 3, DivergenceNet: -2, Weights: gap.DefaultWeights()}, []step{
			flatRound(Stalled(1)), flatRound(Stalled(2)), flatRound(DivergenceWarning),
		}},
		{"DivergenceNet 0 warns on any negative Net", Settings{StallRounds: 2, DivergenceNet: 0, Weights: gap.DefaultWeights()}, []step{
			netRound(-1, DivergenceWarning), goodRound(Converging), flatRound(Stalled(1)),
		}},
		{"StallRounds 1 warns on the first flat round", Settings{StallRounds: 1, DivergenceNet: -2, Weights: gap.DefaultWeights()}, []step{
			flatRound(DivergenceWarning), opStep("accept"), flatRound(Stalled(1)), flatRound(DivergenceWarning),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustTracker(t, tt.settings)
			got, want := play(tr, tt.steps)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
			if c := tr.Current(); c != want[len(want)-1] {
				t.Errorf("Current() = %s, want %s", c, want[len(want)-1])
			}
		})
	}
}

func TestTrackerZeroValue(t *testing.T) {
	var tr Tracker
	if tr.Current() != Converging {
		t.Errorf("Current() of empty tracker = %s, want CONVERGING", tr.Current())
	}
	if diff := cmp.Diff(DefaultSettings(), tr.Settings()); diff != "" {
		t.Errorf("Settings() (-want +got):\n%s", diff)
	}
	if tr.Rows() != nil || tr.Events() != nil {
		t.Errorf("empty tracker has rows %v events %v", tr.Rows(), tr.Events())
	}
}

func TestTrackerRecordNumbering(t *testing.T) {
	tr := mustTracker(t, DefaultSettings())
	if r := tr.Record(Row{Net: 1, WeightedNet: 1}); r.Round != 1 {
		t.Errorf("first unnumbered row got round %d, want 1", r.Round)
	}
	if r := tr.Record(Row{Round: 5, Net: 0}); r.Round != 5 {
		t.Errorf("numbered row got round %d, want 5", r.Round)
	}
	if r := tr.Record(Row{Round: -3}); r.Round != 6 {
		t.Errorf("negative round got %d, want 6", r.Round)
	}
	if got := tr.StallCount(); got != 2 {
		t.Errorf("StallCount() = %d, want 2", got)
	}
}

func TestTrackerRowsIsACopy(t *testing.T) {
	tr := mustTracker(t, DefaultSettings())
	tr.Record(Row{Round: 1, WeightedNet: 1, Net: 1})
	rows := tr.Rows()
	rows[0].State = DivergenceWarning
	if tr.Current() != Converging {
		t.Error("changing the slice Rows returned changed the tracker")
	}
}

// scriptedSession returns the rows and answers of a session with every kind
// of event, for snapshot and rewind tests.
func scriptedSession() []step {
	return []step{
		netRound(1, Converging), flatRound(Stalled(1)), flatRound(DivergenceWarning), opStep("accept"),
		flatRound(Stalled(1)), netRound(-4, Stalled(2)), flatRound(DivergenceWarning), opStep("reset"),
		goodRound(Converging), flatRound(Stalled(1)), netRound(-3, DivergenceWarning),
	}
}

func TestTrackerJSONRoundTripMidSession(t *testing.T) {
	steps := scriptedSession()
	for cut := 0; cut <= len(steps); cut++ {
		never := mustTracker(t, DefaultSettings())
		restored := mustTracker(t, DefaultSettings())
		play(never, steps[:cut])
		play(restored, steps[:cut])

		data, err := json.Marshal(restored)
		if err != nil {
			t.Fatal(err)
		}
		var back Tracker
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if diff := cmp.Diff(never, &back, cmp.AllowUnexported(Tracker{})); diff != "" {
			t.Fatalf("cut %d: decoded tracker differs (-never +restored):\n%s", cut, diff)
		}

		gotNever, _ := play(never, steps[cut:])
		gotBack, _ := play(&back, steps[cut:])
		if diff := cmp.Diff(gotNever, gotBack); diff != "" {
			t.Errorf("cut %d: continuing after a round trip changed states (-never +restored):\n%s", cut, diff)
		}
		a, _ := json.Marshal(never)
		b, _ := json.Marshal(&back)
		if string(a) != string(b) {
			t.Errorf("cut %d: final JSON differs:\n%s\n%s", cut, a, b)
		}
	}
}

func TestTrackerJSONByValueInsideStruct(t *testing.T) {
	tr := mustTracker(t, DefaultSettings())
	tr.Record(Row{Round: 1, Net: -3, WeightedNet: -3})
	type state struct {
		Convergence Tracker `json:"convergence"`
	}
	// Encoding the outer struct by value makes the field unaddressable; the
	// value-receiver MarshalJSON must still be used.
	data, err := json.Marshal(state{Convergence: *tr})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"state":"DIVERGENCE_WARNING"`) {
		t.Errorf("tracker held by value encoded as %s", data)
	}
	var back state
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tr.Rows(), back.Convergence.Rows()); diff != "" {
		t.Errorf("rows after round trip (-want +got):\n%s", diff)
	}
}

func TestTrackerJSONShape(t *testing.T) {
	var tr Tracker
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"settings":{"stall_rounds":2,"divergence_net":-2,"weights":{"critical":16,"high":4,"medium":2,"low":1}},"rows":[],"events":[],"stall":0,"quiet_through":0}`
	if string(data) != want {
		t.Errorf("empty tracker JSON:\n got %s\nwant %s", data, want)
	}
	row, err := json.Marshal(Row{Round: 2, GapsStart: 24, Resolved: 4, New: 4, GapsEnd: 24, State: Stalled(1)})
	if err != nil {
		t.Fatal(err)
	}
	wantRow := `{"round":2,"gaps_start":24,"resolved":4,"deferred":0,"new":4,"reopened":0,"gaps_end":24,"net":0,"weighted_net":0,"weighted_open":0,"state":"STALLED(1)"}`
	if string(row) != wantRow {
		t.Errorf("row JSON:\n got %s\nwant %s", row, wantRow)
	}
}

func TestTrackerUnmarshalRejectsCorruptSnapshots(t *testing.T) {
	tests := []struct{ name, json, wantErr string }{
		{"wrong types", `{"rows":3}`, "decode tracker"},
		{"bad settings", `{"settings":{"stall_rounds":0,"divergence_net":-2,"weights":{"critical":16,"high":4,"medium":2,"low":1}}}`, "StallRounds"},
		{"positive divergence net", `{"settings":{"stall_rounds":2,"divergence_net":1,"weights":{"critical":16,"high":4,"medium":2,"low":1}}}`, "DivergenceNet"},
		{"bad weights", `{"settings":{"stall_rounds":2,"divergence_net":-2,"weights":{"critical":1,"high":4,"medium":2,"low":1}}}`, "weights"},
		{"unknown state", `{"rows":[{"round":1,"state":"STUCK"}]}`, "invalid state"},
		{"missing state", `{"rows":[{"round":1}]}`, "invalid state"},
		{"rounds out of order", `{"rows":[{"round":2,"state":"CONVERGING"},{"round":2,"state":"CONVERGING"}]}`, "rounds must increase"},
		{"round zero", `{"rows":[{"round":0,"state":"CONVERGING"}]}`, "rounds must increase"},
		{"negative stall", `{"stall":-1}`, "negative"},
		{"unknown event", `{"rows":[{"round":1,"state":"CONVERGING"}],"events":[{"round":1,"kind":"shrug"}]}`, "unknown kind"},
		{"event after last round", `{"rows":[{"round":1,"state":"CONVERGING"}],"events":[{"round":2,"kind":"accept_complexity"}]}`, "round order"},
		{"events out of order", `{"rows":[{"round":2,"state":"CONVERGING"}],"events":[{"round":2,"kind":"reset_stall"},{"round":1,"kind":"reset_stall"}]}`, "round order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr Tracker
			err := json.Unmarshal([]byte(tt.json), &tr)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Unmarshal(%s) error = %v, want one containing %q", tt.json, err, tt.wantErr)
			}
		})
	}
}

func TestTrackerUnmarshalMissingSettingsMeansDefaults(t *testing.T) {
	var tr Tracker
	if err := json.Unmarshal([]byte(`{"rows":[{"round":1,"state":"STALLED(1)"}],"stall":1}`), &tr); err != nil {
		t.Fatal(err)
	}
	if got := tr.Record(Row{Round: 2}).State; got != DivergenceWarning {
		t.Errorf("second flat round after decoding = %s, want DIVERGENCE_WARNING (default StallRounds 2)", got)
	}
}

func TestTrackerRewindEqualsSnapshot(t *testing.T) {
	steps := scriptedSession()
	full := mustTracker(t, DefaultSettings())
	play(full, steps)
	for round := 1; round <= len(full.Rows())+1; round++ {
		// The snapshot a Mediator would have taken just before round began.
		snap := mustTracker(t, DefaultSettings())
		for _, s := range steps {
			if s.op == "" && len(snap.Rows())+1 >= round {
				break
			}
			play(snap, []step{s})
		}
		rewound := mustTracker(t, DefaultSettings())
		play(rewound, steps)
		rewound.Rewind(round)
		if diff := cmp.Diff(snap, rewound, cmp.AllowUnexported(Tracker{})); diff != "" {
			t.Errorf("Rewind(%d) differs from the snapshot (-snapshot +rewound):\n%s", round, diff)
		}
	}
}

func TestTrackerRecordingAnEarlierRoundReplacesIt(t *testing.T) {
	tr := mustTracker(t, DefaultSettings())
	tr.Record(Row{Round: 1, Net: 0})
	tr.Record(Row{Round: 2, Net: 0}) // DIVERGENCE_WARNING
	tr.AcceptComplexity()
	tr.Record(Row{Round: 3, Net: 0})

	// Round 2 re-run after a rollback: it and the answer to its warning are gone.
	got := tr.Record(Row{Round: 2, Net: 1, WeightedNet: 1})
	if got.State != Converging {
		t.Errorf("re-recorded round 2 = %s, want CONVERGING", got.State)
	}
	want := []Row{{Round: 1, State: Stalled(1)}, {Round: 2, Net: 1, WeightedNet: 1, State: Converging}}
	if diff := cmp.Diff(want, tr.Rows()); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if len(tr.Events()) != 0 || tr.QuietThrough() != 0 {
		t.Errorf("answer to the replaced round survived: events %v quiet through %d", tr.Events(), tr.QuietThrough())
	}
}

func TestNewTrackerValidates(t *testing.T) {
	tests := []struct {
		name     string
		settings Settings
		wantErr  string
	}{
		{"defaults", DefaultSettings(), ""},
		{"zero", Settings{}, "StallRounds"},
		{"positive divergence net", Settings{StallRounds: 2, DivergenceNet: 1, Weights: gap.DefaultWeights()}, "DivergenceNet"},
		{"zero weights", Settings{StallRounds: 2, DivergenceNet: -2}, "positive"},
		{"unit weights", Settings{StallRounds: 2, DivergenceNet: -2, Weights: gap.UnitWeights()}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewTracker(tt.settings)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("NewTracker: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewTracker error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestState(t *testing.T) {
	tests := []struct {
		in    string
		valid bool
		stall int
	}{
		{"CONVERGING", true, 0},
		{"DIVERGENCE_WARNING", true, 0},
		{"STALLED(1)", true, 1},
		{"STALLED(12)", true, 12},
		{"STALLED(0)", false, 0},
		{"STALLED(01)", false, 0},
		{"STALLED(-1)", false, 0},
		{"STALLED(+1)", false, 0},
		{"STALLED()", false, 0},
		{"STALLED(1", false, 0},
		{"STALLED (1)", false, 0},
		{"STALLED(99999999999999999999)", false, 0},
		{"converging", false, 0},
		{"", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseState(tt.in)
			if (err == nil) != tt.valid {
				t.Errorf("ParseState(%q) error = %v, want valid=%v", tt.in, err, tt.valid)
			}
			if err == nil && string(s) != tt.in {
				t.Errorf("ParseState(%q) = %q", tt.in, s)
			}
			if got := State(tt.in).StallCount(); got != tt.stall {
				t.Errorf("StallCount(%q) = %d, want %d", tt.in, got, tt.stall)
			}
		})
	}
	if Stalled(3) != "STALLED(3)" || Stalled(0).Valid() {
		t.Errorf("Stalled(3) = %q, Stalled(0).Valid() = %v", Stalled(3), Stalled(0).Valid())
	}
}

func TestStateNote(t *testing.T) {
	tests := []struct {
		s    State
		want string
	}{
		{Converging, ""},
		{Stalled(1), "No net progress this round"},
		{DivergenceWarning, "Divergence warning"},
	}
	for _, tt := range tests {
		got := tt.s.Note()
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s.Note() = %q, want %q", tt.s, got, tt.want)
		}
	}
}
