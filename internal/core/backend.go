package core

import (
	"time"

	"github.com/refine-spec/refine/store"
)

// The Backend contract lives in package store with the Store's; the names
// below are aliases and forwards of it.

// Backend is [store.Backend]: many sessions, each a Store. The CLI's --store
// URL, the web console and the Temporal artifact mirror take a Backend.
type Backend = store.Backend

// NamedCreator is [store.NamedCreator]: a Backend that can create a session
// under a chosen ID.
type NamedCreator = store.NamedCreator

// SummaryKey is the Store key of a session's summary record
// ([store.SummaryKey]).
const SummaryKey = store.SummaryKey

// SessionSummary is [store.SessionSummary]: the small record a session keeps
// at SummaryKey.
type SessionSummary = store.SessionSummary

// SessionInfo is [store.SessionInfo]: one session as Backend.Sessions lists
// it.
type SessionInfo = store.SessionInfo

// MaxSessionIDLen is the longest session ID a Backend accepts, in bytes
// ([store.MaxSessionIDLen]).
const MaxSessionIDLen = store.MaxSessionIDLen

// ValidSessionID checks a session ID ([store.ValidSessionID]). The error
// wraps ErrInvalidKey.
func ValidSessionID(id string) error { return store.ValidSessionID(id) }

// DefaultPageSize is the page a listing returns when asked for none
// ([store.DefaultPageSize]).
const DefaultPageSize = store.DefaultPageSize

// MaxPageSize is the largest page a listing returns ([store.MaxPageSize]).
const MaxPageSize = store.MaxPageSize

// SessionPage is [store.SessionPage]: one page of a Backend's sessions.
type SessionPage = store.SessionPage

// PageRequest is [store.PageRequest]: a request for one page of a listing.
type PageRequest = store.PageRequest

// SessionPager is [store.SessionPager]: a Backend that lists a page at a
// time by a keyset.
type SessionPager = store.SessionPager

// PageOf cuts a page out of a whole listing ([store.PageOf]).
func PageOf(all []SessionInfo, req PageRequest) (SessionPage, error) {
	return store.PageOf(all, req)
}

// CompareSessions is the listing order: newest activity first, then ID
// ([store.CompareSessions]).
func CompareSessions(a, b SessionInfo) int { return store.CompareSessions(a, b) }

// SessionCursor is the cursor of the page after in
// ([store.SessionCursor]).
func SessionCursor(in SessionInfo) string { return store.SessionCursor(in) }

// ParseSessionCursor reads a cursor SessionCursor made
// ([store.ParseSessionCursor]).
func ParseSessionCursor(c string) (updated time.Time, id string, err error) {
	return store.ParseSessionCursor(c)
}
