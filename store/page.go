package store

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
	// Next is the cursor of the following (older) page and Prev that of
	// the preceding (newer) one, "" at either end: pass Next back as
	// PageRequest.After, Prev as PageRequest.Before. A cursor names the
	// session at the page's edge, so sessions that change meanwhile move
	// between pages, and none is listed twice in a walk unless its
	// activity changed.
	Next, Prev string
}

// PageRequest asks for one page of a listing.
type PageRequest struct {
	// After lists the sessions after this cursor (older); Before, the
	// sessions before it (newer). Neither: the first page. Both: an error.
	After, Before string
	// Limit is the page size: ≤ 0 means DefaultPageSize, more than
	// MaxPageSize is MaxPageSize.
	Limit int
}

// SessionPager is an optional Backend capability, found by type assertion:
// a listing a page at a time by a keyset on (last activity, ID), so that a
// page costs the same whatever the number of sessions (an SQL index). A
// Backend without it is paged by ListSessions over Sessions.
type SessionPager interface {
	SessionsPage(ctx context.Context, req PageRequest) (SessionPage, error)
}

// ListSessions returns one page of b's sessions, newest activity first,
// then by ID: through SessionPager when b has it, else cut out of
// Sessions.
func ListSessions(ctx context.Context, b Backend, req PageRequest) (SessionPage, error) {
	req, err := req.Check()
	if err != nil {
		return SessionPage{}, err
	}
	if p, ok := b.(SessionPager); ok {
		return p.SessionsPage(ctx, req)
	}
	all, err := b.Sessions(ctx)
	if err != nil {
		return SessionPage{}, err
	}
	return PageOf(all, req)
}

// Check validates the request's cursors and returns it with its Limit
// settled.
func (r PageRequest) Check() (PageRequest, error) {
	switch {
	case r.Limit <= 0:
		r.Limit = DefaultPageSize
	case r.Limit > MaxPageSize:
		r.Limit = MaxPageSize
	}
	if r.After != "" && r.Before != "" {
		return r, fmt.Errorf("%w: give after or before, not both", ErrInvalidCursor)
	}
	for _, c := range []string{r.After, r.Before} {
		if c != "" {
			if _, _, err := ParseSessionCursor(c); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// PageOf cuts a page out of a whole listing, for Backends that read every
// summary anyway (a folder of folders, a map). It sorts a copy in listing
// order first.
func PageOf(all []SessionInfo, req PageRequest) (SessionPage, error) {
	req, err := req.Check()
	if err != nil {
		return SessionPage{}, err
	}
	infos := slices.Clone(all)
	slices.SortStableFunc(infos, CompareSessions)
	// at returns the index of the first session at or after cursor c in
	// listing order, and whether it is c's own.
	at := func(c string) (int, bool) {
		u, id, _ := ParseSessionCursor(c)
		i, _ := slices.BinarySearchFunc(infos, SessionInfo{ID: id, SessionSummary: SessionSummary{Updated: u}}, CompareSessions)
		return i, i < len(infos) && infos[i].ID == id && infos[i].Updated.Equal(u)
	}
	start, end := 0, min(req.Limit, len(infos))
	switch {
	case req.After != "":
		i, own := at(req.After)
		if own {
			i++
		}
		start, end = i, min(i+req.Limit, len(infos))
	case req.Before != "":
		i, _ := at(req.Before)
		start, end = max(0, i-req.Limit), i
	}
	page := SessionPage{Sessions: infos[start:end]}
	if end < len(infos) && end > start {
		page.Next = SessionCursor(infos[end-1])
	}
	if start > 0 && end > start {
		page.Prev = SessionCursor(infos[start])
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
