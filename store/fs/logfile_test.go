package fs

import (
	"context"
	"encoding/binary"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
)

// thirdCommit follows secondCommit in the log tests.
var (
	thirdCommit = []store.Op{store.Put("state.json", []byte("newest")), store.Put("round_002/reviewer.md", []byte("newest"))}
	afterThird  = map[string]string{
		"state.json":            "newest",
		"round_001/engineer.md": "new",
		"round_002/summary.md":  "new",
		"round_002/reviewer.md": "newest",
	}
)

// loggedTwice leaves dir as a crash would after commits 2 and 3 were
// logged and applied but not checkpointed: both are frames of the log
// file, after the marker (1).
func loggedTwice(t *testing.T, dir string) {
	t.Helper()
	seed(t, dir)
	s := mustOpen(t, dir)
	if err := s.Commit(context.Background(), secondCommit...); err != nil {
		t.Fatal(err)
	}
	if err := commitApplied(s, thirdCommit...); err != nil {
		t.Fatal(err)
	}
	s.abandon()
	if recs := records(t, dir); !slices.Equal(recs, []string{recordName(2), recordName(3)}) || !slices.Equal(logNames(t, dir), []string{logName}) {
		t.Fatalf("log = %q, files %q; want records 2 and 3 in the log file", recs, logFiles(t, dir))
	}
}

// logNames lists the log folder's entries but temporary files.
func logNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	for _, name := range logFiles(t, dir) {
		if !strings.HasSuffix(name, tempSuffix) {
			names = append(names, name)
		}
	}
	return names
}

// patchLog writes data at off in dir's log file.
func patchLog(t *testing.T, dir string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, walName, logName), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
}

func readLog(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, walName, logName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLogFileTornTail puts after the log's last whole frame what a crash
// during the next commit's append can leave there: that commit never
// returned, so Open discards it and keeps the commits before it.
func TestLogFileTornTail(t *testing.T) {
	next := encodeRecord(4, changesOf(store.Put("state.json", []byte("never"))))
	tests := map[string]func(salt uint32) []byte{
		"header only":       func(salt uint32) []byte { return encodeFrame(salt, next)[:frameHeader] },
		"half a frame":      func(salt uint32) []byte { f := encodeFrame(salt, next); return f[:len(f)/2] },
		"all but last byte": func(salt uint32) []byte { f := encodeFrame(salt, next); return f[:len(f)-1] },
		"flipped bit": func(salt uint32) []byte {
			f := encodeFrame(salt, next)
			f[len(f)-3] ^= 0x10
			return f
		},
		"length past the end": func(salt uint32) []byte { return binary.LittleEndian.AppendUint32(nil, 1<<30) },
		"record without its header": func(salt uint32) []byte {
			return append(make([]byte, frameHeader), encodeFrame(salt, next)[frameHeader:]...)
		},
	}
	for name, tail := range tests {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			loggedTwice(t, dir)
			scan := scanned(t, dir)
			patchLog(t, dir, scan.log.end, tail(scan.log.hdr.salt))
			if got := records(t, dir); !slices.Equal(got, []string{recordName(2), recordName(3)}) {
				t.Errorf("records with a torn tail = %q, want 2 and 3", got)
			}
			if diff := cmp.Diff(afterThird, snapshot(t, dir)); diff != "" {
				t.Errorf("after reopening (-want +got):\n%s", diff)
			}
			// The torn frame is gone for good: the next commit takes its
			// place, and a later Open sees that one.
			s := mustOpen(t, dir)
			if err := s.Commit(context.Background(), store.Put("state.json", []byte("4"))); err != nil {
				t.Fatal(err)
			}
			s.abandon()
			want := maps(afterThird, map[string]string{"state.json": "4"})
			if diff := cmp.Diff(want, snapshot(t, dir)); diff != "" {
				t.Errorf("after the next commit (-want +got):\n%s", diff)
			}
		})
	}
}

func maps(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestLogFileDamageRefused damages a frame that a whole frame with a
// later record follows: a crash cannot do that (it only cuts the last
// append short), so it is damage, and the files may already hold the
// damaged record's commit. Open refuses, naming the log file and the
// offset, and changes nothing.
func TestLogFileDamageRefused(t *testing.T) {
	tests := map[string]func(b []byte){
		"flipped bit":   func(b []byte) { b[logFrames+frameHeader+recordHeader+2] ^= 1 },
		"zeroed header": func(b []byte) { clear(b[logFrames : logFrames+frameHeader]) },
		"zeroed block":  func(b []byte) { clear(b[logFrames : logFrames+logBlock]) },
		"length changed": func(b []byte) {
			binary.LittleEndian.PutUint32(b[logFrames:], binary.LittleEndian.Uint32(b[logFrames:])+1)
		},
	}
	for name, damage := range tests {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			loggedTwice(t, dir)
			b := readLog(t, dir)
			damage(b)
			patchLog(t, dir, 0, b)
			want := rawTree(t, dir)
			_, err := Open(dir)
			if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Join(walName, logName)) || !strings.Contains(err.Error(), "offset 8192") {
				t.Errorf("Open error = %v, want ErrCorrupt naming the log file and offset 8192", err)
			}
			if diff := cmp.Diff(want, rawTree(t, dir)); diff != "" {
				t.Errorf("Open changed the folder (-want +got):\n%s", diff)
			}
		})
	}
	// Damage to frames the marker covers loses nothing: Open goes on.
	t.Run("checkpointed", func(t *testing.T) {
		dir := t.TempDir()
		seed(t, dir)
		s := mustOpen(t, dir)
		if err := commitApplied(s, secondCommit...); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		b := readLog(t, dir)
		b[logFrames+frameHeader+recordHeader+2] ^= 1
		patchLog(t, dir, 0, b)
		if diff := cmp.Diff(after, snapshot(t, dir)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestLogFileHeader damages the log file's header. A torn header write is
// a checkpoint that did not happen, and Open takes the other copy; but a
// damaged header whose generation has frames, or two damaged copies,
// leave unknown which commits the files hold, and Open refuses.
func TestLogFileHeader(t *testing.T) {
	slotOf := func(t *testing.T, dir string) int64 { return int64(scanned(t, dir).log.hdr.gen % 2) }
	t.Run("torn_checkpoint", func(t *testing.T) {
		// A checkpoint covering records 2 and 3 whose header write tore
		// (the crash came before its fdatasync returned, so nothing was
		// written after it): the previous header says records 2 and 3 are
		// to replay.
		dir := t.TempDir()
		loggedTwice(t, dir)
		old := scanned(t, dir).log.hdr
		torn := encodeSlot(logHeader{gen: old.gen + 1, salt: old.salt, marker: 3, start: 4})[:20]
		patchLog(t, dir, int64((old.gen+1)%2)*logBlock, torn)
		if got := scanned(t, dir); got.log.hdr != old || len(got.records) != 2 {
			t.Errorf("after a torn header write: header %+v and %d records, want %+v and 2", got.log.hdr, len(got.records), old)
		}
		if diff := cmp.Diff(afterThird, snapshot(t, dir)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("damaged_with_frames", func(t *testing.T) {
		// The header that started this generation is damaged: the other
		// copy is older, and records 2 and 3 do not follow its marker.
		dir := t.TempDir()
		seed(t, dir)
		s := mustOpen(t, dir, withCheckpointThresholds(1, 1<<30))
		if err := commitApplied(s, secondCommit...); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil { // marker 2, a new generation
			t.Fatal(err)
		}
		s = mustOpen(t, dir) // nothing to do: the generation is empty
		if err := commitApplied(s, thirdCommit...); err != nil {
			t.Fatal(err)
		}
		s.abandon()
		if recs := records(t, dir); !slices.Equal(recs, []string{recordName(3)}) {
			t.Fatalf("records = %q, want 3", recs)
		}
		patchLog(t, dir, slotOf(t, dir)*logBlock+10, []byte{0xff})
		want := rawTree(t, dir)
		if _, err := Open(dir); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("Open error = %v, want ErrCorrupt", err)
		}
		if diff := cmp.Diff(want, rawTree(t, dir)); diff != "" {
			t.Errorf("Open changed the folder (-want +got):\n%s", diff)
		}
	})
	t.Run("both_damaged", func(t *testing.T) {
		dir := t.TempDir()
		loggedTwice(t, dir)
		patchLog(t, dir, 10, []byte{0xff})
		patchLog(t, dir, logBlock+10, []byte{0xff})
		if _, err := Open(dir); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "both copies of its header") {
			t.Errorf("Open error = %v, want ErrCorrupt about the header", err)
		}
	})
	t.Run("newer_format", func(t *testing.T) {
		dir := t.TempDir()
		loggedTwice(t, dir)
		patchLog(t, dir, slotOf(t, dir)*logBlock+magicFamily, []byte{'2'})
		if _, err := Open(dir); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "newer refine") {
			t.Errorf("Open error = %v, want ErrCorrupt naming a newer refine", err)
		}
	})
}

// TestRecordFileLayout opens a session folder that refine wrote before
// the log file (commit cbd45c1): a checkpoint marker file, records 2 and
// 3 as record files, record 3 not yet applied and spares left by the
// crash. Open replays both, moves the marker into the log file's header
// and removes the old files.
func TestRecordFileLayout(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "v1-record-files")
	err := filepath.WalkDir(src, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	if recs := records(t, dir); !slices.Equal(recs, []string{recordName(2), recordName(3)}) {
		t.Fatalf("records in the old layout = %q, want 2 and 3", recs)
	}
	if diff := cmp.Diff(afterThird, snapshot(t, dir)); diff != "" {
		t.Errorf("after opening (-want +got):\n%s", diff)
	}
	// The marker file's marker is in the log file's header now; records 2
	// and 3, replayed, stay as they are until a checkpoint.
	if m := markerOf(t, dir); m != 1 {
		t.Errorf("marker = %d, want 1", m)
	}
	if got := logNames(t, dir); !slices.Equal(got, []string{recordName(2), recordName(3), logName}) {
		t.Errorf("log folder = %q, want records 2 and 3 and the log file", got)
	}
	// Numbering goes on from the old log's.
	s := mustOpen(t, dir)
	if err := s.Commit(context.Background(), store.Put("state.json", []byte("4"))); err != nil {
		t.Fatal(err)
	}
	s.abandon()
	if recs := records(t, dir); !slices.Equal(recs, []string{recordName(2), recordName(3), recordName(4)}) {
		t.Errorf("records = %q, want 2 to 4", recs)
	}
	// A checkpoint covers them and deletes the record files.
	if err := mustOpen(t, dir, withCheckpointThresholds(1, 1<<30)).Close(); err != nil {
		t.Fatal(err)
	}
	if recs, m := records(t, dir), markerOf(t, dir); len(recs) != 0 || m != 4 {
		t.Errorf("after a checkpoint: records %q, marker %d; want none and 4", recs, m)
	}
	if got := logNames(t, dir); !slices.Equal(got, []string{logName}) {
		t.Errorf("log folder after a checkpoint = %q, want only the log file", got)
	}
}

// TestRecordTooBigForTheLogFile: a record that would take the log file
// past its limit is a record file; the records after it go on in the log
// file, and Open replays them all in order.
func TestRecordTooBigForTheLogFile(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	s := mustOpen(t, dir, withLogLimit(64<<10))
	ctx := context.Background()
	big := make([]byte, 100<<10)
	for _, ops := range [][]store.Op{
		{store.Put("state.json", []byte("2"))},
		{store.Put("state.json", big)},
		{store.Put("state.json", []byte("4")), store.Put("big.md", big)},
	} {
		if err := s.Commit(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	if err := commitApplied(s, store.Delete("big.md")); err != nil {
		t.Fatal(err)
	}
	s.abandon()
	if got := logNames(t, dir); !slices.Equal(got, []string{recordName(3), recordName(4), logName}) {
		t.Errorf("log folder = %q, want records 3 and 4 as files", got)
	}
	if recs := records(t, dir); !slices.Equal(recs, []string{recordName(2), recordName(3), recordName(4), recordName(5)}) {
		t.Errorf("records = %q, want 2 to 5", recs)
	}
	want := maps(before, map[string]string{"state.json": "4"})
	if diff := cmp.Diff(want, snapshot(t, dir)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := mustOpen(t, dir, withCheckpointThresholds(1, 1<<30)).Close(); err != nil {
		t.Fatal(err)
	}
	if got := logNames(t, dir); !slices.Equal(got, []string{logName}) {
		t.Errorf("log folder after a checkpoint = %q, want the record files gone", got)
	}
}

// TestIdleDoesNotCheckpoint: once the applier has nothing to do it makes
// spares and grows the log file ahead of its frames (one fdatasync, once),
// and does not checkpoint: that would fsync files that a crash would
// only replay from the log. The records stay in the log, and the commits
// after the first find room in the file (their fdatasync changes no
// metadata).
func TestIdleDoesNotCheckpoint(t *testing.T) {
	dir := t.TempDir()
	idle := make(chan struct{}, 8)
	var syncs SyncCounts
	s := mustOpen(t, dir, withIdleDelay(0), WithSyncCounter(&syncs), withHook(func(p string) error {
		if p == "spares ready" {
			idle <- struct{}{}
		}
		return nil
	}))
	syncs.Reset() // Open's, creating the log
	ctx := context.Background()
	logSize := func() int64 {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, walName, logName))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	var grown int64
	for i := range 3 {
		if err := s.Commit(ctx, store.Put("state.json", []byte{'0' + byte(i)})); err != nil {
			t.Fatal(err)
		}
		<-idle
		switch size := logSize(); {
		case i == 0 && size < logFrames+logBlock+logReserve:
			t.Errorf("after the first commit went idle, the log file has %d bytes, want room for %d after its frame", size, logReserve)
		case i == 0:
			grown = size
		case size != grown:
			t.Errorf("after commit %d the log file has %d bytes, want %d: grown again", i+1, size, grown)
		}
		if got, want := syncs.Counts(), map[string]int{"commit": i + 1, "reserve": 1}; !cmp.Equal(got, want) {
			t.Errorf("after commit %d went idle, sync calls %v, want %v", i+1, got, want)
		}
		if recs, m := records(t, dir), markerOf(t, dir); len(recs) != i+1 || m != 0 {
			t.Errorf("after commit %d went idle, records %q and marker %d; want %d records, marker 0", i+1, recs, m, i+1)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := syncs.Counts(), map[string]int{"commit": 3, "reserve": 1}; !cmp.Equal(got, want) {
		t.Errorf("after Close, sync calls %v, want %v", got, want)
	}
	// Open finds the log's end before the zeros grown ahead.
	if recs := records(t, dir); len(recs) != 3 {
		t.Errorf("after Close the log holds %q, want 3 records", recs)
	}
}

// TestIdleDelayWaitsForQuiet checks that the idle timer is set again by
// each commit, so idle work (spares) does not run between commits that
// follow each other closely: with a delay far longer than the test, none
// runs.
func TestIdleDelayWaitsForQuiet(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, withIdleDelay(time.Hour), withHook(func(p string) error {
		if p == "idle" {
			t.Error("idle work before the delay")
		}
		return nil
	}))
	for i := range 3 {
		if err := commitApplied(s, store.Put("state.json", []byte{'0' + byte(i)})); err != nil {
			t.Fatal(err)
		}
	}
	if recs := records(t, dir); len(recs) != 3 {
		t.Errorf("records = %q, want all 3 before Close", recs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if recs := records(t, dir); len(recs) != 3 {
		t.Errorf("records after Close = %q, want all 3 (Close does not checkpoint)", recs)
	}
}

// FuzzParseLog: no log file makes parseLog panic, and every record it
// returns follows the header's start and the one before it.
func FuzzParseLog(f *testing.F) {
	dir := f.TempDir()
	s, err := Open(dir, withIdleDelay(-1))
	if err != nil {
		f.Fatal(err)
	}
	for _, ops := range [][]store.Op{secondCommit, thirdCommit} {
		if err := s.Commit(context.Background(), ops...); err != nil {
			f.Fatal(err)
		}
	}
	if err := s.flush(); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, walName, logName))
	if err != nil {
		f.Fatal(err)
	}
	s.Close()
	// Trimmed to the frames, so the fuzzer has fewer bytes to mutate.
	f.Add(b[:logFrames+2*logBlock])
	f.Add(b[:logFrames])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		l, frames, err := parseLog(data)
		if err != nil {
			return
		}
		prev := uint64(0)
		for _, r := range frames {
			if r.seq < l.hdr.start || r.seq <= prev {
				t.Fatalf("record %d after %d, start %d", r.seq, prev, l.hdr.start)
			}
			prev = r.seq
		}
	})
}

func FuzzDecodeSlot(f *testing.F) {
	f.Add(encodeSlot(logHeader{gen: 3, salt: 7, marker: 9, start: 10}))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := decodeSlot(data)
		if err == nil && string(encodeSlot(h)) != string(data[:slotSize]) {
			t.Fatalf("accepted a slot that encodes differently: %x", data)
		}
	})
}
