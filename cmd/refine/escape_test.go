package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/refine-spec/refine/internal/termtext/termtexttest"
	"github.com/refine-spec/refine/store/fs"
)

// hostileDir is a session folder paused at a question, whose gap title
// is termtexttest.Title and whose question quotes it.
func hostileDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "session")
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	termtexttest.Session(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// refine status shows the hostile corpus by the escape policy on the
// terminal, and as \u escapes that decode to it verbatim with --json
// (issue #39).
func TestStatusShowsHostileTextByThePolicy(t *testing.T) {
	dir := hostileDir(t)
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"status", "--dir", dir}); code != exitOK {
		t.Fatalf("status: exit %d\n%s", code, errb)
	}
	termtexttest.Check(t, "refine status", termtexttest.Text, out.String()+errb.String())

	c, out, errb = newTestCLI()
	if code := c.main(context.Background(), []string{"status", "--dir", dir, "--json"}); code != exitOK {
		t.Fatalf("status --json: exit %d\n%s", code, errb)
	}
	termtexttest.Check(t, "refine status --json", termtexttest.JSON, out.String())
	var st struct {
		Gaps []struct {
			Title string `json:"title"`
		} `json:"gaps"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || len(st.Gaps) == 0 || st.Gaps[0].Title != termtexttest.Title {
		t.Errorf("status --json does not decode to the title verbatim: %v %+v", err, st.Gaps)
	}
}
