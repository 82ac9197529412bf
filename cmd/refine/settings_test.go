package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	storefs "github.com/refine-spec/refine/store/fs"
)

// Settings live with the session: a resume without --llm and --replay
// continues with the backend and limits the run was started with, and a
// flag given to resume is a recorded change.
func TestResumeKeepsTheSessionsSettings(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s")
	replayDir, gaps := pausingReplay(t)

	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", gaps, "--dir", dir,
		"--llm", "replay", "--replay", replayDir, "--max-rounds", "4", "--rollback-mode", "strict"})
	if code != exitPaused {
		t.Fatalf("run exit %d, want 3 (paused)\n%s\n%s", code, out, errb)
	}
	status := func() map[string]any {
		t.Helper()
		c, out, errb := newTestCLI()
		if code := c.main(ctx, []string{"status", "--dir", dir, "--json"}); code != exitOK {
			t.Fatalf("status exit %d: %s", code, errb)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := status(); m["outcome"] != "PAUSED" {
		t.Fatalf("status outcome %v, want PAUSED", m["outcome"])
	}

	// No --llm, no --replay: the session says it was a replay of replayDir.
	c, out, errb = newTestCLI()
	code = c.main(ctx, []string{"resume", "--dir", dir, "--max-rounds", "6", "--answer", "3: Use ## Gap Resolution headers"})
	if code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "COMPLETE") {
		t.Errorf("resume did not complete:\n%s", out)
	}
	state, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Settings struct {
			MaxRounds    int    `json:"max_rounds"`
			RollbackMode string `json:"rollback_mode"`
			Backend      struct {
				Kind, Source string
			} `json:"backend"`
		} `json:"settings"`
		SettingsLog []struct{ Changes []string } `json:"settings_log"`
	}
	// state.json is a snapshot; the latest settings may be in the journal,
	// so read them through status instead when they differ.
	_ = json.Unmarshal(state, &st)
	if st.Settings.Backend.Kind != "replay" || st.Settings.RollbackMode != "STRICT" {
		t.Errorf("stored settings = %+v, want the replay backend and STRICT", st.Settings)
	}
	ro, err := storefs.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := refine.Inspect(ctx, ro)
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings.MaxRounds != 6 || got.Settings.Backend.Source != replayDir {
		t.Errorf("settings after resume --max-rounds 6 = max %d, source %q; want 6 and %s", got.Settings.MaxRounds, got.Settings.Backend.Source, replayDir)
	}
}
