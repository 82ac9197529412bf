package convergence

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/refine-spec/refine/gap"
)

// checkEncoder encodes tr with enc and fails unless the bytes are
// json.Marshal's and the parts it reports lie where they say.
func checkEncoder(t *testing.T, enc *Encoder, tr *Tracker) Encoded {
	t.Helper()
	got, err := enc.Encode(tr)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.JSON, want) {
		t.Fatalf("Encode:\n got %s\nwant %s", got.JSON, want)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(want, &members); err != nil {
		t.Fatal(err)
	}
	if len(got.Keys) != len(members) || len(got.Vals) != len(got.Keys) {
		t.Fatalf("Encode: keys %q, %d values; the encoding has %d members", got.Keys, len(got.Vals), len(members))
	}
	for i, k := range got.Keys {
		if !bytes.Equal(got.Vals[i], members[k]) {
			t.Fatalf("Encode: member %q is %s, the encoding has %s", k, got.Vals[i], members[k])
		}
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(members["rows"], &rows); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got.Rows, rows, func(a []byte, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		t.Fatalf("Encode: rows %q, the encoding has %q", got.Rows, rows)
	}
	return got
}

// TestEncoderMatchesMarshal plays a tracker through every kind of change
// and checks each encoding against json.Marshal, and that an encoding's
// bytes survive the next call (a journal diffs the last two).
func TestEncoderMatchesMarshal(t *testing.T) {
	tr := &Tracker{}
	var enc Encoder
	prev := checkEncoder(t, &enc, tr) // zero tracker: empty lists, default settings
	prevCopy := bytes.Clone(prev.JSON)
	steps := []struct {
		name string
		do   func()
	}{
		{"record", func() { tr.Record(Row{Round: 1, GapsStart: 4, Resolved: 1, Net: 1, WeightedNet: 4, State: ""}) }},
		{"unchanged", func() {}},
		{"record flat", func() { tr.Record(Row{Round: 2, Net: 0}) }},
		{"record flat again", func() { tr.Record(Row{Round: 3, Net: -3}) }},
		{"amend last", func() { tr.Amend(Row{Round: 3, Deferred: 2, GapsEnd: 7}) }},
		{"accept complexity", func() { tr.AcceptComplexity() }},
		{"record in the window", func() { tr.Record(Row{Round: 4, Net: -4}) }},
		{"reset stall", func() { tr.ResetStall() }},
		{"rewind", func() { tr.Rewind(3) }},
		{"re-record", func() { tr.Record(Row{Round: 3, Net: 2, WeightedNet: 2}) }},
		{"re-run an earlier round", func() { tr.Record(Row{Round: 2, Net: -1}) }},
		{"another tracker, other settings", func() {
			other, err := NewTracker(Settings{StallRounds: 3, DivergenceNet: -1, Weights: gap.UnitWeights()})
			if err != nil {
				t.Fatal(err)
			}
			other.Record(Row{Round: 1, Net: 1, WeightedNet: 1})
			tr = other
		}},
		{"rewind to nothing", func() { tr.Rewind(1) }},
	}
	for _, s := range steps {
		s.do()
		cur := checkEncoder(t, &enc, tr)
		if !bytes.Equal(prev.JSON, prevCopy) {
			t.Fatalf("after %s: the previous encoding changed:\n got %s\nwant %s", s.name, prev.JSON, prevCopy)
		}
		prev, prevCopy = cur, bytes.Clone(cur.JSON)
	}
}

// TestEncoderReusesUnchanged: a call that finds nothing changed returns
// the last encoding itself, and one that finds a row added reuses the
// encoding of the rows before it.
func TestEncoderReusesUnchanged(t *testing.T) {
	tr := &Tracker{}
	var enc Encoder
	for r := 1; r <= 5; r++ {
		tr.Record(Row{Round: r, Net: r % 2})
	}
	first := checkEncoder(t, &enc, tr)
	again := checkEncoder(t, &enc, tr)
	if &again.JSON[0] != &first.JSON[0] {
		t.Error("an unchanged tracker was encoded again")
	}
	tr.Record(Row{Round: 6})
	next := checkEncoder(t, &enc, tr)
	if &next.JSON[0] == &first.JSON[0] {
		t.Error("the new encoding was written over the last one")
	}
}

// TestRowsFrom: the rows of a round and later, as Rows filtered.
func TestRowsFrom(t *testing.T) {
	tr := &Tracker{}
	for _, r := range []int{1, 2, 4, 7} {
		tr.Record(Row{Round: r})
	}
	for _, from := range []int{-1, 0, 1, 2, 3, 4, 5, 7, 8} {
		var want []Row
		for _, r := range tr.Rows() {
			if r.Round >= from {
				want = append(want, r)
			}
		}
		if got := tr.RowsFrom(from); !slices.Equal(got, want) {
			t.Errorf("RowsFrom(%d) = %v, want %v", from, got, want)
		}
	}
	if got := tr.RowsFrom(1); len(got) > 0 {
		got[0].Round = 99
		if tr.Rows()[0].Round == 99 {
			t.Error("RowsFrom shares the tracker's rows")
		}
	}
	if tr.Len() != 4 || (&Tracker{}).Len() != 0 {
		t.Errorf("Len = %d, want 4", tr.Len())
	}
}
