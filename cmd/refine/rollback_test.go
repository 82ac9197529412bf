package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine/rollback"
)

func runBasic(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "session")
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto", "--quiet"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	return dir
}

func TestRollbackCommandOnFinishedSession(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"rollback", "--dir", dir, "--to", "1", "--reason", "round 2 skipped key rotation review", "--adjust", "review key rotation"}); code != exitOK {
		t.Fatalf("rollback exit %d\n%s\n%s", code, out, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "round_002")); !os.IsNotExist(err) {
		t.Errorf("round_002 still in the live folder")
	}
	b, err := os.ReadFile(filepath.Join(dir, "round_002_rolled_back_1.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := rollback.ListArchive(b, rollback.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	joined := strings.Join(names, " ")
	for _, want := range []string{"rollback_metadata.json", "decisions_from_round_2.md", "engineer.md", "reviewer.md"} {
		if !strings.Contains(joined, want) {
			t.Errorf("archive lacks %s: %v", want, names)
		}
	}
	c, out, _ = newTestCLI()
	c.main(ctx, []string{"status", "--dir", dir, "--json"})
	var st struct {
		Round     int    `json:"round"`
		Outcome   string `json:"outcome"`
		Rollbacks []struct {
			Round   int    `json:"round"`
			Archive string `json:"archive"`
		} `json:"rollbacks"`
		Gaps []struct {
			ID, State string
		} `json:"gaps"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Round != 1 || st.Outcome != "RUNNING" || len(st.Rollbacks) != 1 || st.Rollbacks[0].Archive != "round_002_rolled_back_1.tar.gz" {
		t.Errorf("status after rollback = %+v", st)
	}
	if st.Gaps[0].State != "ACCEPTED" || st.Gaps[1].State != "OPEN" {
		t.Errorf("gap states = %+v, want as after round 1", st.Gaps)
	}
	statusMD, _ := os.ReadFile(filepath.Join(dir, "status.md"))
	if !bytes.Contains(statusMD, []byte("## Rollback History")) {
		t.Errorf("status.md lacks the rollback history")
	}

	// Refusals: out of range, bad flags.
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"rollback", "--dir", dir, "--to", "3", "--reason", "x"}); code != exitFailed || !strings.Contains(errb.String(), "must be in") {
		t.Errorf("out-of-range rollback: exit %d, %s", code, errb)
	}
	c, _, _ = newTestCLI()
	if code := c.main(ctx, []string{"rollback", "--dir", dir, "--to", "0"}); code != exitUsage {
		t.Errorf("rollback without --reason: exit %d", code)
	}
}

func TestArchivesColdStorageAndExpiry(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	c, _, errb := newTestCLI()
	if code := c.main(ctx, []string{"rollback", "--dir", dir, "--to", "1", "--reason", "test", "--adjust", "retry"}); code != exitOK {
		t.Fatalf("rollback: %s", errb)
	}
	cold := t.TempDir()
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"archives", "--dir", dir, "--cleanup", "cold", "--cold-dir", cold}); code != exitOK {
		t.Fatalf("archives cold exit %d: %s\n%s", code, out, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_1.tar.gz")); !os.IsNotExist(err) {
		t.Errorf("archive still in the session after the move")
	}
	manifest, err := os.ReadFile(filepath.Join(cold, "spec_refinement_workflow", "manifest.json"))
	if err != nil || !bytes.Contains(manifest, []byte("round_002_rolled_back_1.tar.gz")) {
		t.Fatalf("manifest: %v\n%s", err, manifest)
	}
	if log, _ := os.ReadFile(filepath.Join(cold, "cleanup_log.txt")); !bytes.Contains(log, []byte("MOVED 1 archive")) {
		t.Errorf("cleanup log:\n%s", log)
	}
	// A fresh archive is not expired; with zero retention it is.
	c, out, _ = newTestCLI()
	c.main(ctx, []string{"archives", "--expire", "--cold-dir", cold})
	if !strings.Contains(out.String(), "Expired 0") {
		t.Errorf("expire with 30 days: %s", out)
	}
	c, out, _ = newTestCLI()
	c.main(ctx, []string{"archives", "--expire", "--cold-dir", cold, "--retention", "1ns"})
	if !strings.Contains(out.String(), "Expired 1") {
		t.Errorf("expire with 1ns: %s", out)
	}
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"archives", "--dir", dir, "--cleanup", "cold"}); code != exitUsage || !strings.Contains(errb.String(), "--cold-dir") {
		t.Errorf("cold without --cold-dir: exit %d %s", code, errb)
	}
}
