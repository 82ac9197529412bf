package convergence

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// FuzzTracker drives a tracker with operations decoded from the fuzz input
// (record a row, accept complexity, reset, rewind, JSON round trip) and
// checks that it never panics, every state is a valid form and follows
// the state rules (CONVERGING, STALLED(k), DIVERGENCE_WARNING), and a JSON
// round trip never changes the tracker; an Encoder encodes it as
// json.Marshal does after every operation.
func FuzzTracker(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 0, 0, 0, 0, 0x7c, 0x7c, 1, 0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 4, 3})
	f.Add([]byte{0x10, 0xff, 0x80, 0, 0x80, 0x7f, 3, 1, 0xf0, 0xf0, 0x40, 2})
	f.Add([]byte("02$0x\xe20"))
	f.Fuzz(fuzzTracker)
}

// fuzzTracker is FuzzTracker's body.
func fuzzTracker(t *testing.T, data []byte) {
	// The checks copy the tracker through JSON, which makes long inputs
	// quadratic; a few hundred operations find everything longer ones do.
	data = data[:min(len(data), 1024)]
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(int8(b))
	}
	settings := Settings{
		StallRounds:   1 + (next()&0x7f)%4,
		DivergenceNet: -((next() & 0x7f) % 5),
		Weights:       gap.DefaultWeights(),
	}
	tr, err := NewTracker(settings)
	if err != nil {
		t.Fatalf("settings %+v: %v", settings, err)
	}
	var enc Encoder
	for len(data) > 0 {
		switch op := next() & 0x7; op {
		case 0, 1, 2, 3:
			in := Row{Round: next() % 40, Net: next() / 8, WeightedNet: next()}
			want := expectedState(t, tr, in)
			out := tr.Record(in)
			if out.State != want {
				t.Fatalf("Record(%+v) = %s, want %s (settings %+v)", in, out.State, want, settings)
			}
			if out.Net != in.Net || out.WeightedNet != in.WeightedNet {
				t.Fatalf("Record changed the nets: in %+v out %+v", in, out)
			}
		case 4:
			tr.AcceptComplexity()
		case 5:
			tr.ResetStall()
		case 6:
			tr.Rewind(next() % 40)
		case 7:
			if diff := cmp.Diff(tr, roundTrip(t, tr), cmp.AllowUnexported(Tracker{})); diff != "" {
				t.Fatalf("JSON round trip changed the tracker:\n%s", diff)
			}
		}
		checkEncoder(t, &enc, tr)
		if !tr.Current().Valid() {
			t.Fatalf("Current() = %q is not a valid state", tr.Current())
		}
		last := 0
		for _, r := range tr.Rows() {
			if r.Round <= last || !r.State.Valid() {
				t.Fatalf("bad history: %+v", tr.Rows())
			}
			last = r.Round
		}
	}
}

// expectedState applies the state rules, as docs/workflow.md#convergence
// words them, to the
// tracker's counters, rewinding a copy first when row re-runs a round.
func expectedState(t *testing.T, tr *Tracker, row Row) State {
	t.Helper()
	s := tr.Settings()
	view := tr
	last := 0
	if rows := tr.Rows(); len(rows) > 0 {
		last = rows[len(rows)-1].Round
	}
	round := row.Round
	switch {
	case round <= 0:
		round = last + 1
	case round <= last:
		view = roundTrip(t, tr)
		view.Rewind(round)
	}
	quiet := round <= view.QuietThrough()
	var state State
	if row.WeightedNet > 0 {
		state = Converging
	} else {
		k := view.StallCount() + 1
		state = Stalled(k)
		if k >= s.StallRounds && !quiet {
			state = DivergenceWarning
		}
	}
	if row.Net < s.DivergenceNet && !quiet {
		state = DivergenceWarning
	}
	return state
}

// roundTrip copies tr through its JSON form.
func roundTrip(t *testing.T, tr *Tracker) *Tracker {
	t.Helper()
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var back Tracker
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("decoding our own JSON: %v\n%s", err, data)
	}
	return &back
}
