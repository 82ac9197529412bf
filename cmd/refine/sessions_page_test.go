package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// refine sessions --limit lists a page and names the command for the
// next; walking the pages lists every session once.
func TestSessionsPages(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, id := range []string{"a", "b", "c"} {
		c, out, errb := newTestCLI()
		if code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--store", "file:" + root, "--session", id,
			"--llm", "replay", "--replay", "testdata/basic/replay", "--auto", "--quiet"}); code != exitOK {
			t.Fatalf("run %s: exit %d\n%s\n%s", id, code, out, errb)
		}
	}
	seen := map[string]bool{}
	args := []string{"sessions", "--store", "file:" + root, "--json", "--limit", "2"}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("no last page")
		}
		c, out, errb := newTestCLI()
		if code := c.main(ctx, args); code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errb)
		}
		var list []struct{ ID string }
		if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list) > 2 {
			t.Fatalf("%d sessions, %v", len(list), err)
		}
		for _, s := range list {
			if seen[s.ID] {
				t.Errorf("%s listed twice", s.ID)
			}
			seen[s.ID] = true
		}
		m := regexp.MustCompile(`--after '?([^' \n]+)'?`).FindStringSubmatch(errb.String())
		if m == nil {
			break
		}
		args = []string{"sessions", "--store", "file:" + root, "--json", "--limit", "2", "--after", m[1]}
	}
	if len(seen) != 3 {
		t.Errorf("listed %v, want a, b and c", seen)
	}
	c, _, errb := newTestCLI()
	if code := c.main(ctx, []string{"sessions", "--store", "file:" + filepath.Clean(root), "--after", "bogus"}); code != exitUsage || !strings.Contains(errb.String(), "cursor") {
		t.Errorf("a bad cursor: exit %d, %s", code, errb)
	}
}
