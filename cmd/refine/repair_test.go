package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A session file damaged on disk, which the store repairs from its log
// when the folder opens, is reported: refine status logs the repair at
// WARN and shows it, status --json lists it under "repairs", and the next
// run records it in the session's state (issue #39: the repair was
// silent).
func TestRepairIsReportedAndRecorded(t *testing.T) {
	ctx := context.Background()
	dir := runPaused(t)
	segments, err := filepath.Glob(filepath.Join(dir, "journal", "*.jsonl"))
	if err != nil || len(segments) == 0 {
		t.Fatalf("no journal segment: %v", err)
	}
	sort.Strings(segments)
	last := segments[len(segments)-1]
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x04 // a bit flipped by the disk
	if err := os.WriteFile(last, b, 0o600); err != nil {
		t.Fatal(err)
	}
	key, _ := filepath.Rel(dir, last)
	key = filepath.ToSlash(key)

	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", dir}); code != exitOK {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(errb.String(), "level=WARN") || !strings.Contains(errb.String(), "repaired") || !strings.Contains(errb.String(), key) {
		t.Errorf("status does not log the repair at WARN:\n%s", errb)
	}
	if !strings.Contains(out.String(), "repaired") || !strings.Contains(out.String(), key) {
		t.Errorf("status does not show the repair:\n%s", out)
	}
	repairs := func() []map[string]any {
		t.Helper()
		c, out, errb := newTestCLI()
		if code := c.main(ctx, []string{"status", "--dir", dir, "--json"}); code != exitOK {
			t.Fatalf("status --json: exit %d\n%s", code, errb)
		}
		var st struct {
			Repairs []map[string]any `json:"repairs"`
		}
		if err := json.Unmarshal(out.Bytes(), &st); err != nil {
			t.Fatal(err)
		}
		return st.Repairs
	}
	if rs := repairs(); len(rs) != 1 || rs[0]["key"] != key || rs[0]["at"] == "" || rs[0]["detail"] == "" || rs[0]["id"] == "" {
		t.Errorf("status --json repairs = %v, want the repair of %s", rs, key)
	}

	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", dir, "--replay", "testdata/basic/replay", "--auto", "--quiet"}); code != exitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, ".refine-wal", "repairs.json")); !os.IsNotExist(err) {
		t.Errorf("the store still reports the repair after the run recorded it: %v", err)
	}
	if rs := repairs(); len(rs) != 1 || rs[0]["key"] != key {
		t.Errorf("after the run, status --json repairs = %v, want the recorded repair of %s", rs, key)
	}
	state, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil || !strings.Contains(string(state), `"repairs"`) {
		t.Errorf("state.json does not record the repair (%v)", err)
	}
}
