package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sessions --json gives "open_gaps": {} for a session with none open, as
// the web API does, never null (#27 item 10).
func TestSessionsJSONOpenGapsNeverNull(t *testing.T) {
	ctx := context.Background()
	store := "file:" + filepath.Join(t.TempDir(), "sessions")
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--store", store,
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto", "--quiet"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"sessions", "--store", store, "--json"}); code != exitOK {
		t.Fatalf("sessions exit %d: %s", code, errb)
	}
	var listed []map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("sessions --json = %s (%v), want one session", out, err)
	}
	if got := string(listed[0]["open_gaps"]); got != "{}" {
		t.Errorf(`open_gaps = %s, want {} (the session finished with none open)`, got)
	}
}

// --retention 0s (or negative) is refused: the library would read it as
// its 30-day default and silently expire nothing (#27 item 10).
func TestExpireRefusesZeroRetention(t *testing.T) {
	for _, r := range []string{"0s", "-1h"} {
		c, out, errb := newTestCLI()
		code := c.main(context.Background(), []string{"archives", "--expire", "--cold-dir", t.TempDir(), "--retention", r})
		if code != exitUsage || !strings.Contains(errb.String(), "want a positive duration") {
			t.Errorf("--retention %s: exit %d, stderr %q (stdout %q); want a usage error", r, code, errb, out)
		}
	}
}

// Suggested command lines quote what a shell would read: a store URL's
// "?" and "&", a folder's spaces (#27 item 10).
func TestSuggestedCommandsAreQuoted(t *testing.T) {
	tests := []struct {
		loc  sessionLoc
		want string
	}{
		{sessionLoc{dir: "/tmp/s"}, "--dir /tmp/s"},
		{sessionLoc{dir: "/tmp/my session"}, "--dir '/tmp/my session'"},
		{sessionLoc{store: "postgres://u@db/refine?sslmode=disable&x=1", id: "20261126T1-1"},
			"--store 'postgres://u@db/refine?sslmode=disable&x=1' --session 20261126T1-1"},
		{sessionLoc{dir: "it's"}, `--dir 'it'\''s'`},
	}
	for _, tc := range tests {
		if got := tc.loc.flags(); got != tc.want {
			t.Errorf("flags() = %s, want %s", got, tc.want)
		}
	}
}

// The Temporal example (README) plays offline too: three Engineer answers
// in the wrong format, the escalation question answered with context, then
// a concrete resolution the Reviewer accepts (#27 item 10).
func TestTemporalExamplePlays(t *testing.T) {
	const ex = "../../temporal/examples/hooks/"
	answers := filepath.Join(t.TempDir(), "answers.txt")
	if err := os.WriteFile(answers, []byte("3: Use ## Gap Resolution headers\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "session")
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"run", "--spec", ex + "spec.md", "--gaps", ex + "gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", ex + "replay", "--answers", answers, "--quiet"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "COMPLETE after round 1") || !strings.Contains(errb.String(), "r1-engineer-escalation-1") {
		t.Errorf("the example did not escalate and then complete:\n%s\n%s", out, errb)
	}
	spec, err := os.ReadFile(filepath.Join(dir, "final_spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"full jitter", "410 Gone", "X-Hook-Attempt"} {
		if !strings.Contains(string(spec), want) {
			t.Errorf("final spec lacks %q", want)
		}
	}
}
