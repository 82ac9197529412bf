package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/refine-spec/refine/store"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// isBusy reports whether err is SQLITE_BUSY: another connection held the
// database's write lock for the whole busy timeout.
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// locked turns SQLITE_BUSY into an error wrapping store.ErrLocked that
// names who holds the write lock; other errors pass unchanged.
func (c conn) locked(ctx context.Context, err error) error {
	if err == nil || !isBusy(err) {
		return err
	}
	holder := "another connection"
	if pid, ok := writeLockHolder(c.path); ok {
		holder = fmt.Sprintf("process %d", pid)
		if pid == os.Getpid() {
			holder = fmt.Sprintf("this process (pid %d), on another connection,", pid)
		}
	}
	return fmt.Errorf("the database %s is locked: %s has held its write lock longer than the busy timeout of %s (a writer stopped or stuck inside a transaction)%s; a writer waits no longer: end or resume that process, then run this again; refine status and refine sessions read the database meanwhile (%w; %w)",
		c.path, holder, c.busy, c.leases(ctx), store.ErrLocked, err)
}

// leases lists the live leases, which name the writers of the database
// (host and process ID by default): one of them, or a process without a
// session, holds the lock. It reads through the WAL, which the lock does
// not block.
func (c conn) leases(ctx context.Context) string {
	rows, err := c.db.QueryContext(ctx, `SELECT session_id, holder FROM refine_leases WHERE expires_at > ? ORDER BY expires_at DESC LIMIT 5`, c.now().UnixNano())
	if err != nil {
		return ""
	}
	defer rows.Close()
	var live []string
	for rows.Next() {
		var id, holder string
		if rows.Scan(&id, &holder) == nil {
			live = append(live, fmt.Sprintf("%s (session %s)", holder, id))
		}
	}
	if len(live) == 0 {
		return "; no session has a live lease"
	}
	return "; live leases: " + strings.Join(live, ", ")
}

// The lock bytes SQLite's unix VFS takes with fcntl: in WAL mode a writer
// locks byte 120 of the -shm file (WAL_WRITE_LOCK); in rollback mode,
// the RESERVED and PENDING bytes of the database file.
const (
	walWriteLock = 120
	pendingByte  = 0x40000000
)
