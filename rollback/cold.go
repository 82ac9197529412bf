package rollback

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// Cleanup is a session-end choice for rolled-back archives; the values are
// the CLI's `--cleanup` words.
type Cleanup string

// The four session-end options.
const (
	CleanupKeep   Cleanup = "keep"
	CleanupDelete Cleanup = "delete"
	CleanupRecent Cleanup = "recent"
	CleanupCold   Cleanup = "cold"
)

// ParseCleanup reads a Cleanup word, case-insensitively.
func ParseCleanup(s string) (Cleanup, error) {
	c := Cleanup(strings.ToLower(strings.TrimSpace(s)))
	switch c {
	case CleanupKeep, CleanupDelete, CleanupRecent, CleanupCold:
		return c, nil
	}
	return "", fmt.Errorf("rollback: unknown cleanup %q: want keep, delete, recent or cold", s)
}

// Retention defaults.
const (
	// defaultRecentWindow is "Keep recent only (last 7 days of this session)".
	defaultRecentWindow = 7 * 24 * time.Hour
	// defaultColdRetention is the cold-storage retention (30 days).
	defaultColdRetention = 30 * 24 * time.Hour
)

// ArchiveInfo describes one archive in the session.
type ArchiveInfo struct {
	// Name is the archive's key, ArchiveName(Round, Attempt).
	Name string
	Size int64
	// Round and Attempt are parsed from Name when zero.
	Round, Attempt int
	// At is when the rollback happened (Record.At or the metadata's timestamp).
	At time.Time
	// Unsafe says why reading the archive back refused it (ReadArchive's
	// error: a link, an absolute or ".." path, too large, corrupt); empty
	// when it reads back safely. Cleanup never removes or moves an unsafe
	// archive: a planted file must not travel on as an ordinary archive.
	Unsafe string
}

// SplitUnsafe separates the archives that read back safely from those
// that do not (Unsafe set), keeping their order.
func SplitUnsafe(archives []ArchiveInfo) (safe, unsafe []ArchiveInfo) {
	for _, a := range archives {
		if a.Unsafe != "" {
			unsafe = append(unsafe, a)
		} else {
			safe = append(safe, a)
		}
	}
	return safe, unsafe
}

func (a ArchiveInfo) norm() (ArchiveInfo, error) {
	r, k, ok := ParseArchiveName(a.Name)
	if !ok {
		return a, fmt.Errorf("rollback: %q is not an archive name (round_NNN_rolled_back_K.tar.gz)", a.Name)
	}
	if a.Round == 0 {
		a.Round = r
	}
	if a.Attempt == 0 {
		a.Attempt = k
	}
	return a, nil
}

// CleanupPlan splits the session's archives into those kept in the session
// and those removed from it: keep removes none; delete removes all; recent
// keeps the archives of rollbacks within `recent` (<= 0: defaultRecentWindow)
// before now, inclusive; cold removes all from the session (after ColdPlan's
// moves have been carried out). An unsafe archive (Unsafe set) is always
// kept: clear Unsafe to let cleanup remove it.
func CleanupPlan(c Cleanup, archives []ArchiveInfo, now time.Time, recent time.Duration) (keep, remove []string) {
	if recent <= 0 {
		recent = defaultRecentWindow
	}
	for _, a := range archives {
		switch {
		case a.Unsafe != "", c == CleanupKeep, c == CleanupRecent && now.Sub(a.At) <= recent:
			keep = append(keep, a.Name)
		default:
			remove = append(remove, a.Name)
		}
	}
	return keep, remove
}

// Cold-storage layout under the configured root (the spec's tree):
//
//	<root>/spec_refinement_workflow/<YYYY-MM-DD>_session_<id>/round_…tar.gz
//	<root>/spec_refinement_workflow/manifest.json
//	<root>/cleanup_log.txt
const (
	ColdWorkflowDir = "spec_refinement_workflow"
	ManifestName    = "manifest.json"
	CleanupLogName  = "cleanup_log.txt"
)

// manifestSchema is the manifest.json schema version.
const manifestSchema = 1

// manifest is manifest.json: every archive in cold storage, sorted by Path.
type manifest struct {
	Schema   int             `json:"schema"`
	Archives []ManifestEntry `json:"archives"`
}

// ManifestEntry is one archive in cold storage.
type ManifestEntry struct {
	Session string
	// Path is relative to <root>/spec_refinement_workflow, '/'-separated:
	// "<YYYY-MM-DD>_session_<id>/<archive name>".
	Path              string
	Round, Attempt    int
	Size              int64
	RollbackTimestamp time.Time
	// MovedAt starts the retention clock.
	MovedAt time.Time
}

type manifestEntryJSON struct {
	Session           string `json:"session"`
	Path              string `json:"path"`
	Round             int    `json:"round"`
	Attempt           int    `json:"attempt"`
	Size              int64  `json:"size"`
	RollbackTimestamp string `json:"rollback_timestamp,omitempty"`
	MovedAt           string `json:"moved_at"`
}

// MarshalJSON writes snake_case fields and spec timestamps.
func (e ManifestEntry) MarshalJSON() ([]byte, error) {
	j := manifestEntryJSON{Session: e.Session, Path: e.Path, Round: e.Round, Attempt: e.Attempt, Size: e.Size, MovedAt: rollbackfmt.FormatTimestamp(e.MovedAt)}
	if !e.RollbackTimestamp.IsZero() {
		j.RollbackTimestamp = rollbackfmt.FormatTimestamp(e.RollbackTimestamp)
	}
	return marshalNoEscape(j)
}

// UnmarshalJSON reads an entry.
func (e *ManifestEntry) UnmarshalJSON(b []byte) error {
	var j manifestEntryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	moved, err := rollbackfmt.ParseTimestamp(j.MovedAt)
	if err != nil {
		return err
	}
	var rb time.Time
	if j.RollbackTimestamp != "" {
		if rb, err = rollbackfmt.ParseTimestamp(j.RollbackTimestamp); err != nil {
			return err
		}
	}
	*e = ManifestEntry{Session: j.Session, Path: j.Path, Round: j.Round, Attempt: j.Attempt, Size: j.Size, RollbackTimestamp: rb, MovedAt: moved}
	return nil
}

// errManifest is wrapped by errors about a manifest that cannot be trusted.
var errManifest = errors.New("invalid cold-storage manifest")

var (
	sessionIDPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	sessionDirPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}_session_[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

// checkEntryPath guards deletion by manifest: a tampered manifest must not
// be able to name anything but an archive in a session folder.
func checkEntryPath(p string) error {
	dir, name, ok := strings.Cut(p, "/")
	if !ok || !sessionDirPattern.MatchString(dir) || strings.Contains(dir, "..") {
		return fmt.Errorf("%w: path %q is not <date>_session_<id>/<archive>", errManifest, p)
	}
	if _, _, ok := ParseArchiveName(name); !ok {
		return fmt.Errorf("%w: path %q does not name an archive", errManifest, p)
	}
	return nil
}

// parseManifest reads manifest.json; empty input is an empty manifest.
// Every entry's path is checked, since the manifest drives deletions.
func parseManifest(b []byte) (manifest, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return manifest{Schema: manifestSchema}, nil
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return manifest{}, fmt.Errorf("rollback: %w: %v", errManifest, err)
	}
	if m.Schema != manifestSchema {
		return manifest{}, fmt.Errorf("rollback: %w: schema %d, want %d", errManifest, m.Schema, manifestSchema)
	}
	for _, e := range m.Archives {
		if err := checkEntryPath(e.Path); err != nil {
			return manifest{}, fmt.Errorf("rollback: %w", err)
		}
	}
	return m, nil
}

// Encode writes the manifest: entries sorted by path, two-space indent,
// trailing newline; the archives array is never null.
func (m manifest) Encode() ([]byte, error) {
	m.Schema = manifestSchema
	m.Archives = slices.Clone(m.Archives)
	if m.Archives == nil {
		m.Archives = []ManifestEntry{}
	}
	slices.SortFunc(m.Archives, func(a, b ManifestEntry) int { return strings.Compare(a.Path, b.Path) })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Move copies one session archive (Store key Key) to a cold-storage file
// (filesystem Path); delete the key once the copy is durable.
type Move struct {
	Key  string
	Path string
}

// ColdStorage is the plan for moving a session's archives to cold storage.
type ColdStorage struct {
	// Dir is the session's folder: <root>/spec_refinement_workflow/<date>_session_<id>.
	Dir   string
	Moves []Move
	// Manifest is the new manifest.json (the existing entries plus these),
	// to be written at ManifestPath after the moves.
	Manifest     []byte
	ManifestPath string
	// LogLine is appended to cleanup_log.txt at LogPath.
	LogLine string
	LogPath string
}

// ColdPlan plans moving a session's archives to cold storage under root.
// existing is the current manifest.json (nil when there is none); session
// is the session ID (letters, digits, '.', '_', '-'); now dates the session
// folder and starts the retention clock. The root is always the caller's
// (a Config field), never a home directory. Moving the same archive again
// replaces its manifest entry, so a retried move is idempotent. An unsafe
// archive (Unsafe set) is refused: clear Unsafe to move it anyway.
func ColdPlan(existing []byte, archives []ArchiveInfo, session, root string, now time.Time) (ColdStorage, error) {
	if root == "" {
		return ColdStorage{}, errors.New("rollback: cold storage: no root configured")
	}
	if !sessionIDPattern.MatchString(session) {
		return ColdStorage{}, fmt.Errorf("rollback: cold storage: session ID %q: want 1-128 of [A-Za-z0-9._-], not starting with '.' or '-'", session)
	}
	m, err := parseManifest(existing)
	if err != nil {
		return ColdStorage{}, err
	}
	now = now.UTC()
	dir := now.Format("2006-01-02") + "_session_" + session
	base := filepath.Join(root, ColdWorkflowDir)
	cs := ColdStorage{
		Dir:          filepath.Join(base, dir),
		ManifestPath: filepath.Join(base, ManifestName),
		LogPath:      filepath.Join(root, CleanupLogName),
	}
	var total int64
	for _, a := range archives {
		a, err := a.norm()
		if err != nil {
			return ColdStorage{}, err
		}
		if a.Unsafe != "" {
			return ColdStorage{}, fmt.Errorf("rollback: cold storage: %s does not read back safely (%s): not moved", a.Name, a.Unsafe)
		}
		rel := dir + "/" + a.Name
		cs.Moves = append(cs.Moves, Move{Key: a.Name, Path: filepath.Join(cs.Dir, a.Name)})
		m.Archives = slices.DeleteFunc(m.Archives, func(e ManifestEntry) bool { return e.Path == rel })
		m.Archives = append(m.Archives, ManifestEntry{
			Session: session, Path: rel, Round: a.Round, Attempt: a.Attempt,
			Size: a.Size, RollbackTimestamp: a.At.UTC(), MovedAt: now,
		})
		total += a.Size
	}
	if cs.Manifest, err = m.Encode(); err != nil {
		return ColdStorage{}, fmt.Errorf("rollback: cold storage: %w", err)
	}
	cs.LogLine = fmt.Sprintf("%s MOVED %s (%s) of session %s to %s/%s\n",
		rollbackfmt.FormatTimestamp(now), rollbackfmt.Plural(len(archives), "archive", "archives"), rollbackfmt.FormatSize(total), session, ColdWorkflowDir, dir)
	return cs, nil
}

// Expiry is the plan of one run of the cold-storage retention job.
type Expiry struct {
	// Expired are the entries to delete; their Path is relative to
	// <root>/spec_refinement_workflow (see ColdPath).
	Expired []ManifestEntry
	// Manifest is the manifest without them, to write after deleting.
	Manifest []byte
	// Log holds one cleanup_log.txt line per deletion.
	Log string
	// EmptyDirs are session folders (relative) left with no archive.
	EmptyDirs []string
}

// ColdPath turns a manifest path into a filesystem path under root.
func ColdPath(root, rel string) string {
	return filepath.Join(root, ColdWorkflowDir, filepath.FromSlash(rel))
}

// Expired runs the retention policy over manifest.json at time now: an
// archive expires once it has been in cold storage for `retention` (<= 0:
// defaultColdRetention) or longer, counted from its MovedAt.
func Expired(manifest []byte, now time.Time, retention time.Duration) (Expiry, error) {
	if retention <= 0 {
		retention = defaultColdRetention
	}
	m, err := parseManifest(manifest)
	if err != nil {
		return Expiry{}, err
	}
	var ex Expiry
	var kept []ManifestEntry
	for _, e := range m.Archives {
		if now.Sub(e.MovedAt) >= retention {
			ex.Expired = append(ex.Expired, e)
			ex.Log += fmt.Sprintf("%s DELETED %s/%s (in cold storage since %s; retention %s)\n",
				rollbackfmt.FormatTimestamp(now), ColdWorkflowDir, e.Path, rollbackfmt.FormatTimestamp(e.MovedAt), formatRetention(retention))
		} else {
			kept = append(kept, e)
		}
	}
	for _, e := range ex.Expired {
		dir, _, _ := strings.Cut(e.Path, "/")
		if !slices.ContainsFunc(kept, func(k ManifestEntry) bool { return strings.HasPrefix(k.Path, dir+"/") }) && !slices.Contains(ex.EmptyDirs, dir) {
			ex.EmptyDirs = append(ex.EmptyDirs, dir)
		}
	}
	m.Archives = kept
	if ex.Manifest, err = m.Encode(); err != nil {
		return Expiry{}, fmt.Errorf("rollback: retention: %w", err)
	}
	return ex, nil
}

func formatRetention(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return rollbackfmt.Plural(int(d/(24*time.Hour)), "day", "days")
	}
	return d.String()
}
