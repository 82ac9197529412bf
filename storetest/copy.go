package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/refine-spec/refine/store"
)

// testCopy checks the optional store.Copier capability: a Store that
// reports Copies() true applies OpCopy in order with the commit's other
// ops and as atomically, copying the value its source holds at that point
// of the commit; a copy of an absent key fails the whole commit with an
// error wrapping ErrNotFound. Any other Store refuses OpCopy, applying
// nothing, with an error wrapping ErrInvalidKey.
func testCopy(t *testing.T, s store.Store) {
	ctx := context.Background()
	c, ok := s.(store.Copier)
	if !ok || !c.Copies() {
		commit(t, s, store.Put("src.md", []byte("x")))
		err := s.Commit(ctx, store.Put("other.md", []byte("x")), store.Copy("copy.md", "src.md"))
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Fatalf("Commit with a copy on a Store that is no Copier = %v, want an error wrapping ErrInvalidKey", err)
		}
		wantNotFound(t, s, "other.md")
		wantNotFound(t, s, "copy.md")
		return
	}
	commit(t, s, store.Put("status.md", []byte("round 1")))
	commit(t, s, store.Copy("status_backup_round_1.md", "status.md"))
	if got := string(get(t, s, "status_backup_round_1.md")); got != "round 1" {
		t.Errorf("copy of status.md = %q, want %q", got, "round 1")
	}
	// In order: the copy sees the put before it in the same commit, and
	// not the put after it; the copy stays when its source changes.
	commit(t, s, store.Put("status.md", []byte("round 2")), store.Copy("status_backup_round_2.md", "status.md"),
		store.Put("status.md", []byte("round 3")))
	if got := string(get(t, s, "status_backup_round_2.md")); got != "round 2" {
		t.Errorf("copy after a put in the same commit = %q, want %q", got, "round 2")
	}
	if got := string(get(t, s, "status_backup_round_1.md")); got != "round 1" {
		t.Errorf("an older copy after its source changed = %q, want %q", got, "round 1")
	}
	// A copy of an appended key copies the whole value.
	if a, ok := s.(store.Appender); ok && a.Appends() {
		commit(t, s, store.Put("log", []byte("a")), store.Append("log", []byte("b")), store.Copy("log.copy", "log"))
		if got := string(get(t, s, "log.copy")); got != "ab" {
			t.Errorf("copy of an appended key = %q, want ab", got)
		}
	}
	// A copy of an absent key, or of one deleted earlier in the commit,
	// fails the commit and applies nothing.
	for _, ops := range [][]store.Op{
		{store.Put("status.md", []byte("lost")), store.Copy("x.md", "absent.md")},
		{store.Delete("status.md"), store.Copy("x.md", "status.md")},
	} {
		if err := s.Commit(ctx, ops...); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("commit copying an absent key = %v, want an error wrapping ErrNotFound", err)
		}
		if got := string(get(t, s, "status.md")); got != "round 3" {
			t.Errorf("a refused copy changed status.md to %q", got)
		}
		wantNotFound(t, s, "x.md")
	}
	// Both keys are checked.
	if err := s.Commit(ctx, store.Copy("y.md", "../status.md")); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("copy from an invalid key = %v, want ErrInvalidKey", err)
	}
	// The copy is a value of its own: overwriting the source later, or the
	// copy, leaves the other alone.
	commit(t, s, store.Put("status_backup_round_2.md", []byte("edited")))
	if got := string(get(t, s, "status.md")); got != "round 3" {
		t.Errorf("writing a copy changed its source: %q", got)
	}
}
