package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/refine-spec/refine/convergence"
)

// Backend holds many sessions, each a Store: a folder of session folders,
// one SQLite file, one PostgreSQL database. The CLI's --store URL, the web
// console and the Temporal artifact mirror take a Backend.
//
// Implementations are safe for concurrent use. A Store returned by Create or
// Session is the session's one writer: until it is closed (io.Closer), every
// other Session call for the same ID, in this process or another, fails with
// an error wrapping ErrLocked that names the holder. View opens a session for
// reading only and never waits for or takes the writer's lock.
type Backend interface {
	// Create starts a new, empty session with a fresh ID and returns it
	// locked for writing.
	Create(ctx context.Context) (id string, st Store, err error)
	// Session opens an existing session for writing. An unknown ID is an
	// error wrapping ErrNotFound; a session another writer holds, ErrLocked.
	Session(ctx context.Context, id string) (Store, error)
	// View opens an existing session for reading: Get and List work, Commit
	// fails with an error wrapping ErrReadOnly.
	View(ctx context.Context, id string) (Store, error)
	// Sessions lists every session, newest activity first, from each
	// session's summary record (SummaryKey) without reading its state.
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// Delete removes a session and everything in it. Deleting a session
	// another writer holds fails with ErrLocked; an unknown ID, ErrNotFound.
	Delete(ctx context.Context, id string) error
	// Close releases the backend's resources (connections, files).
	Close() error
}

// NamedCreator is implemented by Backends that can create a session under a
// chosen ID (refine import, a host's own IDs). Creating an ID that exists
// fails with an error wrapping ErrSessionExists.
type NamedCreator interface {
	CreateNamed(ctx context.Context, id string) (Store, error)
}

// SummaryKey is the Store key of a session's summary record, committed with
// every durable point so that a Backend lists sessions without reading their
// state. Its value is a SessionSummary as JSON.
const SummaryKey = "session.json"

// SessionSummary is the small record a session keeps at SummaryKey.
type SessionSummary struct {
	// Round is the last round played (0 before the first).
	Round int `json:"round"`
	// Outcome is RUNNING, PAUSED, FAILED or a terminal outcome
	// (refine.OutcomeStatus is this type).
	Outcome convergence.Outcome `json:"outcome"`
	// OpenGaps counts the open gaps by severity name ("HIGH": 2).
	OpenGaps map[string]int `json:"open_gaps"`
	// Pending is the number of questions waiting for an answer.
	Pending int `json:"pending"`
	// Created is when the session started; Updated, its last durable point.
	Created time.Time `json:"created_at"`
	Updated time.Time `json:"updated_at"`
	// Activity says in a few words what happened last ("round 3 reviewer
	// attempt 1", "waiting: conflict-r2-1").
	Activity string `json:"activity"`
}

// SessionInfo is one session as Backend.Sessions lists it.
type SessionInfo struct {
	ID string `json:"id"`
	SessionSummary
}

// ErrReadOnly: a Store opened for reading was asked to commit.
var ErrReadOnly = errors.New("store is read-only")

// MaxSessionIDLen is the longest session ID a Backend accepts, in bytes.
const MaxSessionIDLen = 64

// ValidSessionID checks a session ID: 1 to MaxSessionIDLen bytes of
// [A-Za-z0-9._-], not starting with '.' (so an ID is always a plain folder
// name and never a path). The error wraps ErrInvalidKey.
func ValidSessionID(id string) error {
	if id == "" || len(id) > MaxSessionIDLen {
		return fmt.Errorf("%w: session ID %q must be 1 to %d bytes", ErrInvalidKey, id, MaxSessionIDLen)
	}
	if id[0] == '.' {
		return fmt.Errorf("%w: session ID %q starts with '.'", ErrInvalidKey, id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: session ID %q: byte %q at %d is not one of [A-Za-z0-9._-]", ErrInvalidKey, id, c, i)
		}
	}
	return nil
}
