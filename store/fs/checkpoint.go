package fs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
)

// walState is what the Store knows about its log: the records applied but
// not yet checkpointed, and the files and folders they touched, which a
// checkpoint must fsync before the marker may cover them. Records logged but not
// yet applied are not in it: a checkpoint must not cover them. It belongs
// to recovery during Open, then to the applier's goroutine, then to Close
// once the applier has stopped.
type walState struct {
	last       uint64   // the last record applied (or covered by the marker)
	pending    []uint64 // records applied since the marker, oldest first
	recFiles   []uint64 // those of them that are record files
	bytes      int64    // their total size
	files      map[string]bool
	dirs       map[string]bool
	maxRecords int
	maxBytes   int64
}

func (w *walState) init(maxRecords int, maxBytes int64) {
	*w = walState{files: map[string]bool{}, dirs: map[string]bool{}, maxRecords: maxRecords, maxBytes: maxBytes}
}

// applied notes record seq, of size bytes (a record file if inFile), as
// applied to the files, and what applying changes touched: each put's
// file, and every folder above a put or a delete (a new folder's entry is
// in its parent, a pruned folder's too). It keeps keys only, never
// values.
func (w *walState) applied(seq uint64, size int, inFile bool, changes []change) {
	w.pending = append(w.pending, seq)
	if inFile {
		w.recFiles = append(w.recFiles, seq)
	}
	w.bytes += int64(size)
	w.last = max(w.last, seq)
	for _, c := range changes {
		if !c.del {
			w.files[c.key] = true
		}
		w.dirs["."] = true
		forFolders(c.key, func(dir string) { w.dirs[dir] = true })
	}
}

// due reports whether the log has grown enough to checkpoint.
func (w *walState) due() bool {
	return len(w.pending) >= w.maxRecords || w.bytes >= w.maxBytes
}

// checkpoint makes everything the pending records produced durable, then
// lets the log forget them. The order is what makes it safe:
//
//  1. fsync every file and folder the records touched, as they are now;
//  2. write the marker naming the last record into the log file's header,
//     durably (see walLog.mark); if no later record is in the log file,
//     that header also starts a new generation, emptying it;
//  3. delete the records that are record files, with no fsync: should a
//     power loss undo a deletion, the marker says the record is already
//     reflected in the files, and recovery ignores it rather than replay
//     an old value.
//
// A key the records put and later deleted is not fsynced (the folder that
// lost it is); a key put twice is fsynced once, in its last state.
// checkpoint must only run when the files hold every commit it covers,
// which is why a broken Store never checkpoints. Only the owner of s.wal
// calls it.
func (s *Store) checkpoint() error {
	w := &s.wal
	if len(w.pending) == 0 {
		return nil
	}
	if err := s.hook("checkpoint"); err != nil {
		return err
	}
	if err := s.syncTouched(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := s.hook("synced"); err != nil {
		return err
	}
	if err := s.wlog.mark(w.last, syncCheckpoint); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := s.hook("marked"); err != nil {
		return err
	}
	for _, seq := range w.recFiles {
		if err := s.root.Remove(walPath(recordName(seq))); err != nil && !isNotExist(err) {
			// Harmless: the marker covers it, and Open removes it.
			s.log.Warn("fs: could not delete a checkpointed log record; the next Open removes it", "dir", s.dir, "record", recordName(seq), "err", err)
		}
	}
	w.pending = w.pending[:0]
	w.recFiles = w.recFiles[:0]
	w.bytes = 0
	clear(w.files)
	clear(w.dirs)
	return nil
}

// syncWorkers bounds the fsyncs a checkpoint has in flight. Issued
// together, fsyncs share the file system's journal commits: on the project
// machine (ext4), 100 freshly written files took 100-270 ms to fsync one
// at a time and 7-45 ms sixteen at a time; 4 to 256 at a time made little
// further difference.
const syncWorkers = 16

// syncTouched makes every file and folder the pending records touched
// that still exists durable. On Linux it syncs the file system they are
// on, once (syncfs(2); once per file system, should a folder of the
// session be another's mount point): a checkpoint then costs two sync
// calls, with the header's, however many files its records touched,
// where fsyncing each took one per file and folder (249 for the 64
// commits of a 40-round session). syncfs also writes back what other
// programs left dirty on that file system, which fsync would not: the
// price of a checkpoint that comes once per 64 commits or 32 MiB, off the
// commit path. Elsewhere it fsyncs each, several at a time.
func (s *Store) syncTouched() error {
	if !s.sync {
		return nil
	}
	w := &s.wal
	paths := make([]string, 0, len(w.files)+len(w.dirs))
	for p := range w.files {
		paths = append(paths, p)
	}
	for p := range w.dirs {
		paths = append(paths, p)
	}
	sort.Strings(paths) // deterministic order, for errors and tests
	if syncsFileSystems {
		return s.syncFileSystems(paths)
	}
	work := make(chan string)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range min(syncWorkers, len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if err := s.syncPath(p); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range paths {
		work <- p
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// syncFileSystems syncs the file system of each of paths (root-relative
// keys and folders) that still exists, once per file system.
func (s *Store) syncFileSystems(paths []string) error {
	seen := map[uint64]bool{}
	for _, p := range paths {
		native := filepath.FromSlash(p)
		fi, err := s.root.Lstat(native)
		switch {
		case isNotExist(err):
			continue // deleted or pruned by a later commit; its parent is synced
		case err != nil:
			return err
		case !fi.IsDir() && !fi.Mode().IsRegular():
			continue // a link is never followed, not even to sync
		}
		dev, ok := device(fi)
		if ok && seen[dev] {
			continue
		}
		f, err := s.root.Open(native)
		if err != nil {
			return err
		}
		err = s.syncCall(f, syncCall{purpose: syncCheckpoint, path: native, fs: true})
		f.Close()
		if err != nil {
			return fmt.Errorf("syncfs %s: %w", p, err)
		}
		seen[dev] = ok
	}
	return nil
}

// syncPath fsyncs the file or folder at rel (a key or a key's folder),
// if it is still there. A link is never followed, not even to fsync, and
// anything else that is not a regular file or a folder is not ours.
func (s *Store) syncPath(rel string) error {
	native := filepath.FromSlash(rel)
	fi, err := s.root.Lstat(native)
	switch {
	case isNotExist(err):
		return nil // deleted or pruned by a later commit; its parent is synced
	case err != nil:
		return err
	case fi.IsDir():
		return s.syncDir(native, syncCheckpoint)
	case fi.Mode().IsRegular():
		return s.syncFile(native)
	}
	return nil
}

// syncFile fsyncs the regular file rel, for a checkpoint.
func (s *Store) syncFile(rel string) error {
	flag := os.O_RDONLY
	if runtime.GOOS == "windows" {
		flag = os.O_RDWR // FlushFileBuffers needs write access
	}
	f, err := s.root.OpenFile(rel, flag, 0)
	if err != nil {
		return err
	}
	err = s.syncCall(f, syncCall{purpose: syncCheckpoint, path: rel})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", rel, err)
	}
	return nil
}

// syncDir fsyncs the folder rel (root-relative), for purpose, so renames
// and removals in it are durable. Windows cannot fsync a folder; NTFS
// journals metadata.
func (s *Store) syncDir(rel string, purpose syncPurpose) error {
	if !s.sync || runtime.GOOS == "windows" {
		return nil
	}
	f, err := s.root.Open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := s.syncCall(f, syncCall{purpose: purpose, path: rel}); err != nil {
		return fmt.Errorf("fsync folder %s: %w", rel, err)
	}
	return nil
}
