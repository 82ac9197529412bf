package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type item struct {
	ID    string   `json:"id"`
	State string   `json:"state"`
	Log   []string `json:"log,omitempty"`
}

type doc struct {
	Round int      `json:"round"`
	Log   []string `json:"log,omitempty"`
	Phase string   `json:"phase,omitempty"`
	Items []item   `json:"items"`
}

func roundTrip(t *testing.T, old, cur any) []Op {
	t.Helper()
	ob, _ := json.Marshal(old)
	cb, _ := json.Marshal(cur)
	ops := Diff(ob, cb)
	enc, err := Record{Seq: 1, Ops: ops}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRecord(enc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Apply(ob)
	if err != nil {
		t.Fatal(err)
	}
	var want, have any
	_ = json.Unmarshal(cb, &want)
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Fatalf("rebuilt (-want +got):\n%s", diff)
	}
	return ops
}

func TestDiffIsSmallForSmallChanges(t *testing.T) {
	old := doc{Round: 1, Log: []string{"a", "b,c"}, Phase: "engineer"}
	for i := range 500 {
		old.Items = append(old.Items, item{ID: fmt.Sprintf("GAP-%03d", i), State: "OPEN", Log: []string{"created"}})
	}
	cur := old
	cur.Round = 2
	cur.Log = append([]string{}, "a", "b,c", "d")
	cur.Phase = ""
	cur.Items = append([]item{}, old.Items...)
	cur.Items[7] = item{ID: "GAP-007", State: "PROPOSED", Log: []string{"created", "proposed"}}
	ops := roundTrip(t, old, cur)
	enc, _ := Record{Ops: ops}.Marshal()
	if len(enc) > 400 {
		t.Errorf("record is %d bytes for a round number, one log entry, one deleted field and one changed item of 500:\n%s", len(enc), enc)
	}
}

func TestDiffCases(t *testing.T) {
	for name, tc := range map[string][2]any{
		"empty to full": {map[string]any{}, map[string]any{"a": []int{1}, "b": map[string]int{"x": 1}}},
		"array shrinks": {map[string]any{"a": []int{1, 2, 3}}, map[string]any{"a": []int{1}}},
		"type change":   {map[string]any{"a": []int{1}}, map[string]any{"a": "x"}},
		"null to array": {map[string]any{"a": nil}, map[string]any{"a": []int{1}}},
		"deep":          {map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"e": 1}}}}}, map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"e": 2}}}}}},
		"root array":    {[]int{1, 2}, []int{1, 2, 3}},
		// More elements but fewer bytes: a kept element shrank (a fuzz
		// finding: the appended tail's capacity came out negative).
		"grows but shrinks": {map[string]any{"log": []string{"000000000", "b"}}, map[string]any{"log": []string{"", "b", ""}}},
		"scalar root":       {1, 2},
	} {
		t.Run(name, func(t *testing.T) { roundTrip(t, tc[0], tc[1]) })
	}
}

func TestApplyRejectsBadPaths(t *testing.T) {
	doc := []byte(`{"round":3,"a":[1]}`)
	for _, op := range []Op{
		{Op: "append", Path: []string{"round"}, Value: json.RawMessage(`[1]`)},
		{Op: "set", Path: []string{"a", "5"}, Value: json.RawMessage(`1`)},
		{Op: "set", Path: []string{"missing", "x"}, Value: json.RawMessage(`1`)},
		{Op: "delete", Path: []string{"a", "0"}},
	} {
		if _, err := (Record{Seq: 2, Ops: []Op{op}}).Apply(doc); err == nil {
			t.Errorf("%+v applied", op)
		}
	}
	if _, err := ParseRecord([]byte(`{"seq":1,"ops":[{"op":"nuke","path":["a"]}]}`)); err == nil {
		t.Error("unknown op parsed")
	}
}

// FuzzDiffApply: for any two JSON documents, applying Diff(a, b) to a
// gives b.
func FuzzDiffApply(f *testing.F) {
	f.Add(`{"a":[1,2],"b":"x"}`, `{"a":[1,2,3],"c":null}`)
	f.Add(`{"log":["a,","b"]}`, `{"log":["a,","b","c"]}`)
	f.Add(`{"g":[{"s":"OPEN"},{"s":"OPEN"}]}`, `{"g":[{"s":"OPEN"},{"s":"DONE","h":[1]}]}`)
	f.Add(`[]`, `{"x":{"y":[]}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var va, vb any
		if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
			return
		}
		ca, _ := json.Marshal(va)
		cb, _ := json.Marshal(vb)
		r := Record{Seq: 1, Ops: Diff(ca, cb)}
		if v := DiffVersions(NewVersion(ca), NewVersion(cb)); !cmp.Equal(v, r.Ops, cmpopts.EquateEmpty()) {
			t.Fatalf("DiffVersions != Diff\na=%s\nb=%s\n%v\n%v", ca, cb, v, r.Ops)
		}
		enc, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		r, err = ParseRecord(enc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Apply(ca)
		if err != nil {
			t.Fatalf("apply: %v\na=%s\nb=%s", err, ca, cb)
		}
		var have any
		if err := json.Unmarshal(got, &have); err != nil {
			t.Fatalf("rebuilt document is not JSON: %v", err)
		}
		if !cmp.Equal(vb, have) {
			t.Fatalf("Apply(Diff(a,b)) != b\na=%s\nb=%s\ngot=%s", ca, cb, got)
		}
	})
}

// FuzzParseRecord: any bytes either parse as a record or fail cleanly, and
// applying a parsed record to a document never panics.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"seq":1,"ops":[{"op":"set","path":["a"],"value":1}]}`), []byte(`{"a":0}`))
	f.Add([]byte(`{"seq":2,"ops":[{"op":"append","path":["a","0"],"value":[1]}]}`), []byte(`{"a":[[0]]}`))
	f.Fuzz(func(t *testing.T, rec, doc []byte) {
		r, err := ParseRecord(rec)
		if err != nil {
			return
		}
		// The reference: every op applied by decoding the whole document.
		want, err := slices.Clone(doc), error(nil)
		for _, op := range r.Ops {
			if want, err = apply(want, op.Path, op); err != nil {
				break
			}
		}
		d := NewDoc(doc)
		derr := d.Apply(r)
		var v any
		if err != nil || json.Unmarshal(doc, &v) != nil {
			return // Doc need only not panic
		}
		if canon, _ := json.Marshal(v); !bytes.Equal(canon, doc) {
			return // not encoding/json output: duplicate keys, spaces, …
		}
		var w, g any
		if derr != nil || json.Unmarshal(want, &w) != nil || json.Unmarshal(d.Bytes(), &g) != nil || !cmp.Equal(w, g) {
			t.Fatalf("Doc.Apply = %s, %v; applied whole = %s", d.Bytes(), derr, want)
		}
	})
}

// TestAppendMembers: a version joined from its parts splits as the joined
// document scanned would, and diffs the same against another version.
func TestAppendMembers(t *testing.T) {
	for _, core := range []string{`{}`, `{"a":1,"b":{"c":[1,2]}}`} {
		joined := NewVersion([]byte(core)).AppendMembers([]string{"log", "asked"}, [][]byte{[]byte(`[{"x":"y"},2]`), []byte(`[]`)}, nil)
		scanned := NewVersion(joined.Bytes())
		if !scanned.ok {
			t.Fatalf("%s: joined document %s does not split", core, joined.Bytes())
		}
		if d := cmp.Diff(scanned.keys, joined.keys); d != "" {
			t.Errorf("%s: keys (-scanned +joined):\n%s", core, d)
		}
		if d := cmp.Diff(scanned.vals, joined.vals); d != "" {
			t.Errorf("%s: values (-scanned +joined):\n%s", core, d)
		}
		next := NewVersion([]byte(strings.Replace(string(joined.Bytes()), `2]`, `2,3]`, 1)))
		if d := cmp.Diff(DiffVersions(scanned, next), DiffVersions(joined, next)); d != "" {
			t.Errorf("%s: diff (-scanned +joined):\n%s", core, d)
		}
	}
}

// TestDiffWithWritersSplit: a diff that uses the writer's split of its
// members (a ledger-like object holding an array of objects) makes the
// operations the same diff of the scanned documents makes.
func TestDiffWithWritersSplit(t *testing.T) {
	ledger := func(elems ...string) ([]byte, *Split) {
		arr := "[" + strings.Join(elems, ",") + "]"
		var vals [][]byte
		for _, e := range elems {
			vals = append(vals, []byte(e))
		}
		return []byte(`{"gaps":` + arr + `}`), &Split{Keys: [][]byte{[]byte("gaps")}, Vals: [][]byte{[]byte(arr)}, Subs: []*Split{{Vals: vals}}}
	}
	core := NewVersion([]byte(`{"round":3}`))
	cases := []struct {
		name     string
		old, cur []string
	}{
		{"one element changed", []string{`{"id":"A","h":[1]}`, `{"id":"B"}`}, []string{`{"id":"A","h":[1,2]}`, `{"id":"B"}`}},
		{"appended", []string{`{"id":"A"}`}, []string{`{"id":"A"}`, `{"id":"B"}`}},
		{"changed and appended", []string{`{"id":"A"}`, `{"id":"B"}`}, []string{`{"id":"A","x":1}`, `{"id":"B"}`, `{"id":"C"}`}},
		{"most rewritten", []string{`{"id":"A"}`, `{"id":"B"}`}, []string{`{"id":"X"}`, `{"id":"Y"}`}},
		{"emptied", []string{`{"id":"A"}`}, nil},
		{"from empty", nil, []string{`{"id":"A"}`}},
		{"unchanged", []string{`{"id":"A"}`}, []string{`{"id":"A"}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ob, os := ledger(c.old...)
			cb, cs := ledger(c.cur...)
			old := core.AppendMembers([]string{"ledger"}, [][]byte{ob}, []*Split{os})
			cur := core.AppendMembers([]string{"ledger"}, [][]byte{cb}, []*Split{cs})
			want := Diff(old.Bytes(), cur.Bytes())
			if d := cmp.Diff(want, DiffVersions(old, cur)); d != "" {
				t.Errorf("diff (-scanned +split):\n%s", d)
			}
			// One side split, the other scanned.
			if d := cmp.Diff(want, DiffVersions(NewVersion(old.Bytes()), cur)); d != "" {
				t.Errorf("diff from a scanned version (-scanned +split):\n%s", d)
			}
		})
	}
}
