package fs

import (
	"os"
	"path/filepath"
	"sync"
	"time"
)

// WithCheckpointThresholds lets the black-box tests (the crash test's
// child) checkpoint far more often than the defaults would.
var WithCheckpointThresholds = withCheckpointThresholds

// withCheckpointThresholds makes the Store checkpoint once the log holds
// records records or bytes bytes.
func withCheckpointThresholds(records int, bytes int64) Option {
	return func(o *options) { o.maxRecords, o.maxBytes = records, bytes }
}

// withHook installs a test hook before Open's recovery runs, so tests can
// crash recovery itself.
func withHook(h func(point string) error) Option {
	return func(o *options) { o.hook = h }
}

// WithoutIdleCheckpoints lets black-box tests look at the log folder as
// commits leave it: the applier does no idle work (spares, growing the
// log file). The name is older than the rule that it never checkpoints
// when idle.
var WithoutIdleCheckpoints = func() Option { return withIdleDelay(-1) }

// withIdleDelay makes the applier do its idle work (spares, growing the
// log file) once idle for d; d < 0: never.
func withIdleDelay(d time.Duration) Option {
	return func(o *options) { o.idleDelay = d }
}

// withLogLimit lets the log file grow to n bytes only.
func withLogLimit(n int64) Option {
	return func(o *options) { o.logLimit = n }
}

// LoggedRecords returns how many commits Open would replay from the log
// in dir, reading it without a lock and changing nothing.
func LoggedRecords(dir string) (int, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	s := &Store{dir: dir, root: root}
	scan, err := s.scanLog()
	if err != nil {
		return 0, err
	}
	return len(scan.records), nil
}

// Flush waits until every commit s returned is in the session's files, so
// black-box tests can look at the files (a test-only door: users see the
// files complete after Close).
func Flush(s *Store) error { return s.flush() }

// SyncCounts counts a Store's sync calls (fsync, fdatasync, a folder's
// fsync) by purpose; WithSyncCounter installs it. It is safe for the
// concurrent calls of a checkpoint.
type SyncCounts struct {
	mu    sync.Mutex
	calls []syncCall
}

// WithSyncCounter makes the Store count every sync call in c, from Open's
// on, and then make it.
func WithSyncCounter(c *SyncCounts) Option {
	return func(o *options) {
		o.syncer = func(f *os.File, sc syncCall) error {
			c.mu.Lock()
			c.calls = append(c.calls, sc)
			c.mu.Unlock()
			return doSync(f, sc)
		}
	}
}

// syncPurposeNames names syncPurpose values for the tests' messages.
var syncPurposeNames = map[syncPurpose]string{
	syncNone: "none", syncCommit: "commit", syncCheckpoint: "checkpoint", syncOpen: "open", syncReserve: "reserve",
}

// Counts returns the calls so far by purpose: "commit" (the commit path),
// "checkpoint", "open", "reserve" (growing the log file ahead); and
// "none", which must never appear.
func (c *SyncCounts) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int{}
	for _, sc := range c.calls {
		m[syncPurposeNames[sc.purpose]]++
	}
	return m
}

// Paths returns the paths synced for purpose, in call order.
func (c *SyncCounts) Paths(purpose string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []string
	for _, sc := range c.calls {
		if syncPurposeNames[sc.purpose] == purpose {
			ps = append(ps, filepath.ToSlash(sc.path))
		}
	}
	return ps
}

// Reset forgets the calls counted so far.
func (c *SyncCounts) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = nil
}

// Commits returns how many commits s has logged since it was opened.
func Commits(s *Store) int {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return int(s.nextSeq - s.firstSeq)
}

// WithIdleDelay lets black-box tests make the applier do its idle work
// (spares, growing the log file) as soon as it has nothing to apply
// (d = 0), or never (d < 0).
var WithIdleDelay = withIdleDelay

// SyncsFileSystems reports that a checkpoint syncs file systems (syncfs)
// rather than each file and folder: two sync calls a checkpoint.
const SyncsFileSystems = syncsFileSystems

// FileOps returns how many file operations s has made through its folder
// handles so far (see folder.go): lookups, opens and creates, folder
// creations, renames and removals.
func FileOps(s *Store) int64 { return s.fileOps.Load() }
