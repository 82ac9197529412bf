package core

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// applyOpsToMap applies ops as one Store commit would, to a map; ok is
// false if a Copy reads a missing key (a Store refuses the commit).
func applyOpsToMap(m map[string]string, ops []store.Op) (ok bool) {
	for _, op := range ops {
		switch op.Kind {
		case store.OpPut:
			m[op.Key] = string(op.Value)
		case store.OpDelete:
			delete(m, op.Key)
		case store.OpAppend:
			m[op.Key] += string(op.Value)
		case store.OpCopy:
			v, found := m[op.From]
			if !found {
				return false
			}
			m[op.Key] = v
		}
	}
	return true
}

// A Ready's writes, compacted, leave every key as the writes made one by
// one do, over random sequences of puts, appends, copies and deletes.
func TestCompactOpsKeepsEveryKey(t *testing.T) {
	keys := []string{"a", "b", "c"}
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 1))
		var ops []store.Op
		for i := range 1 + r.IntN(10) {
			k, v := keys[r.IntN(len(keys))], fmt.Sprint(i)
			switch r.IntN(4) {
			case 0:
				ops = append(ops, store.Put(k, []byte(v)))
			case 1:
				ops = append(ops, store.Append(k, []byte(v)))
			case 2:
				ops = append(ops, store.Delete(k))
			case 3:
				from := keys[r.IntN(len(keys))]
				if from != k {
					ops = append(ops, store.Copy(k, from))
				}
			}
		}
		base := map[string]string{"a": "A", "b": "B"}
		want, got := map[string]string{}, map[string]string{}
		for k, v := range base {
			want[k], got[k] = v, v
		}
		if !applyOpsToMap(want, ops) {
			continue // a commit no Store takes
		}
		compacted := CompactOps(ops)
		if !applyOpsToMap(got, compacted) {
			t.Fatalf("seed %d: ops %v compacted to %v, which a Store refuses", seed, ops, compacted)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d: ops %v compacted to %v: (-want +got)\n%s", seed, ops, compacted, diff)
		}
		if len(compacted) > len(ops) {
			t.Fatalf("seed %d: %d ops compacted to %d", seed, len(ops), len(compacted))
		}
	}
}

// Superseded puts go, runs of appends join, a put read by a copy stays.
func TestCompactOpsDropsWhatIsMoot(t *testing.T) {
	ops := []store.Op{store.Put("s", []byte("1")), store.Append("j", []byte("x")), store.Put("s", []byte("2")), store.Append("j", []byte("y")),
		store.Put("m", []byte("old")), store.Copy("b", "m"), store.Put("m", []byte("new"))}
	want := []store.Op{store.Append("j", []byte("xy")), store.Put("s", []byte("2")), store.Put("m", []byte("old")), store.Copy("b", "m"), store.Put("m", []byte("new"))}
	if diff := cmp.Diff(want, CompactOps(ops)); diff != "" {
		t.Errorf("compactOps (-want +got):\n%s", diff)
	}
}

// The Ready's writes keep the committers' slices; in test binaries a
// slice written again after its commit is reported, not persisted.
func TestReadyWritesReportAValueWrittenAfterItsCommit(t *testing.T) {
	st := memory.New()
	w := newReadyWrites(StoreCaps{Appends: st.Appends(), Copies: st.Copies()}, true)
	w.Base = storeSource{t, st}
	buf := []byte("first")
	if err := w.Keep(store.Put("a", buf), store.Put("b", []byte("other"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Unchanged(); err != nil {
		t.Fatalf("unchanged before any write: %v", err)
	}
	copy(buf, "FIRST")
	err := w.Unchanged()
	if err == nil || !strings.Contains(err.Error(), "a was written after its commit") {
		t.Fatalf("unchanged after the slice was written again = %v, want it reported for key a", err)
	}
}

// storeSource reads a Store in the test's context: what the driver's
// bound view is to the decisions.
type storeSource struct {
	t  *testing.T
	st store.Store
}

func (s storeSource) Get(key string) ([]byte, error) { return s.st.Get(s.t.Context(), key) }

func (s storeSource) List(prefix string) ([]string, error) { return s.st.List(s.t.Context(), prefix) }

func (s storeSource) Interrupted() error { return s.t.Context().Err() }
