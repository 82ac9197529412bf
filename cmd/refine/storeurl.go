package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/storeurl"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
)

// storeURL is a parsed --store value.
type storeURL = storeurl.URL

// storeForms is the one help text of the --store URL forms.
const storeForms = "file:ROOT (or a folder of session folders), sqlite:PATH or postgres://…"

// storeFlag registers --store, the store a command works on: use says
// what it is for, the URL forms follow.
func storeFlag(fl *flag.FlagSet, def, use string) *string {
	return fl.String("store", def, use+": "+storeForms)
}

// locFlags are the flags that name one session: --dir, or --store with
// --session. dirUse says what --dir is to the command, sessionUse what
// --session is.
type locFlags struct{ dir, store, session string }

func (l *locFlags) register(fl *flag.FlagSet, dirUse, sessionUse string) {
	fl.StringVar(&l.dir, "dir", "", dirUse)
	fl.StringVar(&l.store, "store", "", "store of many sessions (with --session): "+storeForms)
	fl.StringVar(&l.session, "session", "", sessionUse)
}

// missing reports whether neither --dir nor --store was given.
func (l *locFlags) missing() bool { return l.dir == "" && l.store == "" }

// parseStoreURL reads a --store value (see storeurl.Parse).
func parseStoreURL(s string) (storeURL, error) { return storeurl.Parse(s) }

// openBackend opens the store u names.
func (c *cli) openBackend(ctx context.Context, u storeURL) (store.Backend, error) {
	return storeurl.Open(ctx, u, fs.WithLogger(c.storeLogger()))
}

// openExistingReader is openExistingBackend for a command that only
// reads the store (status, sessions, export): a SQL store opens as a
// reader (storeurl.OpenReader), which takes no write lock.
func (c *cli) openExistingReader(ctx context.Context, u storeURL) (store.Backend, error) {
	if err := requireStore(u); err != nil {
		return nil, err
	}
	return storeurl.OpenReader(ctx, u, fs.WithLogger(c.storeLogger()))
}

// sessionLoc says where a command's session lives, for the commands it
// suggests and the folder it names.
type sessionLoc struct {
	dir   string // the session folder; "" for a SQL store
	store string // the --store value as shown; "" with --dir
	id    string // --session
	// live: a run in another process holds the session; a reader
	// (openRead) got a read-only view of it.
	live bool
}

// flags are the flags that name the session on another command line.
func (l sessionLoc) flags() string {
	if l.store == "" {
		return "--dir " + shellQuote(l.dir)
	}
	return "--store " + shellQuote(l.store) + " --session " + shellQuote(l.id)
}

// shellQuote makes s one word for a POSIX shell, for the command lines
// refine suggests: a store URL's "?" and "&" (postgres://…?sslmode=disable)
// or a folder's spaces would otherwise be read by the shell. Plain words
// stay as they are.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// openMode says what a command does with the session it opens.
type openMode int

const (
	openRead   openMode = iota // status, export: a SQL store as a reader; a folder with its write lock if free, else read-only
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
	b store.Backend
}

// Repairs forwards the repairs of the session's Store (store.Repairer).
func (s backendSession) Repairs() ([]refine.Repair, error) {
	if r, ok := s.Store.(store.Repairer); ok {
		return r.Repairs()
	}
	return nil, nil
}

// RepairsRecorded forwards to the session's Store (store.Repairer).
func (s backendSession) RepairsRecorded(ids []string) error {
	if r, ok := s.Store.(store.Repairer); ok {
		return r.RepairsRecorded(ids)
	}
	return nil
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
func (c *cli) openLoc(ctx context.Context, dir, storeArg, id string, mode openMode) (sessionStore, sessionLoc, error) {
	switch {
	case storeArg == "" && id != "":
		return nil, sessionLoc{}, errors.New("--session needs --store URL (with --dir, the folder is the session)")
	case storeArg == "":
		loc := sessionLoc{dir: dir}
		var st *fs.Store
		var err error
		switch mode {
		case openCreate:
			st, err = c.openStore(dir)
		default:
			st, err = c.openSession(dir)
			if mode == openRead && errors.Is(err, refine.ErrLocked) {
				// A run is live: it keeps the folder up to date itself.
				st, err = fs.OpenReadOnly(dir)
				loc.live = err == nil
			}
		}
		if err != nil {
			return nil, loc, err
		}
		return st, loc, nil
	case dir != "":
		return nil, sessionLoc{}, errors.New("use --dir (one session folder) or --store URL --session ID, not both")
	}
	u, err := parseStoreURL(storeArg)
	if err != nil {
		return nil, sessionLoc{}, err
	}
	if id == "" && mode != openCreate {
		return nil, sessionLoc{}, fmt.Errorf("--store %s needs --session ID; refine sessions --store %s lists them", u.Shown, shellQuote(u.Shown))
	}
	if id != "" {
		if err := store.ValidSessionID(id); err != nil {
			return nil, sessionLoc{}, fmt.Errorf("--session: %w", err)
		}
	}
	open := c.openExistingBackend // a session is read: its store exists (#40)
	switch mode {
	case openCreate:
		open = c.openBackend
	case openRead:
		open = c.openExistingReader
	}
	b, err := open(ctx, u)
	if err != nil {
		return nil, sessionLoc{}, err
	}
	st, id, err := openInBackend(ctx, b, id, mode)
	live := false
	if mode == openRead && (errors.Is(err, refine.ErrLocked) || errors.Is(err, refine.ErrReadOnly)) {
		// A run is live, or the store was opened as a reader (SQL): read
		// what has been committed; a reader asks the lease whether a run
		// is live.
		live = errors.Is(err, refine.ErrLocked) || leased(ctx, b, id)
		st, err = b.View(ctx, id)
		live = live && err == nil
	}
	if err != nil {
		b.Close()
		return nil, sessionLoc{}, err
	}
	loc := sessionLoc{store: u.Shown, id: id, live: live}
	if u.Kind == "file" {
		loc.dir = filepath.Join(u.Target, id)
	}
	return backendSession{Store: st, b: b}, loc, nil
}

// leased reports whether a writer holds a live lease on session id of b
// (a SQL store, read without taking any lock).
func leased(ctx context.Context, b store.Backend, id string) bool {
	lh, ok := b.(interface {
		LeaseHolder(ctx context.Context, id string) (string, error)
	})
	if !ok {
		return false
	}
	holder, err := lh.LeaseHolder(ctx, id)
	return err == nil && holder != ""
}

func openInBackend(ctx context.Context, b store.Backend, id string, mode openMode) (refine.Store, string, error) {
	switch mode {
	case openCreate:
		if id == "" {
			id, st, err := b.Create(ctx)
			return st, id, err
		}
		st, err := b.Session(ctx, id)
		if errors.Is(err, refine.ErrNotFound) {
			nc, ok := b.(store.NamedCreator)
			if !ok {
				return nil, "", fmt.Errorf("session %s does not exist and this store cannot create a chosen ID; leave out --session", id)
			}
			st, err = nc.CreateNamed(ctx, id)
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
	return fmt.Errorf("session %s in %s %w: start one with refine run --store %s --session %s", l.id, l.store, errNoSessionDir, shellQuote(l.store), shellQuote(l.id))
}

// inspect reads the status of the session at l, saying which command
// starts one when there is none.
func (l sessionLoc) inspect(ctx context.Context, st refine.Store) (refine.Status, error) {
	status, err := refine.Inspect(ctx, st)
	if errors.Is(err, refine.ErrNoSession) {
		return status, l.noSession()
	}
	return l.named(status), err
}

// named gives st the ID its store knows the session by: a session
// imported into a store (or exported from one) keeps in its state the ID
// it was started with, the source folder's name, which no command takes
// (#40).
func (l sessionLoc) named(st refine.Status) refine.Status {
	if l.store != "" && l.id != "" {
		st.SessionID = l.id
	}
	return st
}
