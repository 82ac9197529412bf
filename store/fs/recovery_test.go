package fs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
)

var errCrash = errors.New("simulated crash")

// abandon drops the Store the way a killed process would: the applier
// stops after the commit it is applying, if any, leaving the rest
// unapplied, the lock is released (the kernel does that for flock) and
// nothing else happens, no checkpoint in particular.
func (s *Store) abandon() {
	s.apl.halt(false)
	s.release()
}

// commitApplied commits ops and waits until the files hold them, or
// returns the error that stopped either: a failure past the commit point
// may only surface once the applier reaches the commit.
func commitApplied(s *Store, ops ...store.Op) error {
	if err := s.Commit(context.Background(), ops...); err != nil {
		return err
	}
	return s.flush()
}

// mustOpen opens dir with opts and, unless they say otherwise, no idle
// checkpoints, so that what the log holds does not depend on timing.
func mustOpen(t *testing.T, dir string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(dir, append([]Option{withIdleDelay(-1)}, opts...)...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// crashAt returns a hook that fails at point, like a crash there.
func crashAt(point string) Option {
	return withHook(func(p string) error {
		if p == point {
			return errCrash
		}
		return nil
	})
}

// logFiles lists the log folder's entries, sorted.
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, walName))
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// scanned reads the log in dir as Open would, changing nothing.
func scanned(t *testing.T, dir string) *logScan {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	scan, err := (&Store{dir: dir, root: root}).scanLog()
	if err != nil {
		t.Fatal(err)
	}
	return scan
}

// records names the records Open would replay, as recordName does,
// whether they are frames of the log file or record files.
func records(t *testing.T, dir string) []string {
	t.Helper()
	var recs []string
	for _, r := range scanned(t, dir).records {
		recs = append(recs, recordName(r.seq))
	}
	return recs
}

// markerOf returns the last record the log says the files reflect.
func markerOf(t *testing.T, dir string) uint64 {
	t.Helper()
	return scanned(t, dir).marker
}

// snapshot reads every key through a fresh Store, after checking that its
// recovery brought the files up to the log and discarded temporary files.
// The records it replayed stay in the log (a crash would replay them
// again) until the checkpoint the thresholds call for, so a second Open
// must find the same.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := mustOpen(t, dir)
	defer s.Close()
	for _, name := range logFiles(t, dir) {
		if strings.HasSuffix(name, tempSuffix) {
			t.Errorf("log after Open = %q, want no temporary files", logFiles(t, dir))
			break
		}
	}
	got := readKeys(t, s)
	if diff := cmp.Diff(got, rawFiles(t, dir)); diff != "" {
		t.Errorf("after Open, the files do not hold what the store reads (-store +files):\n%s", diff)
	}
	return got
}

func readKeys(t *testing.T, s *Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, k := range keys {
		b, err := s.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		m[k] = string(b)
	}
	return m
}

// rawTree is every file and folder under dir, the store's own included,
// with file contents: what "nothing was changed" is checked against.
func rawTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel := filepath.ToSlash(p[len(dir)+1:])
		switch {
		case d.IsDir():
			m[rel+"/"] = ""
		case d.Type()&iofs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			m[rel] = "-> " + target
			return err
		default:
			b, err := os.ReadFile(p)
			m[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	before = map[string]string{
		"state.json":            "old",
		"round_001/engineer.md": "old",
		"doomed/only.md":        "old",
	}
	after = map[string]string{
		"state.json":            "new",
		"round_001/engineer.md": "new",
		"round_002/summary.md":  "new", // a new file in a new folder
	}
	secondCommit = []store.Op{
		store.Put("state.json", []byte("new")),
		store.Put("round_001/engineer.md", []byte("new")),
		store.Put("round_002/summary.md", []byte("new")),
		store.Delete("doomed/only.md"),
	}
)

// seed commits before as record 1, checkpointed (the threshold is one
// record), and closes: the log is empty, its marker 1.
func seed(t *testing.T, dir string) {
	t.Helper()
	s := mustOpen(t, dir, withCheckpointThresholds(1, 1<<30))
	var ops []store.Op
	for k, v := range before {
		ops = append(ops, store.Put(k, []byte(v)))
	}
	if err := s.Commit(context.Background(), ops...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if recs, m := records(t, dir), markerOf(t, dir); len(recs) != 0 || m != 1 {
		t.Fatalf("after seeding: records %q, marker %d; want none and 1", recs, m)
	}
}

// writeLog puts a file in the log folder, as a crash or a damaged disk
// might leave it.
func writeLog(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, walName, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func changesOf(ops ...store.Op) []change { return netChanges(ops) }

// encodeMarker lays out a checkpoint marker file as earlier refines wrote
// it: "REFCKP1\n", seq uint64, and a CRC-32C of those 16 bytes.
func encodeMarker(seq uint64) []byte {
	b := make([]byte, 0, markerSize)
	b = append(b, markerMagic...)
	b = binary.LittleEndian.AppendUint64(b, seq)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// withSum recomputes a hand-edited record's checksum, making it complete.
func withSum(b []byte) []byte {
	body := slices.Clone(b[:len(b)-crcSize])
	return binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
}

func TestInternalNamesAreReserved(t *testing.T) {
	for _, name := range []string{lockName, walName, legacyRecord, legacyStaging,
		walName + "/" + recordName(1), walName + "/" + markerName, walName + "/" + logName} {
		if err := store.ValidKey(name); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("ValidKey(%q) = %v: a key could overwrite the store's own file", name, err)
		}
	}
}

// TestCrashPoints stops a commit at each step, abandons the Store like a
// killed process, and checks what Open makes of the folder: before the
// commit point the old state, after it the new one.
func TestCrashPoints(t *testing.T) {
	tests := []struct {
		point      string
		want       map[string]string
		wantReplay bool // the crash leaves a record after the marker
		checkpoint bool // the commit is due for a checkpoint
	}{
		{"logged", before, false, false},
		{"recorded", after, true, false},
		{"put round_001/engineer.md", after, true, false}, // after the delete
		{"put round_002/summary.md", after, true, false},  // one put in place
		{"put state.json", after, true, false},            // all but one in place
		{"applied", after, true, false},                   // every rename done
		{"checkpoint", after, true, true},                 // checkpoint due, nothing synced yet
		{"synced", after, true, true},                     // checkpoint fsynced, no marker yet
		{"marked", after, false, true},                    // marker written, record not deleted
	}
	for _, tc := range tests {
		t.Run(strings.ReplaceAll(tc.point, "/", "_"), func(t *testing.T) {
			dir := t.TempDir()
			seed(t, dir)
			opts := []Option{crashAt(tc.point)}
			if tc.checkpoint {
				opts = append(opts, withCheckpointThresholds(1, 1<<30))
			}
			s := mustOpen(t, dir, opts...)
			err := commitApplied(s, secondCommit...)
			if !errors.Is(err, errCrash) {
				t.Fatalf("Commit error = %v, want the simulated crash", err)
			}
			pastCommitPoint := tc.point != "logged"
			if pastCommitPoint {
				// The Store refuses to serve a state it knows may be
				// half-applied.
				if _, err := s.Get(context.Background(), "state.json"); err == nil || !strings.Contains(err.Error(), "open the folder again") {
					t.Errorf("Get after a failure past the commit point: error = %v, want one asking to reopen", err)
				}
			}
			s.abandon()
			recs := records(t, dir)
			if got := slices.Contains(recs, recordName(2)) && markerOf(t, dir) < 2; got != tc.wantReplay {
				t.Errorf("record 2 to replay = %v, want %v (log %q)", got, tc.wantReplay, logFiles(t, dir))
			}
			if diff := cmp.Diff(tc.want, snapshot(t, dir)); diff != "" {
				t.Errorf("after reopening (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(filepath.Join(dir, "doomed")); pastCommitPoint && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the emptied folder of a deleted key was not pruned: %v", err)
			}
		})
	}
}

// TestCheckpointSyncFailure: a checkpoint whose sync call fails (the
// syncfs, or an fsync where there is none) moves no marker and breaks the
// Store; the records stay in the log and the next Open replays them.
func TestCheckpointSyncFailure(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	failing := func(f *os.File, c syncCall) error {
		if c.purpose == syncCheckpoint && !c.data {
			return errCrash
		}
		return doSync(f, c)
	}
	s := mustOpen(t, dir, withCheckpointThresholds(1, 1<<30), func(o *options) { o.syncer = failing })
	if err := commitApplied(s, secondCommit...); !errors.Is(err, errCrash) {
		t.Fatalf("Commit error = %v, want the failed sync", err)
	}
	if err := s.Close(); err == nil || !errors.Is(err, errCrash) {
		t.Errorf("Close error = %v, want the failed sync", err)
	}
	if recs, m := records(t, dir), markerOf(t, dir); !slices.Equal(recs, []string{recordName(2)}) || m != 1 {
		t.Errorf("log = %q, marker %d; want record 2 kept, marker 1", recs, m)
	}
	if diff := cmp.Diff(after, snapshot(t, dir)); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
}

// TestBrokenStoreIsNotCheckpointed closes, rather than abandons, a Store
// whose commit failed half applied: Close must leave the record for Open,
// since a checkpoint would declare the half-applied files durable.
func TestBrokenStoreIsNotCheckpointed(t *testing.T) {
	for _, point := range []string{"put round_002/summary.md", "synced"} {
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			dir := t.TempDir()
			seed(t, dir)
			s := mustOpen(t, dir, crashAt(point), withCheckpointThresholds(1, 1<<30))
			if err := commitApplied(s, secondCommit...); !errors.Is(err, errCrash) {
				t.Fatalf("Commit error = %v, want the simulated crash", err)
			}
			if err := s.Commit(context.Background(), store.Put("later.md", []byte("x"))); err == nil || !strings.Contains(err.Error(), "open the folder again") {
				t.Errorf("Commit on a broken store: error = %v, want one asking to reopen", err)
			}
			if err := s.Close(); !errors.Is(err, errCrash) || !strings.Contains(err.Error(), "opened again") {
				t.Fatalf("Close error = %v, want the failure, saying the next Open completes the commit", err)
			}
			if recs := records(t, dir); !slices.Equal(recs, []string{recordName(2)}) {
				t.Errorf("log after closing a broken store = %q, want record 2 kept", logFiles(t, dir))
			}
			if diff := cmp.Diff(after, snapshot(t, dir)); diff != "" {
				t.Errorf("after reopening (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDamagedLastRecordRefused hands Open a last record that is cut short
// or fails its checksum. Records are renamed into place only once written
// in full (and fsynced), so no crash leaves one like that: it is damage,
// and Open must refuse, naming the record, rather than take it for a
// commit that never happened and replay older records over files that may
// already hold its newer values. A record a crash did cut short is still
// a temporary file, which Open discards.
func TestDamagedLastRecordRefused(t *testing.T) {
	full := encodeRecord(2, changesOf(secondCommit...))
	flipped := slices.Clone(full)
	flipped[len(flipped)/2] ^= 0x40
	tests := map[string][]byte{
		"empty":           {},
		"magic only":      full[:len(recordMagic)],
		"header only":     full[:recordHeader],
		"half":            full[:len(full)/2],
		"all but one":     full[:len(full)-1],
		"flipped bit":     flipped,
		"zeros":           make([]byte, len(full)),
		"trailing bytes":  append(slices.Clone(full), 0),
		"garbage":         []byte("not a record at all"),
		"zeroed tail":     append(slices.Clone(full[:len(full)-20]), make([]byte, 20)...),
		"other log magic": append([]byte("REFCKP1\n"), full[8:]...),
	}
	for name, damaged := range tests {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			seed(t, dir)
			writeLog(t, dir, recordName(2), damaged)
			want := rawTree(t, dir)
			_, err := Open(dir)
			if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), recordName(2)) {
				t.Errorf("Open error = %v, want ErrCorrupt naming %s", err, recordName(2))
			}
			if diff := cmp.Diff(want, rawTree(t, dir)); diff != "" {
				t.Errorf("a damaged record changed the folder (-want +got):\n%s", diff)
			}
		})
	}

	// The defect the refusal prevents: record 3 was applied (state.json
	// holds its value), then damaged on disk. Taking it for a torn write
	// replayed record 2 over it, and the session went back one commit.
	t.Run("applied_then_damaged", func(t *testing.T) {
		dir := t.TempDir()
		seed(t, dir)
		// No room in the log file: every record is a record file.
		s := mustOpen(t, dir, withCheckpointThresholds(100, 1<<30), withLogLimit(logFrames))
		if err := s.Commit(context.Background(), secondCommit...); err != nil {
			t.Fatal(err)
		}
		if err := commitApplied(s, store.Put("state.json", []byte("newest"))); err != nil {
			t.Fatal(err)
		}
		s.abandon() // a crash: no checkpoint, records 2 and 3 stay in the log
		rec3 := filepath.Join(dir, walName, recordName(3))
		b, err := os.ReadFile(rec3)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-crcSize-1] ^= 1 // a flipped bit in the last value byte
		writeLog(t, dir, recordName(3), b)
		want := rawTree(t, dir)
		if _, err := Open(dir); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), recordName(3)) {
			t.Fatalf("Open error = %v, want ErrCorrupt naming %s", err, recordName(3))
		}
		if diff := cmp.Diff(want, rawTree(t, dir)); diff != "" {
			t.Errorf("Open changed the folder (-want +got):\n%s", diff)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "state.json")); string(got) != "newest" {
			t.Errorf("state.json = %q, want the newest value kept", got)
		}
	})

	t.Run("cut_short_record_is_a_temporary_file", func(t *testing.T) {
		dir := t.TempDir()
		seed(t, dir)
		writeLog(t, dir, recordName(2)+tempSuffix, full[:len(full)/2])
		if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
			t.Errorf("after discarding a record cut short (-want +got):\n%s", diff)
		}
		if recs := records(t, dir); len(recs) != 0 {
			t.Errorf("log = %q, want the temporary record discarded", logFiles(t, dir))
		}
	})
}

// TestDamagedLogRefusesToOpen checks that a log Open cannot trust fails
// with ErrCorrupt and leaves every file as it was.
func TestDamagedLogRefusesToOpen(t *testing.T) {
	good := func(seq uint64, ops ...store.Op) []byte { return encodeRecord(seq, changesOf(ops...)) }
	rec2 := good(2, secondCommit...)
	torn2 := slices.Clone(rec2)
	torn2[len(torn2)/2] ^= 1
	rec3 := good(3, store.Put("state.json", []byte("newer")))
	badKind := good(2, store.Delete("a"))
	badKind[recordHeader] = 7
	badKind = withSum(badKind)
	tests := []struct {
		name  string
		files map[string][]byte // in the log folder
		want  string
	}{
		{"damaged record before a complete one", map[string][]byte{recordName(2): torn2, recordName(3): rec3}, recordName(2)},
		{"missing record", map[string][]byte{recordName(2): rec2, recordName(4): good(4, store.Delete("a"))}, "is missing"},
		{"log starts after a gap", map[string][]byte{recordName(3): rec3}, "is missing"},
		{"record number mismatch", map[string][]byte{recordName(2): good(5, store.Delete("a"))}, "holds record 5"},
		{"escaping key", map[string][]byte{recordName(2): good(2, store.Put("../../etc/passwd", []byte("x")))}, "invalid store key"},
		{"absolute key", map[string][]byte{recordName(2): good(2, store.Delete("/etc/passwd"))}, "invalid store key"},
		{"reserved key", map[string][]byte{recordName(2): good(2, store.Put(".refine.lock", []byte("x")))}, "reserved"},
		{"unknown op kind", map[string][]byte{recordName(2): badKind}, "unknown kind 7"},
		{"duplicate key", map[string][]byte{recordName(2): encodeRecord(2, []change{{key: "a", del: true}, {key: "a", del: true}})}, "appears twice"},
		{"newer format", map[string][]byte{recordName(2): append([]byte("REFWAL2\n"), rec2[8:]...)}, "newer refine"},
		{"damaged marker", map[string][]byte{markerName: []byte("REFCKP1\n\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}, "checksum"},
		{"marker cut short", map[string][]byte{markerName: encodeMarker(1)[:10]}, "checkpoint marker"},
	}
	for _, tc := range tests {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			seed(t, dir)
			for name, data := range tc.files {
				writeLog(t, dir, name, data)
			}
			writeLog(t, dir, "00000000000000000009-0.tmp", []byte("stray"))
			want := rawTree(t, dir)
			s, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded with a damaged log")
			}
			if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open error = %v, want ErrCorrupt saying %q", err, tc.want)
			}
			if diff := cmp.Diff(want, rawTree(t, dir)); diff != "" {
				t.Errorf("a damaged log changed the folder (-want +got):\n%s", diff)
			}
			// The lock was released: the error is the same the second time.
			if _, err2 := Open(dir); !errors.Is(err2, store.ErrCorrupt) {
				t.Errorf("second Open error = %v, want ErrCorrupt again", err2)
			}
		})
	}
	t.Run("links", func(t *testing.T) {
		for _, name := range []string{markerName, recordName(2)} {
			dir := t.TempDir()
			seed(t, dir)
			target := filepath.Join(dir, "state.json")
			os.Remove(filepath.Join(dir, walName, name))
			if err := os.Symlink(target, filepath.Join(dir, walName, name)); err != nil {
				t.Fatal(err)
			}
			want := rawTree(t, dir)
			if _, err := Open(dir); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Open with %s a link: error = %v, want ErrCorrupt", name, err)
			}
			if diff := cmp.Diff(want, rawTree(t, dir)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}
	})
	t.Run("legacy_record", func(t *testing.T) {
		dir := t.TempDir()
		seed(t, dir)
		if err := os.WriteFile(filepath.Join(dir, legacyRecord), []byte(`{"version": 1}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "earlier refine") {
			t.Errorf("Open with a legacy commit record: error = %v, want ErrCorrupt naming it", err)
		}
	})
}

// TestRecoveryIsIdempotent crashes recovery itself, at several points,
// then lets it finish: the result is the same as one clean replay, and a
// second recovery changes nothing.
func TestRecoveryIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	// Record 2 turns the folder "doomed" into a key, record 3 turns it back
	// into a folder: replaying record 2 on its own over the files record 3
	// left would fail, so recovery must replay their folded effect. The
	// crash comes after record 2 is applied, before record 3 is.
	applying := 0
	s := mustOpen(t, dir, withHook(func(p string) error {
		if p == "applying" {
			if applying++; applying == 2 {
				return errCrash
			}
		}
		return nil
	}))
	commit2 := slices.Concat(secondCommit, []store.Op{store.Put("doomed", []byte("new"))})
	if err := s.Commit(context.Background(), commit2...); err != nil {
		t.Fatal(err)
	}
	commit3 := []store.Op{store.Delete("doomed"), store.Put("doomed/again.md", []byte("newer"))}
	if err := commitApplied(s, commit3...); !errors.Is(err, errCrash) {
		t.Fatalf("Commit error = %v, want the simulated crash", err)
	}
	s.abandon()
	// A power loss took state.json's applied, unsynced value back.
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"state.json": "new", "round_001/engineer.md": "new", "round_002/summary.md": "new", "doomed/again.md": "newer"}

	// Puts are placed in key order: doomed/again.md first, state.json
	// last; the keys the files already hold are not rewritten. The third
	// recovery is due for a checkpoint (a threshold of 2 records) and
	// crashes after its fsyncs, before the marker.
	for _, point := range []string{"put doomed/again.md", "put state.json", "synced"} {
		if _, err := Open(dir, crashAt(point), withCheckpointThresholds(2, 1<<30)); !errors.Is(err, errCrash) {
			t.Fatalf("Open crashing at %q: error = %v", point, err)
		}
		if recs := records(t, dir); !slices.Equal(recs, []string{recordName(2), recordName(3)}) {
			t.Fatalf("log after recovery crashed at %q = %q, want records 2 and 3 kept", point, recs)
		}
	}
	if diff := cmp.Diff(want, snapshot(t, dir)); diff != "" {
		t.Errorf("after recovery crashed three times and ran again (-want +got):\n%s", diff)
	}
	tree := rawTree(t, dir)
	if diff := cmp.Diff(want, snapshot(t, dir)); diff != "" {
		t.Errorf("after a second recovery (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tree, rawTree(t, dir)); diff != "" {
		t.Errorf("a second recovery changed the folder (-want +got):\n%s", diff)
	}
}

// TestRecoveryRestoresUnsyncedFiles simulates what a power loss can do to
// files applied but not yet checkpointed (a value torn or emptied, a
// rename or an unlink lost) while their record is still in the log:
// recovery rewrites them from the record.
func TestRecoveryRestoresUnsyncedFiles(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	s := mustOpen(t, dir)
	if err := commitApplied(s, secondCommit...); err != nil {
		t.Fatal(err)
	}
	s.abandon() // a power loss does not checkpoint either
	if recs := records(t, dir); !slices.Equal(recs, []string{recordName(2)}) {
		t.Fatalf("log = %q, want record 2 awaiting its checkpoint", recs)
	}
	path := func(key string) string { return filepath.Join(dir, filepath.FromSlash(key)) }
	if err := os.Truncate(path("state.json"), 1); err != nil { // torn
		t.Fatal(err)
	}
	if err := os.WriteFile(path("round_001/engineer.md"), []byte("old"), 0o600); err != nil { // rename lost
		t.Fatal(err)
	}
	if err := os.RemoveAll(path("round_002")); err != nil { // new file and folder lost
		t.Fatal(err)
	}
	if err := os.MkdirAll(path("doomed"), 0o700); err != nil { // unlink lost
		t.Fatal(err)
	}
	if err := os.WriteFile(path("doomed/only.md"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(after, snapshot(t, dir)); diff != "" {
		t.Errorf("after recovery (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(path("doomed")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the resurrected folder of a deleted key was not pruned: %v", err)
	}
}

// TestStaleRecordsAreNotReplayed brings back a record that a checkpoint
// deleted, as a power loss can undo an unsynced deletion: the marker says
// it is already reflected, so it must not roll its key back.
func TestStaleRecordsAreNotReplayed(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	s := mustOpen(t, dir, withLogLimit(logFrames)) // record files only
	if err := s.Commit(context.Background(), store.Put("state.json", []byte("v2"))); err != nil {
		t.Fatal(err)
	}
	stale, err := os.ReadFile(filepath.Join(dir, walName, recordName(2)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(context.Background(), store.Put("state.json", []byte("v3"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	writeLog(t, dir, recordName(2), stale)
	want := map[string]string{"state.json": "v3", "round_001/engineer.md": "old", "doomed/only.md": "old"}
	if diff := cmp.Diff(want, snapshot(t, dir)); diff != "" {
		t.Errorf("after a checkpointed record came back (-want +got):\n%s", diff)
	}
}

// TestCheckpointThresholds checks that the log is checkpointed when it
// reaches its record or byte threshold, and not before.
func TestCheckpointThresholds(t *testing.T) {
	ctx := context.Background()
	t.Run("records", func(t *testing.T) {
		dir := t.TempDir()
		s := mustOpen(t, dir, withCheckpointThresholds(4, 1<<30))
		defer s.Close()
		for i := 1; i <= 5; i++ {
			ops := []store.Op{store.Put("state.json", []byte(fmt.Sprint(i))), store.Put(fmt.Sprintf("attempts/%d.md", i), []byte("a"))}
			if err := commitApplied(s, ops...); err != nil {
				t.Fatal(err)
			}
			var want []string
			switch i {
			case 1, 2, 3:
				for j := 1; j <= i; j++ {
					want = append(want, recordName(uint64(j)))
				}
				// The files to fsync: state.json once, however often it was put.
				if got := len(s.wal.files); got != i+1 {
					t.Errorf("after commit %d: %d files to fsync at the checkpoint, want %d", i, got, i+1)
				}
			case 4:
				// The fourth record reached the threshold.
			case 5:
				want = []string{recordName(5)}
			}
			if got := records(t, dir); !slices.Equal(got, want) {
				t.Errorf("after commit %d: log holds %q, want %q", i, got, want)
			}
		}
		if m := markerOf(t, dir); m != 4 {
			t.Errorf("marker = %d, want 4", m)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		dir := t.TempDir()
		s := mustOpen(t, dir, withCheckpointThresholds(1000, 10_000))
		defer s.Close()
		v := make([]byte, 4000)
		for i := 1; i <= 3; i++ {
			if err := commitApplied(s, store.Put("big.bin", v)); err != nil {
				t.Fatal(err)
			}
			want := i // records so far, until 3 × 4 KB passes 10 000 bytes
			if i == 3 {
				want = 0
			}
			if got := len(records(t, dir)); got != want {
				t.Errorf("after commit %d: %d records, want %d", i, got, want)
			}
		}
	})
	t.Run("on_close", func(t *testing.T) {
		// Close applies every commit and leaves the records in the log;
		// the next Open finds the files holding them, rewrites nothing
		// and makes no sync call: the records wait for the checkpoint the
		// thresholds call for.
		dir := t.TempDir()
		s := mustOpen(t, dir, withIdleDelay(-1))
		for i := 1; i <= 3; i++ {
			if err := s.Commit(ctx, store.Put("state.json", []byte(fmt.Sprint(i)))); err != nil {
				t.Fatal(err)
			}
		}
		if got := len(records(t, dir)); got != 3 {
			t.Fatalf("before Close: %d records, want 3 (the default threshold is %d)", got, defaultMaxRecords)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{"state.json": "3"}, rawFiles(t, dir)); diff != "" {
			t.Errorf("files after Close (-want +got):\n%s", diff)
		}
		if recs := records(t, dir); len(recs) != 3 {
			t.Errorf("after Close the log holds %q, want the 3 commits for the next Open", recs)
		}
		if m := markerOf(t, dir); m != 0 {
			t.Errorf("marker after Close = %d, want 0 (no checkpoint)", m)
		}
		var replayed []string
		var syncs SyncCounts
		s = mustOpen(t, dir, WithSyncCounter(&syncs), withHook(func(p string) error {
			if strings.HasPrefix(p, "put ") {
				replayed = append(replayed, p)
			}
			return nil
		}))
		defer s.Close()
		s.testHook = nil
		if len(replayed) != 0 {
			t.Errorf("Open after Close rewrote %q, which the files already held", replayed)
		}
		if got := syncs.Counts(); len(got) != 0 {
			t.Errorf("Open after Close made sync calls %v, want none", got)
		}
		if recs, m := records(t, dir), markerOf(t, dir); len(recs) != 3 || m != 0 {
			t.Errorf("after the next Open the log holds %q, marker %d; want the 3 records, marker 0", recs, m)
		}
		if got := readKeys(t, s); !cmp.Equal(got, map[string]string{"state.json": "3"}) {
			t.Errorf("after reopening: %v", got)
		}
		// Numbering continues after the last record, in the same log.
		if err := s.Commit(ctx, store.Put("state.json", []byte("4"))); err != nil {
			t.Fatal(err)
		}
		if got := records(t, dir); !slices.Equal(got, []string{recordName(1), recordName(2), recordName(3), recordName(4)}) {
			t.Errorf("after the next commit the log holds %q, want records 1 to 4", got)
		}
	})
}

// TestGetDuringApply checks that a reader never sees a commit half
// applied: while puts are renamed into place readers are held off, and
// once they get in they see the whole commit, before any checkpoint.
func TestGetDuringApply(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, dir)
	defer s.Close()
	if err := commitApplied(s, store.Put("a", []byte("1")), store.Put("b", []byte("1"))); err != nil {
		t.Fatal(err)
	}
	type result struct {
		a, b string
		err  error
	}
	results := make(chan result, 1)
	s.testHook = func(p string) error {
		if p != "put b" {
			return nil
		}
		// "a" is in place and "b" is not: a reader now would see a mix.
		if s.mu.TryRLock() {
			s.mu.RUnlock()
			return errors.New("a reader could get in while the commit was half applied")
		}
		go func() {
			a, err := s.Get(ctx, "a")
			if err != nil {
				results <- result{err: err}
				return
			}
			b, err := s.Get(ctx, "b")
			results <- result{string(a), string(b), err}
		}()
		return nil
	}
	if err := commitApplied(s, store.Put("a", []byte("2")), store.Put("b", []byte("2"))); err != nil {
		t.Fatal(err)
	}
	s.testHook = nil
	if r := <-results; r.err != nil || r.a != "2" || r.b != "2" {
		t.Errorf("Get started during the apply = %q, %q, %v; want both keys from the commit", r.a, r.b, r.err)
	}
	// Applied, not checkpointed: the values come from the unsynced files.
	if recs := records(t, dir); !slices.Equal(recs, []string{recordName(1), recordName(2)}) {
		t.Errorf("log = %q, want both records awaiting a checkpoint", recs)
	}
	if got := readKeys(t, s); !cmp.Equal(got, map[string]string{"a": "2", "b": "2"}) {
		t.Errorf("Get after the commit = %v", got)
	}
}

// TestCancelBeforeCommitPoint cancels the context at the last moment a
// commit can back out: nothing is applied, nothing is left in the log,
// and the next commit takes the same sequence number.
func TestCancelBeforeCommitPoint(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	s := mustOpen(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	s.testHook = func(point string) error {
		if point == "logged" {
			cancel()
		}
		return nil
	}
	if err := s.Commit(ctx, secondCommit...); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit error = %v, want context.Canceled", err)
	}
	if got := logFiles(t, dir); !slices.Equal(got, []string{logName}) {
		t.Errorf("a cancelled commit left %q in the log folder", got)
	}
	if recs := records(t, dir); len(recs) != 0 {
		t.Errorf("a cancelled commit left %q in the log", recs)
	}
	s.testHook = nil
	if err := s.Commit(context.Background(), store.Put("after.md", []byte("ok"))); err != nil {
		t.Fatalf("Commit after a cancelled one: %v", err)
	}
	if got := records(t, dir); !slices.Equal(got, []string{recordName(2)}) {
		t.Errorf("log = %q, want the next commit as record 2", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"after.md": "ok"}
	for k, v := range before {
		want[k] = v
	}
	if diff := cmp.Diff(want, snapshot(t, dir)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNoSyncKeepsTheLog checks that NoSync skips fsyncs, not the log: a
// killed process's commits are still replayed.
func TestNoSyncKeepsTheLog(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	s := mustOpen(t, dir, NoSync(), crashAt("put round_002/summary.md"))
	if err := commitApplied(s, secondCommit...); !errors.Is(err, errCrash) {
		t.Fatalf("Commit error = %v, want the simulated crash", err)
	}
	s.abandon()
	if diff := cmp.Diff(after, snapshot(t, dir)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	changes := []change{
		{key: "a", del: true},
		{key: "empty.md", value: []byte{}},
		{key: "round_003/engineer.md", value: []byte("# Engineer\n")},
		{key: "state.json", value: make([]byte, 70_000)},
	}
	b := encodeRecord(42, changes)
	seq, got, err := decodeRecord(b)
	if err != nil || seq != 42 {
		t.Fatalf("decodeRecord = %d, %v", seq, err)
	}
	if diff := cmp.Diff(changes, got, cmp.AllowUnexported(change{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// Every proper prefix of a record is torn, never a shorter record.
	for n := range len(b) {
		if _, _, err := decodeRecord(b[:n]); !errors.Is(err, errTorn) {
			t.Fatalf("decodeRecord(first %d of %d bytes) error = %v, want errTorn", n, len(b), err)
		}
	}
	if name := recordName(42); name != "00000000000000000042.rec" {
		t.Errorf("recordName(42) = %q", name)
	}
	for name, want := range map[string]uint64{
		"00000000000000000042.rec": 42, "00000000000000000000.rec": 0, "42.rec": 0,
		"0000000000000000004x.rec": 0, "00000000000000000042.rec.tmp": 0, "99999999999999999999.rec": 0,
	} {
		if got, ok := parseRecordName(name); got != want || ok != (want != 0) {
			t.Errorf("parseRecordName(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
}

// FuzzDecodeRecord: no input makes decodeRecord panic or allocate more
// than in proportion to its size, and whatever it accepts is exactly what
// encodeRecord writes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(1, changesOf(secondCommit...)))
	f.Add(encodeRecord(7, nil))
	f.Add(encodeRecord(3, []change{{key: "a", del: true}, {key: "b", value: []byte{}}}))
	f.Add([]byte(recordMagic))
	f.Add(withSum(append([]byte(recordMagic+"\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff"), 0, 0, 0, 0)))
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, changes, err := decodeRecord(data)
		if err != nil {
			return
		}
		for _, c := range changes {
			if store.ValidKey(c.key) != nil {
				t.Fatalf("accepted invalid key %q", c.key)
			}
		}
		if again := encodeRecord(seq, changes); string(again) != string(data) {
			t.Fatalf("accepted a record that encodes differently:\n%x\n%x", data, again)
		}
	})
}

func FuzzDecodeMarker(f *testing.F) {
	f.Add(encodeMarker(5))
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, err := decodeMarker(data)
		if err == nil && string(encodeMarker(seq)) != string(data) {
			t.Fatalf("accepted a marker that encodes differently: %x", data)
		}
	})
}

// TestReplayedRecordsStayUntilCheckpoint: Open replays what the files do
// not hold, makes no sync call, and keeps the records in the log, so
// that whatever a power loss takes from the files it rewrote (unsynced)
// the next Open rewrites again, however many Opens come before the
// checkpoint the thresholds call for.
func TestReplayedRecordsStayUntilCheckpoint(t *testing.T) {
	dir := t.TempDir()
	loggedTwice(t, dir) // records 2 and 3, after marker 1
	lose := func(files map[string]string) {
		t.Helper()
		for k, v := range files {
			p := filepath.Join(dir, filepath.FromSlash(k))
			var err error
			if v == "" {
				err = os.Remove(p)
			} else {
				err = os.WriteFile(p, []byte(v), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// A power loss tore one value the applier wrote and lost another's
	// rename.
	lose(map[string]string{"state.json": "to", "round_002/reviewer.md": ""})
	for i, loss := range []map[string]string{
		{"round_001/engineer.md": "old"}, // the first replay's rewrite, lost
		{"state.json": ""},               // the second's
		nil,
	} {
		var syncs SyncCounts
		s := mustOpen(t, dir, WithSyncCounter(&syncs))
		if got := readKeys(t, s); !cmp.Equal(got, afterThird) {
			t.Errorf("Open %d: %v, want %v", i+1, got, afterThird)
		}
		if diff := cmp.Diff(afterThird, rawFiles(t, dir)); diff != "" {
			t.Errorf("Open %d: the files (-want +got):\n%s", i+1, diff)
		}
		if got := syncs.Counts(); len(got) != 0 {
			t.Errorf("Open %d: sync calls %v, want none", i+1, got)
		}
		s.abandon() // a crash: the records must still be there
		if recs, m := records(t, dir), markerOf(t, dir); !slices.Equal(recs, []string{recordName(2), recordName(3)}) || m != 1 {
			t.Fatalf("after Open %d: log %q, marker %d; want records 2 and 3, marker 1", i+1, recs, m)
		}
		lose(loss)
	}
	// The checkpoint, once due, makes them durable and lets them go.
	var syncs SyncCounts
	s := mustOpen(t, dir, withCheckpointThresholds(2, 1<<30), WithSyncCounter(&syncs))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if recs, m := records(t, dir), markerOf(t, dir); len(recs) != 0 || m != 3 {
		t.Errorf("after the checkpoint: log %q, marker %d; want none, 3", recs, m)
	}
	if got := syncs.Counts()["checkpoint"]; got == 0 {
		t.Error("the checkpoint made no sync call")
	}
	if diff := cmp.Diff(afterThird, rawFiles(t, dir)); diff != "" {
		t.Errorf("after the checkpoint, the files (-want +got):\n%s", diff)
	}
}
