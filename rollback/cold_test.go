package rollback

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var specArchives = []ArchiveInfo{
	{Name: "round_003_rolled_back_1.tar.gz", Size: 2150, At: t0.Add(-48 * time.Hour)},
	{Name: "round_005_rolled_back_1.tar.gz", Size: 1843, At: t0},
	{Name: "round_005_rolled_back_2.tar.gz", Size: 2048, At: t0.Add(time.Hour)},
}

func TestCleanupPlan(t *testing.T) {
	now := t0.Add(6 * 24 * time.Hour)
	for _, tc := range []struct {
		c            Cleanup
		keep, remove []string
	}{
		{CleanupKeep, []string{"round_003_rolled_back_1.tar.gz", "round_005_rolled_back_1.tar.gz", "round_005_rolled_back_2.tar.gz"}, nil},
		{CleanupDelete, nil, []string{"round_003_rolled_back_1.tar.gz", "round_005_rolled_back_1.tar.gz", "round_005_rolled_back_2.tar.gz"}},
		{CleanupRecent, []string{"round_005_rolled_back_1.tar.gz", "round_005_rolled_back_2.tar.gz"}, []string{"round_003_rolled_back_1.tar.gz"}},
		{CleanupCold, nil, []string{"round_003_rolled_back_1.tar.gz", "round_005_rolled_back_1.tar.gz", "round_005_rolled_back_2.tar.gz"}},
	} {
		keep, remove := CleanupPlan(tc.c, specArchives, now, 0)
		if !cmp.Equal(keep, tc.keep) || !cmp.Equal(remove, tc.remove) {
			t.Errorf("%s: keep %v remove %v", tc.c, keep, remove)
		}
	}
	if c, err := ParseCleanup("COLD"); err != nil || c != CleanupCold {
		t.Errorf("ParseCleanup: %v %v", c, err)
	}
	if _, err := ParseCleanup("shred"); err == nil {
		t.Error("ParseCleanup accepted shred")
	}
}

func TestColdPlan(t *testing.T) {
	root := filepath.Join("tmp", "cold")
	moved := time.Date(2026, 1, 12, 18, 0, 0, 0, time.UTC)
	cs, err := ColdPlan(nil, specArchives, "abc123", root, moved)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "spec_refinement_workflow", "2026-01-12_session_abc123")
	if diff := cmp.Diff([]Move{
		{Key: "round_003_rolled_back_1.tar.gz", Path: filepath.Join(dir, "round_003_rolled_back_1.tar.gz")},
		{Key: "round_005_rolled_back_1.tar.gz", Path: filepath.Join(dir, "round_005_rolled_back_1.tar.gz")},
		{Key: "round_005_rolled_back_2.tar.gz", Path: filepath.Join(dir, "round_005_rolled_back_2.tar.gz")},
	}, cs.Moves); diff != "" {
		t.Errorf("moves (-want +got):\n%s", diff)
	}
	if cs.Dir != dir || cs.ManifestPath != filepath.Join(root, "spec_refinement_workflow", "manifest.json") || cs.LogPath != filepath.Join(root, "cleanup_log.txt") {
		t.Errorf("paths %+v", cs)
	}
	wantManifest := `{
  "schema": 1,
  "archives": [
    {
      "session": "abc123",
      "path": "2026-01-12_session_abc123/round_003_rolled_back_1.tar.gz",
      "round": 3,
      "attempt": 1,
      "size": 2150,
      "rollback_timestamp": "2026-01-10T14:30:00Z",
      "moved_at": "2026-01-12T18:00:00Z"
    },
    {
      "session": "abc123",
      "path": "2026-01-12_session_abc123/round_005_rolled_back_1.tar.gz",
      "round": 5,
      "attempt": 1,
      "size": 1843,
      "rollback_timestamp": "2026-01-12T14:30:00Z",
      "moved_at": "2026-01-12T18:00:00Z"
    },
    {
      "session": "abc123",
      "path": "2026-01-12_session_abc123/round_005_rolled_back_2.tar.gz",
      "round": 5,
      "attempt": 2,
      "size": 2048,
      "rollback_timestamp": "2026-01-12T15:30:00Z",
      "moved_at": "2026-01-12T18:00:00Z"
    }
  ]
}
`
	if diff := cmp.Diff(wantManifest, string(cs.Manifest)); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	if want := "2026-01-12T18:00:00Z MOVED 3 archives (5.9 KB) of session abc123 to spec_refinement_workflow/2026-01-12_session_abc123\n"; cs.LogLine != want {
		t.Errorf("log line %q", cs.LogLine)
	}

	// A second session merges into the manifest; moving again is idempotent.
	cs2, err := ColdPlan(cs.Manifest, specArchives[:1], "def456", root, moved.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cs3, err := ColdPlan(cs2.Manifest, specArchives[:1], "def456", root, moved.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseManifest(cs3.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Archives) != 4 || string(cs2.Manifest) != string(cs3.Manifest) {
		t.Errorf("merged manifest has %d entries", len(m.Archives))
	}

	for _, tc := range []struct {
		name, session, root string
		archives            []ArchiveInfo
		want                string
	}{
		{"no root", "abc", "", specArchives, "no root configured"},
		{"traversal session", "../../etc", root, specArchives, "session ID"},
		{"bad archive name", "abc", root, []ArchiveInfo{{Name: "../state.json"}}, "is not an archive name"},
	} {
		if _, err := ColdPlan(nil, tc.archives, tc.session, tc.root, moved); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

func TestColdRetention(t *testing.T) {
	moved := time.Date(2026, 1, 12, 18, 0, 0, 0, time.UTC)
	cs, err := ColdPlan(nil, specArchives, "abc123", "/cold", moved)
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour

	ex, err := Expired(cs.Manifest, moved.Add(29*day), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Expired) != 0 || ex.Log != "" || string(ex.Manifest) != string(cs.Manifest) {
		t.Errorf("29 days: expired %v", ex.Expired)
	}

	now := moved.Add(31 * day)
	ex, err = Expired(cs.Manifest, now, defaultColdRetention)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Expired) != 3 {
		t.Fatalf("31 days: %d expired, want 3", len(ex.Expired))
	}
	if !strings.HasPrefix(ex.Log, "2026-02-12T18:00:00Z DELETED spec_refinement_workflow/2026-01-12_session_abc123/round_003_rolled_back_1.tar.gz (in cold storage since 2026-01-12T18:00:00Z; retention 30 days)\n") || strings.Count(ex.Log, "\n") != 3 {
		t.Errorf("log:\n%s", ex.Log)
	}
	if !cmp.Equal(ex.EmptyDirs, []string{"2026-01-12_session_abc123"}) {
		t.Errorf("empty dirs %v", ex.EmptyDirs)
	}
	if got := ColdPath("/cold", ex.Expired[0].Path); got != "/cold/spec_refinement_workflow/2026-01-12_session_abc123/round_003_rolled_back_1.tar.gz" {
		t.Errorf("ColdPath = %s", got)
	}
	if m, _ := parseManifest(ex.Manifest); len(m.Archives) != 0 {
		t.Errorf("manifest after expiry: %s", ex.Manifest)
	}

	// Exactly 30 days is expired; entries of a later session stay.
	cs2, _ := ColdPlan(cs.Manifest, specArchives[:1], "later", "/cold", moved.Add(10*day))
	ex, _ = Expired(cs2.Manifest, moved.Add(30*day), 0)
	if len(ex.Expired) != 3 || !strings.Contains(string(ex.Manifest), "session_later") {
		t.Errorf("30 days: expired %d\n%s", len(ex.Expired), ex.Manifest)
	}
}

func TestManifestRejectsTampering(t *testing.T) {
	for _, m := range []string{
		`{"schema":1,"archives":[{"session":"x","path":"../../../home/u/.ssh/id_rsa","moved_at":"2026-01-12T18:00:00Z"}]}`,
		`{"schema":1,"archives":[{"session":"x","path":"2026-01-12_session_x/../../x/round_003_rolled_back_1.tar.gz","moved_at":"2026-01-12T18:00:00Z"}]}`,
		`{"schema":1,"archives":[{"session":"x","path":"/etc/round_003_rolled_back_1.tar.gz","moved_at":"2026-01-12T18:00:00Z"}]}`,
		`{"schema":1,"archives":[{"session":"x","path":"2026-01-12_session_x/notes.txt","moved_at":"2026-01-12T18:00:00Z"}]}`,
		`{"schema":2,"archives":[]}`,
		`{"schema":1,"archives":[{"path":"2026-01-12_session_x/round_003_rolled_back_1.tar.gz","moved_at":"yesterday"}]}`,
		`not json`,
	} {
		if _, err := Expired([]byte(m), t0, 0); !errors.Is(err, errManifest) {
			t.Errorf("Expired(%s): err = %v, want ErrManifest", m, err)
		}
	}
	if ex, err := Expired(nil, t0, 0); err != nil || len(ex.Expired) != 0 {
		t.Errorf("empty manifest: %v", err)
	}
}

// An archive that does not read back safely is never removed or moved by
// cleanup unless the caller clears Unsafe.
func TestCleanupLeavesUnsafeArchives(t *testing.T) {
	archives := append(slices.Clone(specArchives), ArchiveInfo{Name: "round_005_rolled_back_9.tar.gz", Size: 10, Unsafe: "unsafe archive: entry \"x\": symbolic link"})
	for _, c := range []Cleanup{CleanupDelete, CleanupRecent, CleanupCold} {
		_, remove := CleanupPlan(c, archives, t0, 0)
		if slices.Contains(remove, "round_005_rolled_back_9.tar.gz") {
			t.Errorf("%s removes the unsafe archive: %v", c, remove)
		}
	}
	if _, err := ColdPlan(nil, archives, "s1", "/cold", t0); err == nil || !strings.Contains(err.Error(), "round_005_rolled_back_9.tar.gz") {
		t.Errorf("ColdPlan with an unsafe archive: error = %v, want a refusal naming it", err)
	}
	safe, unsafe := SplitUnsafe(archives)
	if len(safe) != len(specArchives) || len(unsafe) != 1 || unsafe[0].Name != "round_005_rolled_back_9.tar.gz" {
		t.Errorf("SplitUnsafe = %v, %v", safe, unsafe)
	}
}
