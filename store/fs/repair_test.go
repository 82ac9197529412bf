package fs_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
)

// A file damaged after a clean Close, whose value the log still holds, is
// repaired when the folder opens, and the repair is not silent: it is
// logged at Warn and reported (store.Repairer) until the session records
// it (issue #39: it opened with no word). After a crash, the same replay
// is recovery, not a repair.
func TestOpenReportsARepairFromTheLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, store.Put("journal/0000000001.jsonl", []byte(`{"seq":1,"ops":[]}`+"\n"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "journal", "0000000001.jsonl")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[3] ^= 0x10 // a bit flipped on disk
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	w, err = fs.Open(dir, fs.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != `{"seq":1,"ops":[]}`+"\n" {
		t.Errorf("the file was not repaired: %q", got)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "repaired") || !strings.Contains(logged.String(), "journal/0000000001.jsonl") {
		t.Errorf("the repair is not logged at Warn:\n%s", logged.String())
	}
	rs, err := w.Repairs()
	if err != nil || len(rs) != 1 || rs[0].Key != "journal/0000000001.jsonl" || rs[0].ID == "" || rs[0].At.IsZero() ||
		rs[0].Detail != "other bytes of the same size (19)" {
		t.Fatalf("Repairs = %+v, %v; want the journal segment's", rs, err)
	}
	w.Close()

	// Reported by later opens, read-only ones too, until recorded.
	ro, err := fs.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ro.Repairs(); err != nil || len(again) != 1 || again[0].ID != rs[0].ID {
		t.Errorf("a read-only Store reports %+v, %v", again, err)
	}
	if err := ro.RepairsRecorded([]string{rs[0].ID}); err == nil {
		t.Errorf("a read-only Store recorded repairs")
	}
	ro.Close()
	w, err = fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RepairsRecorded([]string{rs[0].ID}); err != nil {
		t.Fatal(err)
	}
	if left, err := w.Repairs(); err != nil || len(left) != 0 {
		t.Errorf("after RepairsRecorded: %+v, %v", left, err)
	}
	if err := w.Commit(ctx, store.Put("journal/0000000001.jsonl", []byte("2\n"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// A writer that never closed left the file behind the log: recovery.
	if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".refine.lock"), []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logged.Reset()
	w, err = fs.Open(dir, fs.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if rs, err := w.Repairs(); err != nil || len(rs) != 0 || strings.Contains(logged.String(), "level=WARN") {
		t.Errorf("crash recovery reported as a repair: %+v, %v\n%s", rs, err, logged.String())
	}
}
