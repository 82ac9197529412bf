package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// folderBytes reads every file under dir (the store's log and lock
// included), keyed by its path relative to dir.
func folderBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// statusDoc runs `refine status --json` and decodes what the script checks.
func statusDoc(t *testing.T, dir string) (doc struct {
	Round   int    `json:"round"`
	Outcome string `json:"outcome"`
	Running *bool  `json:"running"`
	Waiting *bool  `json:"waiting"`
	Pending []struct {
		ID      string `json:"id"`
		Options []struct {
			Key string `json:"key"`
		} `json:"options"`
	} `json:"pending"`
}) {
	t.Helper()
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"status", "--dir", dir, "--json"}); code != exitOK {
		t.Fatalf("status --json: exit %d\n%s", code, errb)
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Running == nil || doc.Waiting == nil {
		t.Fatalf("status --json lacks running or waiting:\n%s", out)
	}
	return doc
}

// statusLine runs `refine status` and returns its headline.
func statusLine(t *testing.T, dir string) string {
	t.Helper()
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"status", "--dir", dir}); code != exitOK {
		t.Fatalf("status: exit %d\n%s", code, errb)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "Session ") {
			return l
		}
	}
	t.Fatalf("status has no headline:\n%s", out)
	return ""
}

// The rollback command checks all of its arguments before it changes
// anything (#40 item 1): a mistyped --option leaves a finished session
// byte for byte as it was; a rollback left waiting reads as the finished
// session it still is, with the question waiting; a second command with
// another target and reason is refused, names the waiting one and
// `--option cancel`, and changes nothing; --option cancel puts the session
// back as it was; after a rollback carried out, status says the session is
// idle (#40 item 2).
func TestRollbackCommandScript(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	finished := folderBytes(t, dir)
	decisions := finished["decisions.md"]
	if line := statusLine(t, dir); line != "Session session: COMPLETE after round 2" {
		t.Fatalf("status of the finished session: %q", line)
	}
	first := []string{"rollback", "--dir", dir, "--to", "1", "--reason", "first try"}

	// 1. A mistyped option: refused, the folder byte-identical.
	c, out, errb := newTestCLI()
	if code := c.main(ctx, append(first, "--option", "4")); code != exitUsage {
		t.Fatalf("--option 4 (not offered): exit %d, want %d\n%s\n%s", code, exitUsage, out, errb)
	}
	if !strings.Contains(errb.String(), "--option") || !strings.Contains(errb.String(), "the session is unchanged") {
		t.Errorf("the refusal does not name --option or say nothing changed:\n%s", errb)
	}
	if diff := cmp.Diff(finished, folderBytes(t, dir)); diff != "" {
		t.Fatalf("a refused --option changed the folder (-before +after):\n%s", diff)
	}

	// 2. No answer: the rollback waits; the session is still COMPLETE.
	c, out, errb = newTestCLI()
	if code := c.main(ctx, first); code != exitPaused {
		t.Fatalf("rollback without an answer: exit %d, want %d\n%s\n%s", code, exitPaused, out, errb)
	}
	if !strings.Contains(out.String(), "cancel) Cancel the rollback") || !strings.Contains(out.String(), "--option cancel drops it") {
		t.Errorf("the waiting rollback does not offer cancel:\n%s", out)
	}
	if line := statusLine(t, dir); line != "Session session: COMPLETE after round 2; a question waits for an answer" {
		t.Errorf("status while the rollback waits: %q", line)
	}
	doc := statusDoc(t, dir)
	if doc.Outcome != "COMPLETE" || !*doc.Waiting || *doc.Running || len(doc.Pending) != 1 {
		t.Errorf("status --json while the rollback waits: %+v", doc)
	}

	// 3. Another target and reason: refused, naming the waiting rollback
	// and --option cancel; nothing changes.
	waiting := folderBytes(t, dir)
	c, out, errb = newTestCLI()
	code := c.main(ctx, []string{"rollback", "--dir", dir, "--to", "0", "--reason", "only undo round 2", "--option", "1"})
	if code != exitUsage {
		t.Fatalf("a second rollback with other arguments: exit %d, want %d\n%s\n%s", code, exitUsage, out, errb)
	}
	for _, want := range []string{"the rollback of round 2 to round 1 (--reason 'first try') waits for its answer", "nothing was changed",
		"refine rollback --dir " + dir + " --to 1 --reason 'first try' --option cancel"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("the refusal lacks %q:\n%s", want, errb)
		}
	}
	if diff := cmp.Diff(waiting, folderBytes(t, dir)); diff != "" {
		t.Fatalf("a refused second rollback changed the folder (-before +after):\n%s", diff)
	}

	// 4. --option cancel: the session as before the request.
	c, out, errb = newTestCLI()
	if code := c.main(ctx, append(first, "--option", "cancel")); code != exitOK {
		t.Fatalf("--option cancel: exit %d\n%s\n%s", code, out, errb)
	}
	if line := statusLine(t, dir); line != "Session session: COMPLETE after round 2" {
		t.Errorf("status after cancel: %q", line)
	}
	if doc := statusDoc(t, dir); doc.Outcome != "COMPLETE" || *doc.Waiting || len(doc.Pending) != 0 || doc.Round != 2 {
		t.Errorf("status --json after cancel: %+v", doc)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "decisions.md")); string(got) != decisions {
		t.Errorf("decisions.md after cancel (-before +after):\n%s", cmp.Diff(decisions, string(got)))
	}
	if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_1.tar.gz")); err == nil {
		t.Error("cancel rolled back")
	}

	// 5. The rollback carried out: RUNNING, but nothing runs it.
	c, out, errb = newTestCLI()
	if code := c.main(ctx, append(first, "--option", "1")); code != exitOK {
		t.Fatalf("--option 1: exit %d\n%s\n%s", code, out, errb)
	}
	if line := statusLine(t, dir); line != "Session session: IDLE after round 1 (resume to continue)" {
		t.Errorf("status after the rollback: %q", line)
	}
	if doc := statusDoc(t, dir); doc.Outcome != "RUNNING" || *doc.Running || *doc.Waiting || doc.Round != 1 {
		t.Errorf("status --json after the rollback: %+v", doc)
	}
}

// --option cancel on a rollback nobody asked for yet drops it at once:
// nothing is written (#40 item 1).
func TestRollbackOptionCancelWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	before := folderBytes(t, dir)
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"rollback", "--dir", dir, "--to", "1", "--reason", "r", "--option", "cancel"}); code != exitOK {
		t.Fatalf("--option cancel: exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "Cancelled: no rollback") {
		t.Errorf("output does not say the rollback was cancelled:\n%s", out)
	}
	if diff := cmp.Diff(before, folderBytes(t, dir)); diff != "" {
		t.Errorf("a cancelled rollback changed the folder (-before +after):\n%s", diff)
	}
}
