package sqlkv

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
)

func TestPlanSteps(t *testing.T) {
	put, del, app, cp := store.Put, store.Delete, store.Append, store.Copy
	b := func(s string) []byte { return []byte(s) }
	tests := []struct {
		name  string
		ops   []store.Op
		steps []store.Op
		need  []string
	}{
		{"puts and deletes, sorted, last wins",
			[]store.Op{put("b", b("1")), del("a"), put("b", b("2"))},
			[]store.Op{del("a"), put("b", b("2"))}, nil},
		{"a put then appends is one put of the whole value",
			[]store.Op{put("a", b("x")), app("a", b("y")), app("a", b("z"))},
			[]store.Op{put("a", b("xyz"))}, nil},
		{"appends to a stored key send only the new bytes, once",
			[]store.Op{app("j", b("1\n")), app("j", b("2\n"))},
			[]store.Op{app("j", b("1\n2\n"))}, nil},
		{"delete then append is a put",
			[]store.Op{del("a"), app("a", b("n"))},
			[]store.Op{put("a", b("n"))}, nil},
		{"a copy reads its source: the put before it stays, in op order",
			[]store.Op{put("s", b("1")), cp("b", "s"), put("s", b("2"))},
			[]store.Op{put("s", b("1")), cp("b", "s"), put("s", b("2"))}, nil},
		{"a copy of an untouched key needs it stored",
			[]store.Op{cp("b", "s"), app("b", b("+"))},
			[]store.Op{cp("b", "s"), app("b", b("+"))}, []string{"s"}},
		{"a copy overwritten unread is dropped, its need stays",
			[]store.Op{cp("b", "s"), put("b", b("x"))},
			[]store.Op{put("b", b("x"))}, []string{"s"}},
		{"a copy to itself writes nothing",
			[]store.Op{cp("s", "s")},
			[]store.Op{}, []string{"s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Plan(tc.ops, true, true)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.steps, w.Steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.need, w.Need); diff != "" {
				t.Errorf("need (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanRefuses(t *testing.T) {
	tests := []struct {
		name             string
		ops              []store.Op
		appendOK, copyOK bool
		want             error
	}{
		{"append without the capability", []store.Op{store.Append("a", nil)}, false, true, store.ErrInvalidKey},
		{"copy without the capability", []store.Op{store.Copy("a", "b")}, true, false, store.ErrInvalidKey},
		{"copy from an invalid key", []store.Op{store.Copy("a", "../b")}, true, true, store.ErrInvalidKey},
		{"copy of a key deleted before", []store.Op{store.Put("b", nil), store.Delete("b"), store.Copy("a", "b")}, true, true, store.ErrNotFound},
	}
	for _, tc := range tests {
		if _, err := Plan(tc.ops, tc.appendOK, tc.copyOK); !errors.Is(err, tc.want) {
			t.Errorf("%s: Plan = %v, want an error wrapping %v", tc.name, err, tc.want)
		}
	}
}

// TestPlanMatchesTheContract checks Plan on random commits against the
// Store contract applied op by op: running the steps as the database does
// (a copy of an absent key changes nothing), and working Final out from
// the values before the commit as the writer's cache does, both give the
// contract's result, and a commit the contract refuses (a copy of an
// absent key) is refused by Plan or by its Need.
func TestPlanMatchesTheContract(t *testing.T) {
	keys := []string{"a", "b", "c"}
	rng := rand.New(rand.NewPCG(7, 30))
	for i := range 20000 {
		before := map[string]string{}
		for _, k := range keys {
			if rng.IntN(2) == 0 {
				before[k] = string(rune('A' + rng.IntN(3)))
			}
		}
		ops := make([]store.Op, 1+rng.IntN(5))
		for j := range ops {
			k := keys[rng.IntN(len(keys))]
			v := []byte{byte('0' + j)}
			switch rng.IntN(4) {
			case 0:
				ops[j] = store.Put(k, v)
			case 1:
				ops[j] = store.Delete(k)
			case 2:
				ops[j] = store.Append(k, v)
			default:
				ops[j] = store.Copy(k, keys[rng.IntN(len(keys))])
			}
		}
		want, wantOK := contract(before, ops)
		w, err := Plan(ops, true, true)
		if err != nil {
			if wantOK || !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("commit %d %v on %v: Plan = %v", i, ops, before, err)
			}
			continue
		}
		missing := false
		for _, k := range w.Need {
			_, ok := before[k]
			missing = missing || !ok
		}
		if missing == wantOK {
			t.Fatalf("commit %d %v on %v: need %v, but the contract says ok=%v", i, ops, before, w.Need, wantOK)
		}
		if !wantOK {
			continue
		}
		// The steps, as the database runs them.
		db := clone(before)
		for _, s := range w.Steps {
			switch s.Kind {
			case store.OpPut:
				db[s.Key] = string(s.Value)
			case store.OpDelete:
				delete(db, s.Key)
			case store.OpAppend:
				db[s.Key] += string(s.Value)
			case store.OpCopy:
				if v, ok := db[s.From]; ok {
					db[s.Key] = v
				}
			}
		}
		if diff := cmp.Diff(want, db); diff != "" {
			t.Fatalf("commit %d %v on %v: steps %v leave (-want +got):\n%s", i, ops, before, w.Steps, diff)
		}
		// Final, as the cache works it out.
		after := clone(before)
		for k, e := range w.Final {
			switch {
			case e.Deleted:
				delete(after, k)
			case e.Base == "":
				after[k] = string(e.Value)
			default:
				after[k] = before[e.Base] + string(e.Value)
			}
		}
		if diff := cmp.Diff(want, after); diff != "" {
			t.Fatalf("commit %d %v on %v: Final %v leaves (-want +got):\n%s", i, ops, before, w.Final, diff)
		}
	}
}

// contract applies ops one by one as store.Store says; ok is false when
// the commit fails (a copy of an absent key).
func contract(m map[string]string, ops []store.Op) (map[string]string, bool) {
	m = clone(m)
	for _, op := range ops {
		switch op.Kind {
		case store.OpPut:
			m[op.Key] = string(op.Value)
		case store.OpDelete:
			delete(m, op.Key)
		case store.OpAppend:
			m[op.Key] += string(op.Value)
		case store.OpCopy:
			v, ok := m[op.From]
			if !ok {
				return nil, false
			}
			m[op.Key] = v
		}
	}
	return m, true
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestCacheAppliesAppendsAndCopies(t *testing.T) {
	c := NewCache()
	gen := c.Gen()
	c.FillKeys(gen, []string{"j", "s", "u"})
	c.Fill(gen, "j", []byte("1\n"))
	c.Fill(gen, "s", []byte("S"))
	// j appended (cached), u appended (not cached), n appended (absent),
	// c copied from s, which the same commit then deletes.
	c.Apply(Final{
		"j": {Base: "j", Value: []byte("2\n")},
		"u": {Base: "u", Value: []byte("+")},
		"n": {Base: "n", Value: []byte("new")},
		"c": {Base: "s"},
		"s": {Deleted: true},
	})
	for _, tc := range []struct {
		key          string
		want         string
		found, known bool
	}{
		{"j", "1\n2\n", true, true},
		{"u", "", false, false}, // read from the database when needed
		{"n", "new", true, true},
		{"c", "S", true, true},
		{"s", "", false, true},
	} {
		v, found, known := c.Get(tc.key)
		if string(v) != tc.want || found != tc.found || known != tc.known {
			t.Errorf("Get(%s) = %q, %v, %v; want %q, %v, %v", tc.key, v, found, known, tc.want, tc.found, tc.known)
		}
	}
	if got, _ := c.List(""); !cmp.Equal(got, []string{"c", "j", "n", "u"}) {
		t.Errorf("List = %q, want c j n u", got)
	}
	if found, known := c.Has("u"); !found || !known {
		t.Errorf("Has(u) = %v, %v; want stored (the key list says so)", found, known)
	}
}
