// Package sqlkv is what the SQL Backends (store/sqlite, store/postgres)
// share: the whole session model, written once against a small Driver
// (begin a transaction, query, exec) and a Dialect (the SQL text).
//
// DB holds many sessions in one database; a session's writer holds a
// lease row (holder, random token, expiry) that a heartbeat renews and
// every commit checks and renews inside its own transaction, so a writer
// whose lease was taken over cannot commit. Store is a session: a writer
// with an in-memory Cache of its own session, or a read-only view. Each
// commit's ops become the state it leaves at each key and the writes that
// get there, the database computing appends and copies so their values
// are not sent again (Plan); the state is checked against what the
// database holds so no key ends up with keys below it (CheckFolders), and the session.json summary record is copied into
// columns of the session row so listing reads no state. Migrate keeps the
// schema version. Every transaction takes its row locks in the order
// documented at Driver; on a Driver that is a Classifier, reads and
// commits outlive broken connections (see Classifier).
package sqlkv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/internal/summary"
	"github.com/refine-spec/refine/store"
)

// Lookup reads what the database holds for a session, inside the commit's
// transaction: Existing returns which of keys are stored; Below returns up
// to limit stored keys that start with any of prefixes (each a key and a
// '/'). Each is one query, whatever the commit's size.
type Lookup interface {
	Existing(ctx context.Context, keys []string) ([]string, error)
	Below(ctx context.Context, prefixes []string, limit int) ([]string, error)
}

// CheckFolders rejects a commit that would leave a key with another key
// below it (a file system cannot hold a file "a" and a folder "a"), judged
// on the state the whole commit leaves. The error wraps
// store.ErrInvalidKey.
func CheckFolders(ctx context.Context, final Final, db Lookup) error {
	var puts []string
	ancestors := map[string]bool{}
	for k, e := range final {
		if e.Deleted {
			continue
		}
		puts = append(puts, k)
		for i := strings.IndexByte(k, '/'); i >= 0; i = next(k, i) {
			ancestors[k[:i]] = true
		}
	}
	if len(puts) == 0 {
		return nil // deletes cannot create a conflict
	}
	sort.Strings(puts)
	var check []string
	for a := range ancestors {
		if e, ok := final[a]; ok {
			if !e.Deleted {
				return conflict(a)
			}
			continue // deleted by this commit
		}
		check = append(check, a)
	}
	sort.Strings(check)
	if len(check) > 0 {
		stored, err := db.Existing(ctx, check)
		if err != nil {
			return err
		}
		if len(stored) > 0 {
			return conflict(slices.Min(stored))
		}
	}
	deletes := 0
	for _, e := range final {
		if e.Deleted {
			deletes++
		}
	}
	// No put is below another put (checked above), so each stored key is
	// below at most one put, and more than `deletes` of them means one
	// survives the commit.
	prefixes := make([]string, len(puts))
	for i, k := range puts {
		prefixes[i] = k + "/"
	}
	below, err := db.Below(ctx, prefixes, deletes+1)
	if err != nil {
		return err
	}
	for _, b := range below {
		if e, ok := final[b]; !ok || !e.Deleted {
			k := b
			for _, p := range prefixes {
				if strings.HasPrefix(b, p) {
					k = strings.TrimSuffix(p, "/")
				}
			}
			return fmt.Errorf("commit %s: %w: %q is stored below it, so it is a folder; delete the keys below it in the same commit to turn it into a key", k, store.ErrInvalidKey, b)
		}
	}
	return nil
}

func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func conflict(parent string) error {
	return fmt.Errorf("commit: %w: %q is a key, so nothing can be stored below it; delete it in the same commit to turn it into a folder", store.ErrInvalidKey, parent)
}

// PrefixEnd returns the smallest string greater than every string with
// prefix p, for a range scan key >= p AND key < PrefixEnd(p); "" when
// there is no bound. Valid keys are ASCII below 0x7f, so incrementing the
// last byte is enough.
func PrefixEnd(p string) string {
	if p == "" {
		return ""
	}
	return p[:len(p)-1] + string(p[len(p)-1]+1)
}

// NewToken returns a random lease token.
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// DefaultHolder names this process for lease rows: host and process ID.
func DefaultHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}

// Columns are the summary columns of a session row, read from its
// session.json so listing needs no state.
type Columns struct {
	Round    int
	Outcome  string
	Pending  int
	OpenGaps string // JSON object, "{}" when none
	Activity string
	Created  time.Time
	Updated  time.Time
}

// SummaryColumns reads the columns from a session.json value. A record
// without an update time gets now; without a creation time, Created stays
// zero and the row keeps the time it has.
func SummaryColumns(id string, raw []byte, now time.Time) Columns {
	info := summary.Info(id, raw, time.Time{}, now)
	gaps := "{}"
	if len(info.OpenGaps) > 0 {
		b, _ := json.Marshal(info.OpenGaps)
		gaps = string(b)
	}
	return Columns{
		Round: info.Round, Outcome: string(info.Outcome), Pending: info.Pending,
		OpenGaps: gaps, Activity: info.Activity, Created: info.Created, Updated: info.Updated,
	}
}

// Info builds a listing entry from a session row's columns.
func (c Columns) Info(id string) store.SessionInfo {
	info := store.SessionInfo{ID: id, SessionSummary: store.SessionSummary{
		Round: c.Round, Outcome: convergence.Outcome(c.Outcome), Pending: c.Pending,
		Activity: c.Activity, Created: c.Created, Updated: c.Updated,
	}}
	if c.OpenGaps != "" && c.OpenGaps != "{}" {
		_ = json.Unmarshal([]byte(c.OpenGaps), &info.OpenGaps)
	}
	return info
}

// LockedError is the error for a session whose live lease another writer
// holds: it wraps store.ErrLocked and names the holder and the expiry.
func LockedError(pkg, id, holder string, expires time.Time) error {
	return fmt.Errorf("%s: session %s: %w: held by %s (lease until %s, renewed while it runs); wait for that run to finish, or read it with refine status", pkg, id, store.ErrLocked, holder, expires.UTC().Format(time.RFC3339))
}

// LostError is the error a writer gets when its lease was taken over: it
// wraps store.ErrLocked and nothing of the commit is applied.
func LostError(pkg, id, holder string) error {
	if holder == "" {
		holder = "nobody (the session was released or deleted)"
	}
	return fmt.Errorf("%s: commit to session %s: %w: this writer's lease was taken over, now held by %s; nothing was applied; open the session again with refine resume", pkg, id, store.ErrLocked, holder)
}

// MaybeLostError is LostError for a writer whose previous attempt at the
// commit failed at COMMIT on a broken connection, so it cannot tell
// whether that attempt was applied before the lease was taken over.
func MaybeLostError(pkg, id, holder string) error {
	if holder == "" {
		holder = "nobody (the session was released or deleted)"
	}
	return fmt.Errorf("%s: commit to session %s: %w: this writer's lease was taken over while its connection was down, now held by %s; the commit may or may not have been applied; open the session again with refine resume to see", pkg, id, store.ErrLocked, holder)
}
