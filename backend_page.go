package refine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidCursor is wrapped by listing errors for a cursor that no page
// handed out (edited, truncated, from another kind of listing).
var ErrInvalidCursor = errors.New("invalid session cursor")

// DefaultPageSize is the page a listing returns when asked for none.
const DefaultPageSize = 50

// MaxPageSize is the largest page a listing returns.
const MaxPageSize = 1000

// SessionPage is one page of a Backend's sessions, newest activity first,
// then by ID.
type SessionPage struct {
	Sessions []SessionInfo
	// Next is the cursor of the following page ("" on the last): pass it
	// back as after. It names the last session listed, so sessions that
	// change meanwhile move between pages but none is listed twice in a
	// walk unless its activity changed.
	Next string
}

// SessionPager is an optional Backend capability, found by type assertion:
// a listing a page at a time by a keyset on (last activity, ID), so that a
// page costs the same whatever the number of sessions (an SQL index). A
// Backend without it is paged by ListSessions over Sessions.
type SessionPager interface {
	SessionsPage(ctx context.Context, after string, limit int) (SessionPage, error)
}

// ListSessions returns one page of at most limit of b's sessions after the
// cursor after ("" for the first page), newest activity first, then by ID.
// limit ≤ 0 means DefaultPageSize; more than MaxPageSize is MaxPageSize.
func ListSessions(ctx context.Context, b Backend, after string, limit int) (SessionPage, error) {
	limit = PageSize(limit)
	if after != "" {
		if _, _, err := ParseSessionCursor(after); err != nil {
			return SessionPage{}, err
		}
	}
	if p, ok := b.(SessionPager); ok {
		return p.SessionsPage(ctx, after, limit)
	}
	all, err := b.Sessions(ctx)
	if err != nil {
		return SessionPage{}, err
	}
	return PageOf(all, after, limit)
}

// PageSize turns a requested page size into the one served.
func PageSize(limit int) int {
	switch {
	case limit <= 0:
		return DefaultPageSize
	case limit > MaxPageSize:
		return MaxPageSize
	}
	return limit
}

// PageOf cuts the page after the cursor after out of a whole listing,
// for Backends that read every summary anyway (a folder of folders, a
// map). It sorts a copy in listing order first.
func PageOf(all []SessionInfo, after string, limit int) (SessionPage, error) {
	limit = PageSize(limit)
	infos := slices.Clone(all)
	slices.SortStableFunc(infos, CompareSessions)
	start := 0
	if after != "" {
		u, id, err := ParseSessionCursor(after)
		if err != nil {
			return SessionPage{}, err
		}
		start, _ = slices.BinarySearchFunc(infos, SessionInfo{ID: id, SessionSummary: SessionSummary{Updated: u}}, CompareSessions)
		if start < len(infos) && infos[start].ID == id && infos[start].Updated.Equal(u) {
			start++
		}
	}
	end := min(start+limit, len(infos))
	page := SessionPage{Sessions: infos[start:end]}
	if end < len(infos) && end > start {
		page.Next = SessionCursor(infos[end-1])
	}
	return page, nil
}

// CompareSessions is the listing order: newest activity first, then ID.
func CompareSessions(a, b SessionInfo) int {
	if c := b.Updated.Compare(a.Updated); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// SessionCursor is the cursor of the page after in: its last activity in
// Unix nanoseconds and its ID ("1732612345000000000.20261126-141502-3fa9c1").
func SessionCursor(in SessionInfo) string {
	return strconv.FormatInt(in.Updated.UnixNano(), 10) + "." + in.ID
}

// ParseSessionCursor reads a cursor SessionCursor made.
func ParseSessionCursor(c string) (updated time.Time, id string, err error) {
	ns, id, ok := strings.Cut(c, ".")
	n, perr := strconv.ParseInt(ns, 10, 64)
	if !ok || perr != nil || ValidSessionID(id) != nil {
		return time.Time{}, "", fmt.Errorf("%w %q: want the next cursor a listing returned", ErrInvalidCursor, c)
	}
	return time.Unix(0, n).UTC(), id, nil
}
