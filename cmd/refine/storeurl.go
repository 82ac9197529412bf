package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/postgres"
	"github.com/refine-spec/refine/store/sqlite"
)

// storeURL is a parsed --store value: where many sessions live.
type storeURL struct {
	kind string // "file", "sqlite" or "postgres"
	// target is the root folder (file), the database file (sqlite) or the
	// connection URL (postgres).
	target string
	raw    string // as given, for messages (password removed)
}

// parseStoreURL reads a --store value: file:ROOT or a plain path (a
// folder of session folders), sqlite:PATH, or postgres://… (also
// postgresql://…).
func parseStoreURL(s string) (storeURL, error) {
	bad := func(why string) (storeURL, error) {
		return storeURL{}, fmt.Errorf("--store %q: %s; want file:ROOT, a folder path, sqlite:PATH or postgres://…", s, why)
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
			return storeURL{}, fmt.Errorf("--store %q: not a valid URL (percent-encode a password holding '#', '?', '/' or ':'); want postgres://USER@HOST/DB with the password in PGPASSWORD", scheme+"://"+rest)
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
		return storeURL{kind: "postgres", target: s, raw: shown}, nil
	case strings.HasPrefix(s, "sqlite:"):
		p := strings.TrimPrefix(strings.TrimPrefix(s, "sqlite:"), "//")
		if p == "" {
			return bad("no database file after sqlite:")
		}
		if strings.ContainsAny(p, "?#") {
			return bad("the database path has '?' or '#'")
		}
		return storeURL{kind: "sqlite", target: p, raw: s}, nil
	case strings.HasPrefix(s, "file:"):
		p := strings.TrimPrefix(strings.TrimPrefix(s, "file:"), "//")
		if p == "" {
			return bad("no folder after file:")
		}
		return storeURL{kind: "file", target: p, raw: s}, nil
	}
	if i := strings.Index(s, "://"); i > 0 && !strings.ContainsAny(s[:i], `/\.`) {
		return bad(fmt.Sprintf("unknown scheme %q", s[:i]))
	}
	return storeURL{kind: "file", target: s, raw: s}, nil
}

// openBackend opens the store u names.
func (c *cli) openBackend(ctx context.Context, u storeURL) (refine.Backend, error) {
	switch u.kind {
	case "file":
		return fs.OpenBackend(u.target, fs.WithStoreOptions(fs.WithLogger(c.storeLogger())))
	case "sqlite":
		return sqlite.Open(ctx, u.target, sqlite.Config{})
	case "postgres":
		return postgres.Open(ctx, u.target, postgres.Config{})
	}
	return nil, fmt.Errorf("--store %s: unknown kind %q", u.raw, u.kind)
}

// sessionLoc says where a command's session lives, for the commands it
// suggests and the folder it names.
type sessionLoc struct {
	dir   string // the session folder; "" for a SQL store
	store string // the --store value as shown; "" with --dir
	id    string // --session
}

// flags are the flags that name the session on another command line.
func (l sessionLoc) flags() string {
	if l.store == "" {
		return "--dir " + l.dir
	}
	return "--store " + l.store + " --session " + l.id
}

// openMode says what a command does with the session it opens.
type openMode int

const (
	openRead   openMode = iota // status: write lock if free, else read-only
	openWrite                  // resume, rollback: an existing session, locked
	openCreate                 // run: a new session (or an empty named one)
)

// sessionStore is a session opened for a command; Close releases the
// session and the backend it came from.
type sessionStore interface {
	refine.Store
	Close() error
}

type backendSession struct {
	refine.Store
	b refine.Backend
}

func (s backendSession) Close() error {
	var errs []error
	if c, ok := s.Store.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	errs = append(errs, s.b.Close())
	return errors.Join(errs...)
}

// openLoc opens the session a command names: --dir D (one session folder)
// or --store URL with --session ID. run may leave --session out to create
// a session, whose ID it prints.
func (c *cli) openLoc(ctx context.Context, dir, store, id string, mode openMode) (sessionStore, sessionLoc, error) {
	switch {
	case store == "" && id != "":
		return nil, sessionLoc{}, errors.New("--session needs --store URL (with --dir, the folder is the session)")
	case store == "":
		loc := sessionLoc{dir: dir}
		var st *fs.Store
		var err error
		switch mode {
		case openCreate:
			st, err = c.openStore(dir)
		default:
			st, err = c.openSession(dir, mode == openRead)
		}
		if err != nil {
			return nil, loc, err
		}
		return st, loc, nil
	case dir != "":
		return nil, sessionLoc{}, errors.New("use --dir (one session folder) or --store URL --session ID, not both")
	}
	u, err := parseStoreURL(store)
	if err != nil {
		return nil, sessionLoc{}, err
	}
	if id == "" && mode != openCreate {
		return nil, sessionLoc{}, fmt.Errorf("--store %s needs --session ID; refine sessions --store %s lists them", u.raw, u.raw)
	}
	if id != "" {
		if err := refine.ValidSessionID(id); err != nil {
			return nil, sessionLoc{}, fmt.Errorf("--session: %w", err)
		}
	}
	b, err := c.openBackend(ctx, u)
	if err != nil {
		return nil, sessionLoc{}, err
	}
	st, id, err := openInBackend(ctx, b, id, mode)
	if err != nil {
		b.Close()
		return nil, sessionLoc{}, err
	}
	loc := sessionLoc{store: u.raw, id: id}
	if u.kind == "file" {
		loc.dir = filepath.Join(u.target, id)
	}
	return backendSession{Store: st, b: b}, loc, nil
}

func openInBackend(ctx context.Context, b refine.Backend, id string, mode openMode) (refine.Store, string, error) {
	switch mode {
	case openCreate:
		if id == "" {
			id, st, err := b.Create(ctx)
			return st, id, err
		}
		st, err := b.Session(ctx, id)
		if errors.Is(err, refine.ErrNotFound) {
			nc, ok := b.(refine.NamedCreator)
			if !ok {
				return nil, "", fmt.Errorf("session %s does not exist and this store cannot create a chosen ID; leave out --session", id)
			}
			st, err = nc.CreateNamed(ctx, id)
		}
		return st, id, err
	case openRead:
		st, err := b.Session(ctx, id)
		if errors.Is(err, refine.ErrLocked) {
			st, err = b.View(ctx, id) // a run is live: read what it has committed
		}
		return st, id, err
	}
	st, err := b.Session(ctx, id)
	return st, id, err
}

// noSession says the location holds no session and how to start one.
func (l sessionLoc) noSession() error {
	if l.store == "" {
		return noSession(l.dir)
	}
	return fmt.Errorf("session %s in %s %w: start one with refine run --store %s --session %s", l.id, l.store, errNoSessionDir, l.store, l.id)
}

// inspect reads the status of the session at l, saying which command
// starts one when there is none.
func (l sessionLoc) inspect(ctx context.Context, st refine.Store) (refine.Status, error) {
	status, err := refine.Inspect(ctx, st)
	if errors.Is(err, refine.ErrNoSession) {
		return status, l.noSession()
	}
	return status, err
}
