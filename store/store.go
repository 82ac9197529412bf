package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Store is the small transactional key/value store a session lives in. Keys
// are the session's file layout (docs/workflow.md#session-folder), so a filesystem Store is a
// human-readable session folder.
//
// Implementations must be safe for concurrent use by multiple goroutines,
// reject keys that fail ValidKey (and List prefixes that fail ValidPrefix)
// with an error wrapping ErrInvalidKey, and apply a Commit all-or-nothing: a
// reader (or a process reopening after a crash) sees either every op of a
// commit or none. A key cannot also be a folder: with "a" stored, a commit
// leaving "a/b" stored too fails with ErrInvalidKey (so a Store tested in
// memory behaves the same on disk). Get, List and Commit return the
// context's error once it is done. The storetest package checks all of this.
type Store interface {
	// Get returns the value at key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// List returns the keys starting with prefix, sorted. An empty prefix lists all keys.
	List(ctx context.Context, prefix string) ([]string, error)
	// Commit applies the puts and deletes atomically, in order. Deleting an
	// absent key is not an error.
	Commit(ctx context.Context, ops ...Op) error
}

// OpKind says what an Op does.
type OpKind int

// The kinds of Op. OpAppend is only for Stores that implement Appender,
// OpCopy only for those that implement Copier.
const (
	OpPut OpKind = iota + 1
	OpDelete
	OpAppend
	OpCopy
)

// Op is one write in a Commit.
type Op struct {
	Kind  OpKind
	Key   string
	Value []byte // for OpPut and OpAppend
	From  string // for OpCopy: the key whose value is copied
}

// Put returns an Op that stores value at key.
func Put(key string, value []byte) Op { return Op{Kind: OpPut, Key: key, Value: value} }

// Delete returns an Op that removes key.
func Delete(key string) Op { return Op{Kind: OpDelete, Key: key} }

// Append returns an Op that adds value at the end of key's value (an
// absent key is created). Only an Appender accepts it.
func Append(key string, value []byte) Op { return Op{Kind: OpAppend, Key: key, Value: value} }

// Appender is an optional Store capability, found by type assertion as
// io/fs finds ReadDirFS: a Store whose Commit accepts OpAppend ops, applied
// in order with the commit's other ops and as atomically. A session keeps
// its journal in a few keys that grow by small records; with an Appender
// it hands the Store only each new record, without one it rewrites the
// key. Appends reports whether this value accepts OpAppend, so that a
// wrapper can forward the capability of the Store it wraps.
type Appender interface {
	Store
	Appends() bool
}

// Copy returns an Op that sets key to the value from holds at that point
// of the commit (a put of from earlier in the same commit is what it
// copies). A commit copying an absent key fails with an error wrapping
// ErrNotFound and applies nothing. Only a Copier accepts it.
func Copy(key, from string) Op { return Op{Kind: OpCopy, Key: key, From: from} }

// Copier is an optional Store capability, found by type assertion: a
// Store whose Commit accepts OpCopy ops, applied in order with the
// commit's other ops and as atomically. A session writes a copy where a
// key holds what another already does (a round's accepted output is the
// raw response it journaled; a round's status backup is the status.md
// written with it), so that a Store that copies by reference is handed
// each value once; without a Copier it puts the value again. Copies
// reports whether this value accepts OpCopy, so that a wrapper can
// forward the capability of the Store it wraps.
type Copier interface {
	Store
	Copies() bool
}

// Identified is an optional Store capability, found by type assertion: a
// Store that knows which session it holds (a Backend's session, a session
// folder). refine.New takes its SessionID as the session's ID, so a
// session has one ID in its state, its Store and every listing; without
// one, refine.New asks refine.Config.IDs. SessionID returns "" when the
// Store does not know.
type Identified interface {
	Store
	SessionID() string
}

// Repair is a value a Store found damaged when it opened, and wrote again
// from its own log: the file (or row) no longer held what the last
// commits put there, and the log, whose checksums vouch for it, still
// held that value.
type Repair struct {
	// ID names the repair, unique in its session.
	ID string `json:"id"`
	// At is when the Store repaired the value.
	At time.Time `json:"at"`
	// Key is the key repaired.
	Key string `json:"key"`
	// Detail says what the key held instead, as "it held …" reads ("12
	// bytes; the log holds 4096").
	Detail string `json:"detail"`
}

// Repairer is an optional Store capability, found by type assertion: a
// Store that repairs damaged values from its own log when it opens, and
// reports each repair until the session records it in its state (a
// repair made by a process that records nothing, refine status say, is
// recorded by the next run). Repairs returns the repairs not recorded yet
// (none for a wrapper whose Store repairs nothing); RepairsRecorded tells
// the Store the session's state holds the repairs with these IDs, which
// it then stops reporting.
type Repairer interface {
	Store
	Repairs() ([]Repair, error)
	RepairsRecorded(ids []string) error
}

// MaxKeyLen is the longest key a Store accepts, in bytes.
const MaxKeyLen = 255

// ValidKey checks a Store key against the rules every Store enforces:
// relative, '/'-separated, only [A-Za-z0-9._/-], no empty, "." or ".."
// segment, no leading or trailing '/', at most MaxKeyLen bytes, and a first
// segment not starting with ".refine" in any letter case (reserved for a
// Store's own files). The error wraps ErrInvalidKey.
//
// Keys are case-sensitive; on a case-insensitive file system two keys that
// differ only in case would collide, so refine itself only uses lowercase
// keys.
func ValidKey(key string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, why)
	}
	if key == "" {
		return bad("empty")
	}
	if len(key) > MaxKeyLen {
		return bad(fmt.Sprintf("%d bytes, the limit is %d", len(key), MaxKeyLen))
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-'
		if !ok {
			return bad(fmt.Sprintf("byte %q at %d is not one of [A-Za-z0-9._/-]", c, i))
		}
	}
	if first, _, _ := strings.Cut(key, "/"); len(first) >= len(reservedPrefix) && strings.EqualFold(first[:len(reservedPrefix)], reservedPrefix) {
		return bad(fmt.Sprintf("names starting with %q are reserved for the Store's own files", reservedPrefix))
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return bad("empty path segment (leading, trailing or doubled '/')")
		case ".", "..":
			return bad(fmt.Sprintf("%q segment", seg))
		}
	}
	return nil
}

// reservedPrefix starts the names a Store keeps for itself (locks, staging).
const reservedPrefix = ".refine"

// ValidPrefix checks a List prefix: empty (every key), a valid key, or a
// valid key followed by '/'. The error wraps ErrInvalidKey.
func ValidPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := ValidKey(strings.TrimSuffix(prefix, "/")); err != nil {
		return fmt.Errorf("list prefix %q: %w", prefix, err)
	}
	return nil
}

// ValidOps checks every key of ops and that each op is a put or a delete.
func ValidOps(ops []Op) error { return ValidStoreOps(ops, false, false) }

// ValidAppendOps is ValidOps for an Appender: appends are valid too.
func ValidAppendOps(ops []Op) error { return ValidStoreOps(ops, true, false) }

// ValidStoreOps is ValidOps for a Store that accepts appends (appendOK,
// an Appender) or copies (copyOK, a Copier), or both; a copy's source key
// is checked too.
func ValidStoreOps(ops []Op, appendOK, copyOK bool) error {
	for _, op := range ops {
		if err := ValidKey(op.Key); err != nil {
			return err
		}
		switch {
		case op.Kind == OpPut, op.Kind == OpDelete:
		case op.Kind == OpAppend && appendOK:
		case op.Kind == OpAppend:
			return fmt.Errorf("%w %q: this Store does not accept appends (it is no Appender)", ErrInvalidKey, op.Key)
		case op.Kind == OpCopy && copyOK:
			if err := ValidKey(op.From); err != nil {
				return fmt.Errorf("copy to %q: %w", op.Key, err)
			}
		case op.Kind == OpCopy:
			return fmt.Errorf("%w %q: this Store does not accept copies (it is no Copier)", ErrInvalidKey, op.Key)
		default:
			return fmt.Errorf("%w %q: unknown op kind %d", ErrInvalidKey, op.Key, op.Kind)
		}
	}
	return nil
}
