package fs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/refine-spec/refine/store"
)

// logScan is what Open found in the log folder. It is checked in full
// before recovery changes anything, so a damaged log leaves the folder as
// it was.
type logScan struct {
	marker    uint64         // every record up to here is reflected in the files
	records   []loggedRecord // complete records after the marker, in order
	stale     []string       // record files the marker covers, left by a crash
	temps     []string       // temporary files, left by a crash
	oldMarker bool           // the marker file of the record-file-only log is there
	log       *scannedLog    // the log file; nil if there is none
}

// scannedLog is the log file as the scan found it.
type scannedLog struct {
	hdr   logHeader // the header in force
	size  int64
	end   int64  // where the frames of the header's generation end
	last  uint64 // the last of those frames' records; 0 if none
	empty bool   // the generation has no frames, and its first is zeros
}

// loggedRecord is a complete record read back from the log.
type loggedRecord struct {
	seq     uint64
	size    int
	file    bool // a record file, not a frame of the log file
	changes []change
}

// recover brings the files up to the log after a crash: it replays every
// record after the marker, discards temporary files (a record file a
// crash cut short among them: its commit never happened) and whatever
// follows the log file's last whole frame, and checkpoints. It refuses,
// changing nothing, a log it cannot trust, a damaged record file or a
// damaged frame with a record Open needs after it included.
func (s *Store) recover() error {
	fail := func(err error) error { return fmt.Errorf("fs: open %s: %w", s.dir, err) }
	if err := s.checkLegacy(); err != nil {
		return fail(err)
	}
	if err := s.ensureLog(); err != nil {
		return fail(err)
	}
	// The log folder stays open as long as the Store: temporary files,
	// spares and record files are named relative to it.
	walDir, err := s.rootDir.openFolder(walName)
	if err != nil {
		return fail(fmt.Errorf("open the log folder: %w", err))
	}
	s.walDir = walDir
	scan, err := s.scanLog()
	if err != nil {
		return fail(err)
	}

	// The log is sound: from here on recovery may change the folder. If it
	// fails or crashes part way, the log is untouched until the checkpoint
	// and the next Open starts again.
	for _, t := range scan.temps {
		if err := s.root.Remove(t); err != nil && !isNotExist(err) {
			return fail(fmt.Errorf("discard temporary file: %w", err))
		}
	}
	if scan.log == nil {
		s.wlog, err = s.createLog(s.logSize, scan.marker)
	} else {
		s.wlog, err = s.openLog(scan.log.hdr, scan.log.end, scan.log.last)
	}
	if err != nil {
		return fail(err)
	}
	w := &s.wal
	w.last = scan.marker
	for _, r := range scan.records {
		w.applied(r.seq, r.size, r.file, r.changes) // by the replay below
	}
	s.nextSeq = w.last + 1
	var repairs []store.Repair
	if len(scan.records) > 0 {
		changes, err := s.unapplied(fold(scan.records))
		if err != nil {
			return fail(fmt.Errorf("replay the log: %w", err))
		}
		if s.closedCleanly && len(changes) > 0 {
			repairs = s.newRepairs(changes, time.Now()) // see repair.go
		}
		temps, err := s.stage(w.last, changes)
		if err == nil {
			err = s.apply(w.last, changes, temps) // nothing is in the overlay yet
			s.discard(temps)
		}
		if err != nil {
			return fail(fmt.Errorf("replay the log: %w", err))
		}
		s.dropSpares() // the old values replay displaced: leave a tidy log
		// The replayed records stay in the log, applied, for the
		// checkpoint that the thresholds call for: a checkpoint now would
		// fsync files that a crash would only replay again. The log
		// file's next frames follow its last whole one.
		switch {
		case w.due():
			if err := s.checkpoint(); err != nil {
				return fail(err)
			}
		case scan.oldMarker && s.wlog.hdr.marker < scan.marker:
			// The marker file is deleted below: its marker must be in the
			// header first.
			if err := s.wlog.mark(scan.marker, syncOpen); err != nil {
				return fail(err)
			}
		}
	} else if scan.log != nil && !scan.log.empty || scan.oldMarker {
		// Start the log file afresh (a new generation, so nothing a crash
		// left after its last frame can be taken for a frame later), with
		// the marker where an earlier refine's marker file may have been.
		if err := s.wlog.mark(w.last, syncOpen); err != nil {
			return fail(err)
		}
	}
	// The log file's header now holds the marker: the marker file and the
	// record files it covers are not needed any more.
	if scan.oldMarker {
		if err := s.root.Remove(walPath(markerName)); err != nil && !isNotExist(err) {
			s.log.Warn("fs: could not delete an earlier refine's checkpoint marker; it is ignored", "dir", s.dir, "err", err)
		}
	}
	for _, name := range scan.stale {
		if err := s.root.Remove(name); err != nil && !isNotExist(err) {
			s.log.Warn("fs: could not delete a checkpointed log record; it is ignored", "dir", s.dir, "record", name, "err", err)
		}
	}
	if err := s.removeAll(legacyStaging); err != nil {
		s.log.Warn("fs: could not remove an earlier refine's staging folder; it is ignored", "dir", s.dir, "err", err)
	}

	if len(repairs) > 0 {
		s.noteRepairs(repairs)
	}
	if n := len(scan.records); n > 0 {
		// A clean Close leaves its last commits to this checkpoint by
		// design: only after a crash is replaying them news.
		level, msg := slog.LevelDebug, "fs: applied the commits the last Close left in the log"
		if s.crashed {
			level, msg = slog.LevelInfo, "fs: recovered after a crash: replayed the commits the last writer had not applied"
		}
		s.log.Log(context.Background(), level, msg, "dir", s.dir, "records", n,
			"first", scan.records[0].seq, "last", scan.records[n-1].seq)
	}
	if len(scan.temps) > 0 {
		s.log.Info("fs: discarded temporary files a crash left", "dir", s.dir, "count", len(scan.temps))
	}
	return nil
}

// unapplied returns the changes, folded from the records to replay, that
// the files do not hold yet: a put whose key's file holds another value
// (or is missing, or is not a regular file), and a delete whose key is
// still there. After a clean Close the files hold them all (in the
// kernel's cache at least), so Open rewrites nothing; after a crash it
// rewrites what the crash left behind. Skipping a key changes nothing for
// durability: the records stay in the log until a checkpoint fsyncs every
// file and folder they touched, skipped or not.
func (s *Store) unapplied(changes []change) ([]change, error) {
	fs := s.folders()
	defer fs.close()
	var out []change
	for _, c := range changes {
		fi, blocker, err := fs.lstatKey(c.key)
		switch {
		case errors.Is(err, errLink):
			// A link on the way to the key: apply reports it, as ever.
			out = append(out, c)
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %w", c.key, err)
		case c.del:
			if fi != nil && !fi.IsDir() {
				out = append(out, c)
			}
			continue
		case blocker != "" || fi == nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(c.value)):
			out = append(out, c)
			continue
		}
		b, err := s.read(c.key)
		if err != nil || !bytes.Equal(b, c.value) {
			out = append(out, c) // rewritten; a real problem shows there
		}
	}
	return out, nil
}

// ensureLog makes sure the log folder exists, as a real folder.
func (s *Store) ensureLog() error {
	fi, err := s.root.Lstat(walName)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		// A file or link planted under the reserved name is never a log
		// this store wrote: remove it (the link itself, not its target).
		s.log.Warn("fs: removed a file that is not a log folder from the log's place", "dir", s.dir, "type", fi.Mode().Type().String())
		if err := s.root.Remove(walName); err != nil {
			return fmt.Errorf("remove %s, which is not a folder: %w", walName, err)
		}
	case !isNotExist(err):
		return err
	}
	if err := s.root.Mkdir(walName, 0o700); err != nil {
		return fmt.Errorf("create the log folder: %w", err)
	}
	// A record renamed into the log folder is only durable once the
	// folder's own entry is.
	return s.syncDir(".", syncOpen)
}

// scanLog reads and checks the whole log without changing anything: the
// log file, and the record files and marker file that an earlier refine
// wrote, or that a record too big for the log file went to.
func (s *Store) scanLog() (*logScan, error) {
	scan := &logScan{}
	walDir := filepath.Join(s.dir, walName)
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: log %s: %s; Open changed nothing: keep a copy of the session folder before repairing it by hand",
			store.ErrCorrupt, walDir, fmt.Sprintf(format, args...))
	}
	switch data, err := s.readLogFile(walPath(markerName)); {
	case isNotExist(err):
		// No marker file: none was ever written, or the log file's header
		// holds the marker.
	case err != nil:
		return nil, corrupt("checkpoint marker: %v", err)
	default:
		seq, err := decodeMarker(data)
		if err != nil {
			return nil, corrupt("checkpoint marker: %v", err)
		}
		scan.marker, scan.oldMarker = seq, true
	}

	entries, err := iofs.ReadDir(s.root.FS(), walName)
	if err != nil {
		return nil, err
	}
	var files []uint64
	hasLog := false
	for _, e := range entries {
		name := e.Name()
		seq, isRecord := parseRecordName(name)
		switch {
		case name == markerName:
		case name == logName:
			hasLog = true
		case strings.HasSuffix(name, tempSuffix) && !e.IsDir():
			scan.temps = append(scan.temps, walPath(name))
		case !isRecord:
			// Not a name the store writes: not ours to judge or remove.
		default:
			files = append(files, seq)
		}
	}

	var frames []loggedRecord
	if hasLog {
		l, fr, err := s.scanLogFile(corrupt)
		if err != nil {
			return nil, err
		}
		scan.log, frames = l, fr
		scan.marker = max(scan.marker, l.hdr.marker)
	}

	var all []loggedRecord
	for _, r := range frames {
		if r.seq > scan.marker {
			all = append(all, r)
		}
	}
	for _, seq := range files {
		name := recordName(seq)
		if seq <= scan.marker {
			scan.stale = append(scan.stale, walPath(name))
			continue
		}
		data, err := s.readLogFile(walPath(name))
		if err != nil {
			return nil, corrupt("%s: %v", name, err)
		}
		got, changes, err := decodeRecord(data)
		switch {
		case errors.Is(err, errTorn):
			// A record file is renamed to its name only once written in
			// full and fsynced, so no crash leaves one damaged; one that
			// is, was changed since. Taking it for a commit that never
			// happened would replay the older records over files that may
			// already hold its newer values.
			return nil, fmt.Errorf("%w: log %s: record %s is %v, yet records are only put in place once written in full: the disk or another program damaged it, and the files may hold that commit in whole or in part; Open changed nothing. Keep a copy of the session folder, then restore it from a backup, or delete the folder %s to accept the files as they are (the commits since the last checkpoint may then be partly lost)",
				store.ErrCorrupt, walDir, name, err, walDir)
		case err != nil:
			return nil, corrupt("%s: %v", name, err)
		case got != seq:
			return nil, corrupt("%s holds record %d", name, got)
		}
		all = append(all, loggedRecord{seq: seq, size: len(data), file: true, changes: changes})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	for i, r := range all {
		// A commit's record is durable before the next commit starts, and
		// only a checkpoint lets records go, all of them up to the marker:
		// so after the marker the log has no gaps.
		where := recordName(r.seq)
		if !r.file {
			where = fmt.Sprintf("record %d in the log file", r.seq)
		}
		switch want := scan.marker + 1 + uint64(i); {
		case r.seq < want:
			return nil, corrupt("record %d is both a record file and in the log file", r.seq)
		case r.seq > want:
			return nil, corrupt("record %s is missing before %s", recordName(want), where)
		}
	}
	scan.records = all
	return scan, nil
}

// scanLogFile reads and checks the log file (see parseLog).
func (s *Store) scanLogFile(corrupt func(string, ...any) error) (*scannedLog, []loggedRecord, error) {
	path := filepath.Join(s.dir, walName, logName)
	data, err := s.readLogFile(walPath(logName))
	if err != nil {
		return nil, nil, corrupt("log file: %v", err)
	}
	l, frames, err := parseLog(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: log file %s: %v; Open changed nothing. Keep a copy of the session folder, then restore it from a backup, or delete the folder %s to accept the files as they are (the commits since the last checkpoint may then be partly lost)",
			store.ErrCorrupt, path, err, filepath.Join(s.dir, walName))
	}
	return l, frames, nil
}

// parseLog reads a log file: its header, then its frames from the first
// on, until one is not whole. What follows the last whole frame is a
// frame a crash cut short (its commit never returned), zeros, or an
// earlier generation's frames, unless a whole frame of this generation
// holding a record after the marker comes later: then a frame before it
// was damaged, and its commit may be in the files already, so parseLog
// refuses the log. The records share data's memory.
func parseLog(data []byte) (*scannedLog, []loggedRecord, error) {
	if len(data) < logFrames {
		return nil, nil, fmt.Errorf("%d bytes, too short for its header", len(data))
	}
	var hdr logHeader
	found := false
	for slot := range 2 {
		h, err := decodeSlot(data[slot*logBlock:])
		switch {
		case errors.Is(err, errTorn):
			// A header write a crash cut short; the other slot holds the
			// previous header.
		case err != nil:
			return nil, nil, fmt.Errorf("header: %v", err)
		case !found || h.gen > hdr.gen:
			hdr, found = h, true
		}
	}
	if !found {
		return nil, nil, errors.New("both copies of its header are damaged, so which commits the files hold is unknown")
	}
	l := &scannedLog{hdr: hdr, size: int64(len(data))}
	var frames []loggedRecord
	off := int64(logFrames)
	for {
		record, ok, zero := frameAt(data, off, hdr.salt)
		if !ok {
			l.empty = off == logFrames && zero
			break
		}
		seq, changes, err := decodeRecord(record)
		if err != nil {
			// The frame's checksum matched: this refine did not write it.
			return nil, nil, fmt.Errorf("offset %d: %v", off, err)
		}
		if seq < hdr.start || seq <= l.last {
			// An earlier generation's frame: the end of this one.
			break
		}
		frames = append(frames, loggedRecord{seq: seq, size: len(record), changes: changes})
		l.last = seq
		off = nextFrame(off, len(record))
	}
	l.end = off
	// Past the end are zeros, the rest of a frame a crash cut short, or
	// an earlier generation's frames, whose records the marker covers. A
	// whole frame with a record after the marker means the end is damage.
	for next := off; next < l.size; next += logBlock {
		record, ok, _ := frameAt(data, next, hdr.salt)
		if !ok {
			continue
		}
		if seq, _, err := decodeRecord(record); err == nil && seq <= hdr.marker {
			continue // checkpointed: damage before it lost nothing
		}
		if next == off {
			return nil, nil, fmt.Errorf("offset %d: a frame of record %d, after the marker (%d) but not after the log's records: the log's header or frames were damaged", next, binary.LittleEndian.Uint64(record[8:]), hdr.marker)
		}
		return nil, nil, fmt.Errorf("the frame at offset %d is not whole (cut short, damaged or zeroed), yet a whole one follows at offset %d: that is damage, not a commit a crash cut short, and the files may hold its commit in whole or in part", off, next)
	}
	return l, frames, nil
}

// fold merges records, oldest first, into one set of changes: each key
// gets its change from the last record that touches it, which is what
// replaying the records one by one would leave. Replaying the fold never
// passes through an intermediate state, which the files (partly ahead of
// it) might not admit: a key one record puts may be a folder by the next.
func fold(records []loggedRecord) []change {
	last := map[string]change{}
	for _, r := range records {
		for _, c := range r.changes {
			last[c.key] = c
		}
	}
	changes := make([]change, 0, len(last))
	for _, c := range last {
		changes = append(changes, c)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].key < changes[j].key })
	return changes
}

// The single-record commit layout of refine's earlier development
// versions, before the log.
const (
	legacyRecord  = ".refine-commit.json"
	legacyStaging = ".refine-staging"
)

// checkLegacy refuses a folder where an earlier version left a commit
// half done: this version cannot complete it, and must not guess.
func (s *Store) checkLegacy() error {
	_, err := s.root.Lstat(legacyRecord)
	switch {
	case err == nil:
		return fmt.Errorf("%w: %s is the record of a commit an earlier refine did not finish, which this version cannot complete; open the folder once with that version, or check the keys the record lists and remove it",
			store.ErrCorrupt, filepath.Join(s.dir, legacyRecord))
	case isNotExist(err):
		return nil
	}
	return err
}

// removeAll removes rel (root-relative) and everything below it, through
// the Root so that a planted link cannot make it delete outside the folder
// (os.Root.RemoveAll needs Go 1.25).
func (s *Store) removeAll(rel string) error {
	fi, err := s.root.Lstat(rel)
	switch {
	case isNotExist(err):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return s.root.Remove(rel) // a file, or a link itself
	}
	var paths []string
	err = iofs.WalkDir(s.root.FS(), filepath.ToSlash(rel), func(p string, _ iofs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	})
	if err != nil {
		return err
	}
	for i := len(paths) - 1; i >= 0; i-- {
		if err := s.root.Remove(filepath.FromSlash(paths[i])); err != nil && !isNotExist(err) {
			return err
		}
	}
	return nil
}
