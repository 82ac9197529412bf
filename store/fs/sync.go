package fs

import "os"

// Every sync call the store makes (fsync, fdatasync, a folder's fsync)
// goes through Store.syncCall, tagged with what it is for, so that tests
// can count them: the issue this store answers to is how many a commit
// costs (at most two on the commit path; none for work a crash redoes).

// syncPurpose says what a sync call makes durable.
type syncPurpose int

const (
	// syncNone: the write needs no sync (a put's file, a spare): its
	// commit's record is durable already and recovery rewrites it.
	syncNone syncPurpose = iota
	// syncCommit: the commit point, on the commit path: a log frame's
	// fdatasync, or a record file's fsync and its folder's.
	syncCommit
	// syncCheckpoint: a checkpoint, off the commit path: the files and
	// folders its records touched, then the log header naming the marker.
	syncCheckpoint
	// syncOpen: Open making the log itself durable: the log folder's
	// entry, a new log file and its name, a new generation's header.
	syncOpen
	// syncReserve: the idle applier growing the log file ahead of its
	// frames (see walLog.reserve), off the commit path.
	syncReserve
)

// syncCall is one sync call: its purpose, the root-relative path synced,
// and whether it is an fdatasync (the log file) or a syncfs (the whole
// file system path is on, for a checkpoint) rather than an fsync.
type syncCall struct {
	purpose syncPurpose
	path    string
	data    bool
	fs      bool
}

// syncCall makes f durable as c says, through the Store's syncer if a
// test installed one. Callers check s.sync (NoSync) first.
func (s *Store) syncCall(f *os.File, c syncCall) error {
	if s.syncer != nil {
		return s.syncer(f, c)
	}
	return doSync(f, c)
}

// doSync is the real sync call c on f.
func doSync(f *os.File, c syncCall) error {
	switch {
	case c.fs:
		return syncfs(f)
	case c.data:
		return datasync(f)
	}
	return f.Sync()
}
