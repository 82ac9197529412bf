package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
)

// testAppendCopyOrder checks a Store that is both a store.Appender and a
// store.Copier on commits that mix the two: copies that read what
// appends and other copies earlier in the commit left, keys exchanged
// through a third, bytes that are not text, an empty append, and the key
// and folder rule on keys an append or a copy creates.
func testAppendCopyOrder(t *testing.T, s store.Store) {
	a, aok := s.(store.Appender)
	c, cok := s.(store.Copier)
	if !aok || !cok || !a.Appends() || !c.Copies() {
		t.Skip("the Store is not both an Appender and a Copier")
	}
	ctx := t.Context()
	commit(t, s, store.Put("a", []byte("A")), store.Put("b", []byte("B")))
	// Exchange a and b through t, then a chain: c copies a, d copies c
	// after an append to c, and a changes after both.
	commit(t, s, store.Copy("t", "a"), store.Copy("a", "b"), store.Copy("b", "t"), store.Delete("t"),
		store.Copy("c", "a"), store.Append("c", []byte("+")), store.Copy("d", "c"), store.Append("a", []byte("!")))
	want := map[string]string{"a": "B!", "b": "A", "c": "B+", "d": "B+"}
	if diff := cmp.Diff(want, snapshot(t, s)); diff != "" {
		t.Errorf("after exchanging and chaining copies (-want +got):\n%s", diff)
	}
	// An append to a stored key, then a copy of it, then the key deleted:
	// the copy holds the appended value.
	commit(t, s, store.Append("b", []byte("pp")), store.Copy("e", "b"), store.Delete("b"), store.Copy("a", "a"))
	want = map[string]string{"a": "B!", "c": "B+", "d": "B+", "e": "App"}
	if diff := cmp.Diff(want, snapshot(t, s)); diff != "" {
		t.Errorf("after copying an appended key and deleting it (-want +got):\n%s", diff)
	}
	// Bytes that are not text survive appends and copies: NUL, invalid
	// UTF-8, all 256 byte values.
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	commit(t, s, store.Put("bin", []byte{0, 0xff, 0xc3}))
	commit(t, s, store.Append("bin", all), store.Append("bin", []byte{0}))
	commit(t, s, store.Copy("bin.copy", "bin"), store.Append("bin.copy", []byte{0x80, 0}))
	wantBin := append(append([]byte{0, 0xff, 0xc3}, all...), 0)
	if got := get(t, s, "bin"); !cmp.Equal(got, wantBin) {
		t.Errorf("binary appends = %x, want %x", got, wantBin)
	}
	if got := get(t, s, "bin.copy"); !cmp.Equal(got, append(wantBin[:len(wantBin):len(wantBin)], 0x80, 0)) {
		t.Errorf("binary copy with an append = %x", got)
	}
	// An empty append creates an empty key and leaves a stored one as it is.
	commit(t, s, store.Append("empty", nil), store.Append("a", []byte{}))
	if got := get(t, s, "empty"); got == nil || len(got) != 0 {
		t.Errorf("an empty append to an absent key = %q, want an empty value", got)
	}
	if got := string(get(t, s, "a")); got != "B!" {
		t.Errorf("an empty append changed a: %q", got)
	}
	// A key an append or a copy creates obeys the key and folder rule, and
	// the refused commit applies nothing.
	for _, ops := range [][]store.Op{
		{store.Append("e", []byte("x")), store.Append("a/below", []byte("x"))},
		{store.Append("e", []byte("x")), store.Copy("a/below", "c")},
		{store.Append("e", []byte("x")), store.Copy("new", "c"), store.Copy("new/below", "c")},
	} {
		if err := s.Commit(ctx, ops...); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Commit(%s) = %v, want ErrInvalidKey (a key below a key)", describe(ops), err)
		}
		if got := string(get(t, s, "e")); got != "App" {
			t.Errorf("a refused commit appended to e: %q", got)
		}
		wantNotFound(t, s, "new")
	}
	// A copy of an absent key fails even when a later op of the commit
	// overwrites the copy, and even when the source is created later.
	for _, ops := range [][]store.Op{
		{store.Append("e", []byte("x")), store.Copy("f", "absent"), store.Put("f", []byte("f"))},
		{store.Copy("f", "absent"), store.Put("absent", []byte("late"))},
		{store.Copy("absent", "absent")},
	} {
		if err := s.Commit(ctx, ops...); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Commit(%s) = %v, want ErrNotFound", describe(ops), err)
		}
		wantNotFound(t, s, "f")
		wantNotFound(t, s, "absent")
		if got := string(get(t, s, "e")); got != "App" {
			t.Errorf("a refused commit appended to e: %q", got)
		}
	}
}

// testBackendAppendCopy checks, on a Backend whose writers are
// Appenders or Copiers, that what appends and copies leave is stored, not
// only known to the writer: random commits of puts, deletes, appends and
// copies, checked against a model of the contract after each commit
// through the writer, through a View, and now and then through a new
// writer after Close; and a summary record that appends and copies build
// is what Sessions lists.
func testBackendAppendCopy(t *testing.T, b store.Backend) {
	ctx := t.Context()
	id, st := create(t, b)
	ap, cp := appendsOK(st), copiesOK(st)
	if !ap && !cp {
		t.Skip("the Backend's writers are neither Appenders nor Copiers")
	}
	view, err := b.View(ctx, id)
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	defer closeStore(t, view)
	keys := []string{"journal/a.jsonl", "journal/b.jsonl", "status.md", "status_backup.md"}
	alphabet := []byte{0, 'x', '\n', 0xff, 0xc3, '{'}
	rng := rand.New(rand.NewPCG(30, 1))
	value := func() []byte {
		v := make([]byte, rng.IntN(6))
		for i := range v {
			v[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return v
	}
	model := map[string]string{}
	for i := range 150 {
		ops := make([]store.Op, 1+rng.IntN(4))
		for j := range ops {
			k := keys[rng.IntN(len(keys))]
			switch n := rng.IntN(4); {
			case n == 0:
				ops[j] = store.Put(k, value())
			case n == 1 && rng.IntN(2) == 0:
				ops[j] = store.Delete(k)
			case n == 2 && cp:
				ops[j] = store.Copy(k, keys[rng.IntN(len(keys))])
			case ap:
				ops[j] = store.Append(k, value())
			default:
				ops[j] = store.Put(k, value())
			}
		}
		next, wantErr := applyModel(model, ops)
		err := st.Commit(ctx, ops...)
		switch {
		case wantErr != nil && !errors.Is(err, wantErr):
			t.Fatalf("commit %d (%s) = %v, want an error wrapping %v", i, describeValues(ops), err, wantErr)
		case wantErr == nil && err != nil:
			t.Fatalf("commit %d (%s): %v", i, describeValues(ops), err)
		case wantErr == nil:
			model = next
		}
		if diff := cmp.Diff(model, snapshot(t, st)); diff != "" {
			t.Fatalf("writer after commit %d (%s) (-want +got):\n%s", i, describeValues(ops), diff)
		}
		if diff := cmp.Diff(model, snapshot(t, view)); diff != "" {
			t.Fatalf("View after commit %d (%s) (-want +got):\n%s", i, describeValues(ops), diff)
		}
		if i%50 == 49 {
			closeStore(t, st)
			if st, err = b.Session(ctx, id); err != nil {
				t.Fatalf("Session after Close: %v", err)
			}
			t.Cleanup(func() { closeIfCloser(st) })
			if diff := cmp.Diff(model, snapshot(t, st)); diff != "" {
				t.Fatalf("a new writer after commit %d (-want +got):\n%s", i, diff)
			}
		}
	}
	// The summary record: appended to, then copied from another key.
	round := func() int {
		for _, in := range sessions(t, b) {
			if in.ID == id {
				return in.Round
			}
		}
		t.Fatalf("Sessions does not list %s", id)
		return 0
	}
	if ap {
		commit(t, st, store.Put(store.SummaryKey, []byte(`{"round":7`)))
		commit(t, st, store.Append(store.SummaryKey, []byte(`}`)))
		if got := round(); got != 7 {
			t.Errorf("Sessions after appending to the summary record: round %d, want 7", got)
		}
	}
	if cp {
		commit(t, st, store.Put("summary.next", []byte(`{"round":9}`)))
		commit(t, st, store.Copy(store.SummaryKey, "summary.next"))
		if got := round(); got != 9 {
			t.Errorf("Sessions after copying the summary record: round %d, want 9", got)
		}
	}
}

// applyModel applies ops to a copy of m as the Store contract says: in
// order, an append creating an absent key, a copy of an absent key failing
// the commit with store.ErrNotFound (m is then unchanged).
func applyModel(m map[string]string, ops []store.Op) (map[string]string, error) {
	next := make(map[string]string, len(m))
	for k, v := range m {
		next[k] = v
	}
	for _, op := range ops {
		switch op.Kind {
		case store.OpPut:
			next[op.Key] = string(op.Value)
		case store.OpDelete:
			delete(next, op.Key)
		case store.OpAppend:
			next[op.Key] += string(op.Value)
		case store.OpCopy:
			v, ok := next[op.From]
			if !ok {
				return m, store.ErrNotFound
			}
			next[op.Key] = v
		}
	}
	return next, nil
}

func appendsOK(s store.Store) bool {
	a, ok := s.(store.Appender)
	return ok && a.Appends()
}

func copiesOK(s store.Store) bool {
	c, ok := s.(store.Copier)
	return ok && c.Copies()
}

// describeValues is describe with the values, short as the random
// commits' are, so a failure can be replayed by hand.
func describeValues(ops []store.Op) string {
	s := ""
	for i, op := range ops {
		if i > 0 {
			s += ", "
		}
		switch op.Kind {
		case store.OpPut:
			s += fmt.Sprintf("put %s %q", op.Key, op.Value)
		case store.OpDelete:
			s += "delete " + op.Key
		case store.OpAppend:
			s += fmt.Sprintf("append %s %q", op.Key, op.Value)
		case store.OpCopy:
			s += fmt.Sprintf("copy %s to %s", op.From, op.Key)
		}
	}
	return s
}
