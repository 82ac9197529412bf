package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/refine-spec/refine/store"
)

// testAppend checks the optional store.Appender capability: a Store that
// reports Appends() true applies OpAppend in order with the commit's other
// ops and as atomically; any other Store refuses OpAppend, applying
// nothing, with an error wrapping ErrInvalidKey.
func testAppend(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, ok := s.(store.Appender)
	if !ok || !a.Appends() {
		err := s.Commit(ctx, store.Put("other.md", []byte("x")), store.Append("journal/1.jsonl", []byte("line\n")))
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Fatalf("Commit with an append on a Store that is no Appender = %v, want an error wrapping ErrInvalidKey", err)
		}
		wantNotFound(t, s, "other.md")
		return
	}
	commit(t, s, store.Append("journal/1.jsonl", []byte("one\n"))) // creates
	commit(t, s, store.Append("journal/1.jsonl", []byte("two\n")), store.Put("state.json", []byte("{}")))
	if got := string(get(t, s, "journal/1.jsonl")); got != "one\ntwo\n" {
		t.Errorf("after two appends: %q, want %q", got, "one\ntwo\n")
	}
	// In order with the commit's other ops: put, append, append; delete then append.
	commit(t, s, store.Put("k", []byte("a")), store.Append("k", []byte("b")), store.Append("k", []byte("c")),
		store.Delete("d"), store.Put("d", []byte("gone")), store.Delete("d"), store.Append("d", []byte("new")))
	if got := string(get(t, s, "k")); got != "abc" {
		t.Errorf("put a, append b, append c = %q, want abc", got)
	}
	if got := string(get(t, s, "d")); got != "new" {
		t.Errorf("delete then append = %q, want new", got)
	}
	// All or nothing: an invalid op in the commit applies no append.
	err := s.Commit(ctx, store.Append("k", []byte("X")), store.Put("../escape", []byte("x")))
	if !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("commit with an invalid key = %v, want ErrInvalidKey", err)
	}
	if got := string(get(t, s, "k")); got != "abc" {
		t.Errorf("a refused commit appended: %q", got)
	}
	// The appended value is copied: changing the caller's slice changes nothing.
	v := []byte("z")
	commit(t, s, store.Append("k", v))
	v[0] = 'Q'
	if got := string(get(t, s, "k")); got != "abcz" {
		t.Errorf("after changing the appended slice: %q, want abcz", got)
	}
}
