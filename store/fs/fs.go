// Package fs is a store.Store kept in a session folder on disk, laid out
// exactly as the keys read: key "round_003/engineer.md" is the file
// DIR/round_003/engineer.md. Files are created 0600 and folders 0700.
//
// # Commits
//
// A Commit is atomic across keys, across process crashes and across power
// loss, and costs one write and one fdatasync, plus its share of a
// checkpoint: on Linux two sync calls per 64 commits. The store keeps a
// write-ahead log in DIR/.refine-wal/:
//
//  1. Log. The commit becomes one record, holding every key it changes and
//     every put's value, with a CRC-32C over the whole record (see wal.go
//     for the format). The record is appended to the log file,
//     .refine-wal/log, as a frame starting on a 4 KiB boundary, with its
//     length and a second CRC-32C (see logfile.go), in one write, and the
//     file is fdatasynced. The log file is created once, written in full
//     and fsynced, and its blocks are reused, so an append normally
//     changes no metadata and the fdatasync flushes the frame alone. The
//     fdatasync's return is the commit point: the commit is durable, and
//     Commit returns. A record that would take the log file past 16 MiB
//     is written as a record file instead, as earlier refines wrote every
//     record: a temporary file, fsynced, renamed to .refine-wal/<seq>.rec,
//     and the log folder fsynced; that rename is then the commit point.
//  2. Apply, in the background. One goroutine per Store applies the
//     logged commits in order (see applier.go) while the caller goes on:
//     each put is written to a temporary file and moved over its key, and
//     deleted keys are removed (their emptied folders pruned), without any
//     fsync. Where the move swaps files (Linux), the old value's file is
//     kept as a spare that a later put rewrites instead of creating a
//     file, which costs far more (see spares.go). Until a commit is
//     applied its changes are held in memory (see overlay.go) and every
//     read of this Store (Get, List, appends, the layout checks of later
//     commits) sees them first, so it reads its own writes; readers in
//     this process wait while a commit's moves and removals happen, so
//     they never see half a commit. A reader in another process finds each
//     key holding a whole value, old or new, and sees a commit once it is
//     applied, normally a few milliseconds after Commit returned; Close
//     waits until every commit is applied. A Commit waits while 16
//     commits, or 16 MiB of records, are still to be applied.
//  3. Checkpoint, only when the log must let records go: once it holds
//     64 applied records or 32 MiB (when nothing is queued to apply, so
//     the checkpoint covers every frame; at twice that, regardless), and
//     when Open finds that much to replay. The files and folders the
//     applied commits touched are made durable (on Linux with one
//     syncfs(2) of their file system, elsewhere by fsyncing each), then
//     the log file's header is rewritten to name the last applied record
//     (the marker) and fdatasynced, and record files it covers are
//     deleted. If no record after the marker is in the log file, that
//     header also starts a new generation: the next frames are written
//     from the log file's start again. Records not yet applied stay in
//     the log. Nothing else syncs (but the growth of the log file, ahead
//     of its frames): not the applier when idle (it makes spares then),
//     not Close, not Open after a clean Close, since all a crash can take
//     from the files is rewritten from the log.
//
// Open recovers: it replays every record after the marker, in sequence
// order, by writing each key's final value again where the file does not
// hold it already (so replay is idempotent, a crash during recovery is
// recovered the same way, and after a clean Close it rewrites nothing).
// The records stay in the log, and later frames follow them, until the
// thresholds call for a checkpoint. It reads the log file's frames from the start until one is
// not whole (cut short, failing its checksum, zeros, or a frame of an
// earlier generation, whose records the marker covers): that end is where
// the last append stopped, and an append a crash cut short is a commit
// that never happened, since its fdatasync never returned. A whole frame
// with a record after the marker beyond that end means the end is damage
// (by the disk, say), not a crash, and the damaged record's commit may be
// in the files already: taking it for a commit that never happened and
// replaying older records would take the session back. Open refuses that,
// naming the log file and the offset, as it refuses a damaged record
// file, a missing record in the sequence or a damaged header, with an
// error wrapping store.ErrCorrupt, and changes nothing. Damage to the
// last frame itself cannot be told from a crash: should the disk damage
// it silently before the next commit or checkpoint (for a session at
// rest, that is until its next run commits) and the machine then lose
// its page cache (a power loss, an OS crash), Open would take the session
// back by that one commit. A record file write a
// crash cut short is still a temporary file, and temporary files are
// discarded. Open also reads the layout of earlier refines, record files
// and a marker file (.refine-wal/checkpoint), and moves the marker into
// the log file's header.
//
// Why this is safe. A commit is durable once its frame's fdatasync (or its
// record file's rename and the folder's fsync) completes, and it never
// depends on anything else: the applied files may be lost or torn by a
// power loss, or not written yet when the process dies, but their record
// is still in the log and recovery rewrites them from it. The log file's
// name is durable before the first commit (it is created as a temporary
// file, fsynced, renamed, and the folder fsynced), and an append can only
// damage its own frame: frames start on block boundaries, so no block
// holding an earlier frame is written again until a checkpoint has
// covered it. The header has two copies, written in turn, each with a
// checksum, so a header write a power loss tears leaves the previous one;
// a checkpoint's header is durable before any frame of the generation it
// starts is written, so the previous header never faces frames it did
// not expect. The marker moves forward only after every file and folder
// its records produced has been made durable (fsynced, or its file system
// synced), and never past a record replay skipped because the file held
// its value already: the record stays until a checkpoint syncs that file.
// Records the marker covers are never replayed, so a frame overwritten or a record file deleted after it (or
// a deletion that a power loss undoes) cannot bring back an old value. An
// error while appending, applying or checkpointing, past the commit
// point, leaves the files behind the log: the Store then refuses further
// use, Close reports the error without checkpointing, and the next Open
// replays the log.
//
// Why so few syncs. Each commit's fdatasync is its commit point and
// cannot be saved. A checkpoint's syncs buy nothing a crash would not get
// back from the log: they only let the log forget records, so they are
// spent when the log reaches its thresholds, which bound what a crash (or
// an Open) leaves to replay (64 commits, 32 MiB), and one checkpoint then
// covers state.json, status.md and decisions.md once for many commits.
// A 5-round session makes one sync call a commit, three more when it
// creates its log, and one when the idle applier grows the log file
// ahead of its frames (see walLog.reserve).
//
// # Locking
//
// Open takes an exclusive lock on DIR/.refine.lock, so one writer at a
// time works on a session; a second Open, from this process or another,
// fails with an error wrapping store.ErrLocked. On Linux, macOS and the
// BSDs the lock is flock(2), released by the kernel when the process dies.
// Elsewhere it is the lock file's existence; a crashed process leaves it
// behind and the error says to delete it. OpenReadOnly takes no lock, for
// inspecting a folder while a run is live.
//
// # Reserved names and links
//
// The store's own files all start with ".refine", which store.ValidKey
// reserves (in any letter case, for case-insensitive file systems), so no
// key can name them and List never shows them. The store never follows a
// symbolic link: List skips links, Get refuses them, a put under a linked
// folder fails, and a put or delete at a link replaces or removes the link
// itself, so a link planted in the folder cannot read or write outside it.
// On Linux every file operation on a key is made relative to a handle of
// the key's folder, opened from its parent's handle without following a
// link (see folder.go), so a folder swapped for a link while a commit is
// renaming into it is not written through either; elsewhere renames take
// absolute paths, and that race is not defended against.
// Files that are not valid keys (a name with a space, say) are ignored by
// List.
package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/refine-spec/refine/store"
)

// ErrReadOnly is returned by Commit on a Store opened with OpenReadOnly.
// It is store.ErrReadOnly, so that a caller holding any store.Store
// matches it as it does every other Store's read-only views.
var ErrReadOnly = store.ErrReadOnly

// The store's own names in the session folder. store.ValidKey refuses
// every name starting with ".refine", so no key can reach them;
// TestInternalNamesAreReserved keeps it that way.
const (
	lockName = ".refine.lock"
	walName  = ".refine-wal" // the log folder; its contents are named in wal.go
)

// Checkpoint thresholds: see the package documentation for the choice.
const (
	defaultMaxRecords = 64
	defaultMaxBytes   = 32 << 20
	defaultIdleDelay  = 5 * time.Millisecond
)

// Store is a store.Store in a session folder. It is safe for concurrent
// use by multiple goroutines; Close it when done to let its commits reach
// the files, checkpoint the log, stop its background goroutine and
// release the lock.
type Store struct {
	dir     string // absolute path of the session folder
	root    *os.Root
	rootDir folder // the session folder's handle (see folder.go)
	walDir  folder // the log folder's, from Open's recovery on; a read-only Store has none
	euid    int    // this process's, for the spares' owner check
	fileOps opCounter
	lock    *os.File // nil for a read-only Store
	shared  *os.File // a snapshot's shared lock (OpenSnapshot); nil otherwise
	crashed bool     // the lock's last holder stopped without Close
	// closedCleanly: the lock file says its last holder closed (where
	// the lock is flock: a lock file emptied by Close), so a file behind
	// the log was damaged since (repair.go).
	closedCleanly bool
	readOnly      bool
	snapshot      bool // read-only, with the log's unapplied commits in overlay (OpenSnapshot)
	sync          bool
	log           *slog.Logger

	// commitMu serializes commits and Close; mu keeps readers out while a
	// commit is renamed into place and guards the overlay, so in-process
	// readers never see half a commit.
	commitMu sync.Mutex
	mu       sync.RWMutex
	closed   bool    // guarded by mu
	broken   error   // a commit failed after its commit point; guarded by mu
	overlay  overlay // commits logged but not yet applied; guarded by mu
	nextSeq  uint64  // the next commit's sequence number; guarded by commitMu
	firstSeq uint64  // nextSeq when Open returned

	// The applier (see applier.go) applies logged commits to the files;
	// nil for a read-only Store. While it runs, its goroutine owns the
	// log's bookkeeping and the spares; before (recovery) and after
	// (Close) they belong to Open and Close.
	apl        *applier
	wal        walState
	wlog       *walLog       // the log file (see logfile.go); nil for a read-only Store
	logSize    int64         // of a log file Open creates
	logLimit   int64         // the size the log file may grow to
	idleDelay  time.Duration // how long the applier waits idle before it makes spares; <0: never
	spares     []string      // files to rewrite for puts (see spares.go)
	spareSeq   int           // names the spares makeSpare creates
	noExchange atomic.Bool   // the file system cannot swap files (see replace)

	// live, for a Backend's read-only view, returns the writer of the same
	// session in this process, if there is one, whose overlay the view
	// reads too: so a view sees every commit the writer has returned.
	live func() *Store

	// testHook, when set by tests, is called at named points of a commit,
	// a checkpoint and recovery; an error it returns stops the work there,
	// like a crash.
	testHook func(point string) error
	// syncer, when set by tests, makes every sync call in its place (see
	// sync.go), so they can be counted by purpose.
	syncer func(f *os.File, c syncCall) error
}

var (
	_ store.Store = (*Store)(nil)
	_ io.Closer   = (*Store)(nil)
)

// Option configures Open.
type Option func(*options)

type options struct {
	noSync     bool
	log        *slog.Logger
	maxRecords int   // 0: defaultMaxRecords
	maxBytes   int64 // 0: defaultMaxBytes
	logSize    int64
	logLimit   int64
	idleDelay  time.Duration
	hook       func(point string) error
	syncer     func(f *os.File, c syncCall) error
}

// WithLogger makes the Store log what Open's recovery did and cleanup
// problems that do not fail a commit. Recovery after a crash (commits the
// last writer left unapplied when it stopped without Close, temporary
// files discarded) is logged at Info; the commits a clean Close leaves in
// the log for the next Open, the normal path, only at Debug. Problems are
// Warn. The default logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// NoSync skips every fsync. Commits stay atomic if the process crashes,
// since the kernel's view of the folder outlives the process, but a power
// loss or OS crash can lose or tear recent commits, and Open may then
// refuse the folder as corrupt. Use it for tests and benchmarks only.
func NoSync() Option {
	return func(o *options) { o.noSync = true }
}

// Open opens the session folder dir for reading and writing, creating it
// (mode 0700) if it does not exist, and takes its lock. If another Store
// holds the lock the error wraps store.ErrLocked. Open replays the
// commits a crash left in the log and discards one whose record was not
// completely written; if the log is damaged otherwise the error wraps
// store.ErrCorrupt and nothing is changed.
func Open(dir string, opts ...Option) (*Store, error) {
	o := options{maxRecords: defaultMaxRecords, maxBytes: defaultMaxBytes, logSize: defaultLogSize, logLimit: logMaxSize, idleDelay: defaultIdleDelay}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	abs, err := absDir(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("fs: open %s: create the session folder: %w", abs, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("fs: open %s: %w", abs, err)
	}
	_, lerr := root.Lstat(lockName)
	lock, crashed, err := lockFile(root, abs)
	if err != nil {
		root.Close()
		return nil, err
	}
	s := &Store{dir: abs, root: root, lock: lock, crashed: crashed, closedCleanly: lerr == nil && !crashed,
		sync: !o.noSync, log: o.log, testHook: o.hook, syncer: o.syncer,
		logSize: o.logSize, logLimit: o.logLimit, idleDelay: o.idleDelay, euid: os.Geteuid()}
	s.wal.init(o.maxRecords, o.maxBytes)
	s.rootDir, err = openRootFolder(abs, root, &s.fileOps)
	if err == nil {
		err = s.recover()
	}
	if err != nil {
		// Not Close: a checkpoint now would declare a half-done recovery
		// durable and drop the records it still needs. The lock file is
		// left saying what it said: whether its last holder crashed.
		if !crashed {
			_ = lock.Truncate(0)
		}
		s.release()
		return nil, err
	}
	s.firstSeq = s.nextSeq
	s.apl = newApplier()
	go s.runApplier()
	return s, nil
}

// OpenReadOnly opens the existing session folder dir for reading only. It
// takes no lock, so it works while another process has the folder open,
// and Commit fails with ErrReadOnly. It does not replay the log, so after
// a writer crashed it shows the folder as that writer left it (a commit
// may be missing, or half applied) until Open recovers it; so too after a
// power loss in the seconds after the files were written, which are not
// fsynced until a checkpoint. It does not
// wait for a live writer either: each Get returns a whole value, but reads
// of several keys may straddle a commit made meanwhile, and a commit
// shows once the writer has applied it to the files, normally a few
// milliseconds after its Commit returned (Backend.View, in the writer's
// process, sees it at once).
func OpenReadOnly(dir string) (*Store, error) {
	abs, err := absDir(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("fs: open %s read-only: %w; check the session folder's path", abs, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("fs: open %s read-only: not a folder; pass the session folder", abs)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("fs: open %s read-only: %w", abs, err)
	}
	s := &Store{dir: abs, root: root, readOnly: true, log: slog.New(slog.DiscardHandler)}
	if s.rootDir, err = openRootFolder(abs, root, &s.fileOps); err != nil {
		root.Close()
		return nil, fmt.Errorf("fs: open %s read-only: %w", abs, err)
	}
	return s, nil
}

// OpenSnapshot opens the existing session folder dir for reading only,
// as the next Open would leave it, and changes nothing in it: the commits
// its log holds that the files may not show yet (a writer crashed before
// applying them, or a clean Close left its last ones to the next Open)
// are read from the log into memory, and reads see them first, as Open's
// replay would write them. It takes the folder's lock shared while the
// Store is open, so no writer opens the folder meanwhile and the reads
// are of one state; while a writer has the folder, it fails with an error
// wrapping store.ErrLocked (use OpenReadOnly to read a live run's
// folder). A log Open would refuse as damaged fails it the same way,
// wrapping store.ErrCorrupt. It creates no file, not even the lock file
// or the log folder, and Commit fails with ErrReadOnly. For copying a
// session out of a folder (refine import) without writing to it.
func OpenSnapshot(dir string) (*Store, error) {
	s, err := OpenReadOnly(dir)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Store, error) {
		s.release()
		return nil, fmt.Errorf("fs: open %s read-only: %w", s.dir, err)
	}
	if s.shared, err = shareLock(s.root, s.dir); err != nil {
		s.release()
		return nil, err
	}
	if err := s.checkLegacy(); err != nil {
		return fail(err)
	}
	fi, err := s.root.Lstat(walName)
	switch {
	case isNotExist(err) || err == nil && !fi.IsDir():
		// No log (Open removes anything else under its name).
		return s, nil
	case err != nil:
		return fail(err)
	}
	scan, err := s.scanLog()
	if err != nil {
		return fail(err)
	}
	s.snapshot = true
	for _, r := range scan.records {
		s.overlay.add(r.seq, r.changes)
	}
	return s, nil
}

func absDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("fs: open: empty folder path; pass the session folder")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("fs: open %s: %w", dir, err)
	}
	return abs, nil
}

// Dir returns the absolute path of the session folder.
func (s *Store) Dir() string { return s.dir }

// Close waits until every commit is in the session's files, and releases
// the lock and the folder. It does not checkpoint: each commit is durable
// in the log already, and the records since the last checkpoint stay
// there until the thresholds call for one (the next Open finds the files
// holding them, and rewrites only what a crash took). A checkpoint here
// would make the caller wait for syncs that buy no durability.
// Readers see whole files at once; only a power loss in the seconds before
// the system writes the files back leaves them behind the log, as a
// writer's crash does, until the next Open. A Store that a failure past a
// commit point left broken reports that failure. Close is idempotent;
// every other method fails after it.
func (s *Store) Close() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return nil
	}
	var errs []error
	if s.apl != nil {
		s.apl.halt(true) // its failure, if any, is s.broken
	}
	s.mu.RLock()
	broken := s.broken
	s.mu.RUnlock()
	switch {
	case s.readOnly:
	case broken != nil:
		errs = append(errs, fmt.Errorf("a commit failed after its commit point (%w); it is in the log and completes when the folder is opened again", broken))
	}
	if !s.readOnly {
		s.dropSpares()
	}
	if s.lock != nil && broken == nil {
		// Empty the lock file: the next Open then knows this holder
		// stopped cleanly (see lockFile). Only a hint for its report, so
		// a failure is not Close's.
		_ = s.lock.Truncate(0)
	}
	errs = append(errs, s.release())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("fs: close %s: %w", s.dir, err)
	}
	return nil
}

// release marks the Store closed and lets go of the lock and the folder.
func (s *Store) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	errs = append(errs, s.wlog.close())
	if s.lock != nil {
		errs = append(errs, unlockFile(s.root, s.lock))
	}
	if s.shared != nil {
		errs = append(errs, s.shared.Close())
	}
	errs = append(errs, s.walDir.close(), s.rootDir.close())
	s.walDir, s.rootDir = folder{}, folder{}
	errs = append(errs, s.root.Close())
	return errors.Join(errs...)
}

// usable reports why the Store cannot serve op. s.mu must be held.
func (s *Store) usable(op string) error {
	if s.closed {
		return fmt.Errorf("fs: %s: the store for %s is closed; Open it again", op, s.dir)
	}
	if s.broken != nil {
		return fmt.Errorf("fs: %s: a commit in %s failed after its commit point (%v); close the store and open the folder again to complete it (refine resume --dir %s does)", op, s.dir, s.broken, s.dir)
	}
	return nil
}

// Appends reports true for a writable Store: Commit accepts OpAppend
// (store.Appender).
func (s *Store) Appends() bool { return !s.readOnly }

// Copies reports true for a writable Store: Commit accepts OpCopy
// (store.Copier), written to the log as a put of the source's value.
func (s *Store) Copies() bool { return !s.readOnly }

// Get returns the value at key, or an error wrapping store.ErrNotFound.
// A symbolic link at key or on the way to it is an error, not followed.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fs: get %s: %w", key, err)
	}
	if err := store.ValidKey(key); err != nil {
		return nil, fmt.Errorf("fs: get: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable("get " + key); err != nil {
		return nil, err
	}
	b, err := s.readLogical(key)
	if err != nil {
		return nil, fmt.Errorf("fs: get %s: %w", key, err)
	}
	return b, nil
}

// readLogical returns key's value as of the last commit returned: from
// the overlay if a commit not yet in the files changed it, else from the
// file. s.mu must be held.
func (s *Store) readLogical(key string) ([]byte, error) {
	var b []byte
	err := s.withOverlay(func(o *overlay) error {
		if p, ok := o.lookup(key); ok {
			if p.del {
				return store.ErrNotFound
			}
			b = append(make([]byte, 0, len(p.value)), p.value...)
			return nil
		}
		var err error
		b, err = s.read(key)
		return err
	})
	return b, err
}

// withOverlay calls fn with the overlay of the commits not yet in the
// files, locked so none of them is applied meanwhile: the Store's own,
// or for a Backend's view the one of its writer in this process. Without
// one, fn gets nil, an empty overlay. s.mu must be held.
func (s *Store) withOverlay(fn func(o *overlay) error) error {
	if !s.readOnly || s.snapshot {
		return fn(&s.overlay)
	}
	var w *Store
	if s.live != nil {
		w = s.live()
	}
	if w == nil {
		return fn(nil)
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	return fn(&w.overlay)
}

// pendingValue returns key's change in a commit not yet in the files, if
// there is one (for the Backend's listing, which reads files directly).
func (s *Store) pendingValue(key string) (pending, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.overlay.lookup(key)
}

func (s *Store) read(key string) ([]byte, error) {
	// Another process (a live writer, when this Store is read-only) may
	// rename a new value over key between the check and the open; that is
	// a legitimate change, so look again.
	for attempt := 1; ; attempt++ {
		b, err := s.readOnce(key)
		if !errors.Is(err, errChanged) || attempt == 3 {
			return b, err
		}
	}
}

// errChanged: the file at a key was replaced between Lstat and open.
var errChanged = errors.New("changed while being opened; retry")

func (s *Store) readOnce(key string) ([]byte, error) {
	fs := s.folders()
	defer fs.close()
	fi, blocker, err := fs.lstatKey(key)
	switch {
	case err != nil:
		return nil, err
	case blocker != "" || fi == nil || fi.IsDir():
		return nil, store.ErrNotFound
	case fi.Mode()&iofs.ModeSymlink != 0:
		return nil, linkError(key)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%v); remove it", key, fi.Mode().Type())
	}
	dir, name, _, err := fs.keyFolder(key, false)
	if err != nil {
		return nil, err
	}
	if !s.readOnly {
		// Only this Store writes the folder: read without locking.
		return dir.read(name, fi)
	}
	f, err := dir.openFile(name, os.O_RDONLY, 0)
	if err != nil {
		if isNotExist(err) || errors.Is(err, syscall.ELOOP) {
			return nil, errChanged
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// The file is opened without following a link: make sure it is the
	// one we checked.
	if !sameFile(fi, st) {
		return nil, fmt.Errorf("%s %w", key, errChanged)
	}
	// A live writer may have swapped this file out of key since we
	// opened it, and may rewrite it as a spare (see spares.go): hold it
	// still, then check key still names it, which means it holds key's
	// whole value.
	if err := readLock(f); err != nil {
		return nil, err
	}
	if now, _, err := s.lstatKey(key); err != nil || now == nil || !sameFile(now, st) {
		return nil, errChanged
	}
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}

// Size returns the size of the value at key without reading it, or an
// error wrapping store.ErrNotFound: what Get would return the length of,
// so a caller can refuse a value too large to read (a file planted in the
// folder, say) before reading it.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("fs: size %s: %w", key, err)
	}
	if err := store.ValidKey(key); err != nil {
		return 0, fmt.Errorf("fs: size: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable("size " + key); err != nil {
		return 0, err
	}
	var n int64
	err := s.withOverlay(func(o *overlay) error {
		if p, ok := o.lookup(key); ok {
			if p.del {
				return store.ErrNotFound
			}
			n = int64(len(p.value))
			return nil
		}
		fi, blocker, err := s.lstatKey(key)
		switch {
		case err != nil:
			return err
		case blocker != "" || fi == nil || fi.IsDir():
			return store.ErrNotFound
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file (%v)", key, fi.Mode().Type())
		}
		n = fi.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("fs: size %s: %w", key, err)
	}
	return n, nil
}

// List returns the keys starting with prefix, sorted. The prefix must be
// empty, a valid key, or a valid key followed by '/'. Links, non-regular
// files, files that are not valid keys and the store's own files are not
// listed.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fs: list %s: %w", prefix, err)
	}
	if err := store.ValidPrefix(prefix); err != nil {
		return nil, fmt.Errorf("fs: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable("list " + prefix); err != nil {
		return nil, err
	}
	var keys []string
	err := s.withOverlay(func(o *overlay) error {
		disk, err := s.list(prefix)
		keys = o.merge(prefix, disk)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fs: list %s: %w", prefix, err)
	}
	return keys, nil
}

func (s *Store) list(prefix string) ([]string, error) {
	// Walk only the deepest folder the prefix names in full.
	start := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
		fi, blocker, err := s.lstatKey(start)
		switch {
		case errors.Is(err, errLink):
			return nil, nil // links are not followed, so nothing is below one
		case err != nil:
			return nil, err
		case blocker != "" || fi == nil || !fi.IsDir():
			return nil, nil // not a folder, so no keys below it
		}
	}
	var keys []string
	err := iofs.WalkDir(s.root.FS(), start, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if d.IsDir() {
			// Skip folders that cannot hold keys (the store's own log among
			// them: its name is reserved) and folders the prefix rules out.
			if store.ValidKey(p) != nil || !(strings.HasPrefix(p+"/", prefix) || strings.HasPrefix(prefix, p+"/")) {
				return iofs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasPrefix(p, prefix) && store.ValidKey(p) == nil {
			keys = append(keys, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A walk is in per-folder name order, not key order: "a-c" sorts before
	// "a/b" but is walked after it.
	sort.Strings(keys)
	return keys, nil
}

// errLink marks a refusal to follow a symbolic link.
var errLink = errors.New("is a symbolic link, and the store does not follow links")

func linkError(path string) error {
	return fmt.Errorf("%s %w; remove the link", path, errLink)
}

// lstatKey looks at key without following links, resolving its folders
// afresh (see folders.lstatKey).
func (s *Store) lstatKey(key string) (fi iofs.FileInfo, blocker string, err error) {
	fs := s.folders()
	defer fs.close()
	return fs.lstatKey(key)
}

func nextSlash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func isNotExist(err error) bool {
	// ENOTDIR: a file where a folder would be also means "not there".
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// writeFile creates rel (root-relative, in the log folder) with data,
// mode 0600, failing if something is already there (so a planted link is
// never written through), and fsyncs it for purpose unless that is
// syncNone (or the Store is NoSync).
func (s *Store) writeFile(rel string, data []byte, purpose syncPurpose) error {
	if purpose == syncNone || !s.sync {
		return s.walDir.create(walBase(rel), data)
	}
	f, err := s.walDir.openFile(walBase(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if len(data) > 0 { // an empty spare needs no write
		_, err = f.Write(data)
	}
	if err == nil && purpose != syncNone && s.sync {
		err = s.syncCall(f, syncCall{purpose: purpose, path: rel})
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) hook(point string) error {
	if s.testHook == nil {
		return nil
	}
	return s.testHook(point)
}

// HasLog reports whether dir holds this store's write-ahead log. A folder
// with a log may hold commits that only Open redoes (the first commit of a
// session, say, logged but not yet applied when the process died), so a
// caller deciding whether dir holds a session should Open it first; one
// without a log and without the session's files holds none, and need not
// be opened (which would create the store's files in it). It creates
// nothing.
func HasLog(dir string) (bool, error) {
	fi, err := os.Lstat(filepath.Join(dir, walName))
	switch {
	case err == nil:
		return fi.IsDir(), nil
	case isNotExist(err):
		return false, nil
	}
	return false, err
}
