// Package storeurl reads the --store values of the command-line tools
// (file:ROOT or a folder path, sqlite:PATH, postgres://…) and opens the
// Backend they name, so refine and refine-temporal accept the same
// values and never show a password.
package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/postgres"
	"github.com/refine-spec/refine/store/sqlite"
)

// URL is a parsed --store value: where many sessions live.
type URL struct {
	Kind string // "file", "sqlite" or "postgres"
	// target is the root folder (file), the database file (sqlite) or the
	// connection URL (postgres).
	Target string
	// Shown is the value as given, for messages, with any password removed.
	Shown string
}

// Parse reads a --store value: file:ROOT or a plain path (a
// folder of session folders), sqlite:PATH, or postgres://… (also
// postgresql://…).
func Parse(s string) (URL, error) {
	bad := func(why string) (URL, error) {
		return URL{}, fmt.Errorf("--store %q: %s; want file:ROOT, a folder path, sqlite:PATH or postgres://…", s, why)
	}
	if strings.TrimSpace(s) == "" {
		return bad("empty")
	}
	if strings.ContainsAny(s, "\x00\n\r") {
		return bad("control characters")
	}
	switch {
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		u, err := url.Parse(s)
		if err != nil {
			// Neither s nor the parser's message (which quotes s) may be
			// shown: they may hold the password.
			scheme, rest, _ := strings.Cut(s, "://")
			if i := strings.LastIndex(rest, "@"); i >= 0 {
				rest = "…@" + rest[i+1:]
			}
			return URL{}, fmt.Errorf("--store %q: not a valid URL (percent-encode a password holding '#', '?', '/' or ':'); want postgres://USER@HOST/DB with the password in PGPASSWORD", scheme+"://"+rest)
		}
		shown := s
		_, hasPassword := u.User.Password()
		// A password holding '#', '?' or '/' defeats URL parsing (it is
		// read as a fragment, a query or a path), and a path may repeat
		// "user:password@": when a password is given, or an '@' sits
		// where no user was parsed, show only what follows the last '@'.
		scheme, rest, _ := strings.Cut(s, "://")
		if i := strings.LastIndex(rest, "@"); i >= 0 && (u.User == nil || hasPassword || strings.Contains(shown, rest[:i])) {
			user := "…"
			if u.User != nil && u.User.Username() != "" && !strings.ContainsAny(u.User.Username(), "#?/") {
				user = url.User(u.User.Username()).String() // escaped: a ':' in it cannot pass for a password
			}
			shown = scheme + "://" + user + "@" + rest[i+1:]
		}
		return URL{Kind: "postgres", Target: s, Shown: shown}, nil
	case strings.HasPrefix(s, "sqlite:"):
		p := strings.TrimPrefix(strings.TrimPrefix(s, "sqlite:"), "//")
		if p == "" {
			return bad("no database file after sqlite:")
		}
		if strings.ContainsAny(p, "?#") {
			return bad("the database path has '?' or '#'")
		}
		return URL{Kind: "sqlite", Target: p, Shown: s}, nil
	case strings.HasPrefix(s, "file:"):
		p := strings.TrimPrefix(strings.TrimPrefix(s, "file:"), "//")
		if p == "" {
			return bad("no folder after file:")
		}
		return URL{Kind: "file", Target: p, Shown: s}, nil
	}
	if i := strings.Index(s, "://"); i > 0 && !strings.ContainsAny(s[:i], `/\.`) {
		return bad(fmt.Sprintf("unknown scheme %q", s[:i]))
	}
	return URL{Kind: "file", Target: s, Shown: s}, nil
}

// Open opens the store u names. fsOpts apply to a folder store.
func Open(ctx context.Context, u URL, fsOpts ...fs.Option) (store.Backend, error) {
	return open(ctx, u, false, fsOpts)
}

// OpenReader opens the store u names for a command that only reads it
// (status, sessions, export): a SQL store opens as a reader, which takes
// no write lock, writes nothing and creates no database (a writer
// stopped inside a transaction does not block it), and refuses to open a
// session for writing (store.ErrReadOnly; use View). A folder store
// opens as Open does: its sessions' own locks keep readers apart.
func OpenReader(ctx context.Context, u URL, fsOpts ...fs.Option) (store.Backend, error) {
	return open(ctx, u, true, fsOpts)
}

func open(ctx context.Context, u URL, readOnly bool, fsOpts []fs.Option) (store.Backend, error) {
	switch u.Kind {
	case "file":
		return fs.OpenBackend(u.Target, fs.WithStoreOptions(fsOpts...))
	case "sqlite":
		return sqlite.Open(ctx, u.Target, sqlite.Config{ReadOnly: readOnly})
	case "postgres":
		return postgres.Open(ctx, u.Target, postgres.Config{ReadOnly: readOnly})
	}
	return nil, fmt.Errorf("--store %s: unknown kind %q", u.Shown, u.Kind)
}
