package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/validate"
)

// `refine gaps --offline` on the demo's draft lists one candidate for each
// of its five (GAP-…) markers and no other (§1's range and §7's fenced
// examples are not candidates: see internal/markers), as a gap list that
// `refine run --gaps` reads and that passes the discovery check against
// the draft.
func TestGapsOfflineDemo(t *testing.T) {
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"gaps", "--spec", "demo/spec.md", "--offline"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	gaps, err := gapsfile.Parse("stdout", out.Bytes())
	if err != nil {
		t.Fatalf("the list does not parse: %v\n%s", err, out)
	}
	var ids []gap.ID
	for _, g := range gaps {
		ids = append(ids, g.ID)
	}
	want := []gap.ID{"GAP-API-004", "GAP-API-001", "GAP-API-002", "GAP-API-003", "GAP-API-005"} // in the draft's order
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	spec, err := os.ReadFile("demo/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	if r := validate.Discovery(out.String(), validate.DiscoveryOptions{Spec: string(spec)}); !r.Success || len(r.Warnings) > 0 {
		t.Errorf("the list is no valid discovery answer about the draft: %s %s %q", r.FailureType, r.Message, r.Warnings)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb)
	}
}

func TestGapsOfflineOut(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "gaps.md")
	c, stdout, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"gaps", "--spec", "demo/spec.md", "--offline", "--out", out}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if stdout.Len() != 0 || !strings.Contains(errb.String(), "5 candidates written to "+out+"; edit them, then: refine run --spec demo/spec.md --gaps "+out) {
		t.Errorf("stdout %q, stderr %q", stdout, errb)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if gaps, err := gapsfile.Parse(out, data); err != nil || len(gaps) != 5 {
		t.Fatalf("%d gaps, %v", len(gaps), err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
	// An existing file, edited by a person perhaps, is not overwritten.
	if err := os.WriteFile(out, []byte("edited"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, errb = newTestCLI()
	if code := c.main(context.Background(), []string{"gaps", "--spec", "demo/spec.md", "--offline", "--out", out}); code != exitUsage ||
		!strings.Contains(errb.String(), "gaps.md exists: choose another --out, or remove it first") {
		t.Errorf("overwrite: exit %d, %s", code, errb)
	}
	if b, _ := os.ReadFile(out); string(b) != "edited" {
		t.Errorf("the file was overwritten: %q", b)
	}
}

func TestGapsOfflineNothingMarked(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "done.md")
	if err := os.WriteFile(spec, []byte("# Done\n\n```\nTBD\n```\n\nEverything is settled.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"gaps", "--offline", "--spec", spec}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if strings.Contains(out.String(), "- GAP-") || !strings.Contains(errb.String(), "done.md marks nothing as open") {
		t.Errorf("stdout %q, stderr %q", out, errb)
	}
}

func TestGapsUsage(t *testing.T) {
	binary := filepath.Join(t.TempDir(), "draft.png")
	if err := os.WriteFile(binary, []byte("\x89PNG\r\n\x1a\n\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"gaps", "--offline"}, "--spec is required"},
		{[]string{"gaps", "--spec", "demo/spec.md"}, "--llm (or --reviewer, or --replay DIR) is required: the Reviewer discovers the gaps; or --offline"},
		{[]string{"gaps", "--spec", "demo/spec.md", "--offline", "extra"}, `unexpected argument "extra"`},
		{[]string{"gaps", "--spec", "no-such.md", "--offline"}, "read spec:"},
		{[]string{"gaps", "--spec", binary, "--offline"}, "is not UTF-8 text"},
		{[]string{"gaps", "--spec", binary, "--replay", "testdata/basic/replay"}, "is not UTF-8 text"},
	} {
		c, _, errb := newTestCLI()
		if code := c.main(context.Background(), tt.args); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errb, tt.want)
		}
	}
}
