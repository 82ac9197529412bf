package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/refine-spec/refine/store"
	storefs "github.com/refine-spec/refine/store/fs"
)

// errNoStore: a command that reads sessions was given a store that does
// not exist. It is refused rather than created empty: a mistyped
// `--store sqlite:typo.db` or `--store ./sesions` would otherwise show an
// empty list and leave a new database or folder behind (#40).
var errNoStore = errors.New("does not exist")

// requireStore refuses a store that is not there yet: a folder store's
// root, a SQLite database file. A PostgreSQL server is asked when the
// store opens. Checked in the CLI, before anything is opened, so that the
// stores themselves may still create what a writer asks for.
func requireStore(u storeURL) error {
	var what string
	switch u.Kind {
	case "file":
		what = "folder"
	case "sqlite":
		what = "database file"
	default:
		return nil
	}
	fi, err := os.Stat(u.Target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--store %s: the %s %s %w; check the path (refine run --store %s creates a store with its first session)", u.Shown, what, u.Target, errNoStore, shellQuote(u.Shown))
	case err != nil:
		return fmt.Errorf("--store %s: %w", u.Shown, err)
	case u.Kind == "file" && !fi.IsDir():
		return fmt.Errorf("--store %s: %s is not a folder; give the folder that holds the session folders", u.Shown, u.Target)
	case u.Kind == "sqlite" && fi.IsDir():
		return fmt.Errorf("--store %s: %s is a folder; give the SQLite database file", u.Shown, u.Target)
	}
	return nil
}

// openExistingBackend opens the store u names for a command that reads
// its sessions (serve, sessions, status, export, resume): refused when it
// does not exist.
func (c *cli) openExistingBackend(ctx context.Context, u storeURL) (store.Backend, error) {
	if err := requireStore(u); err != nil {
		return nil, err
	}
	return c.openBackend(ctx, u)
}

// refuseUsedDir refuses to start a session in a folder that holds one
// (state.json, or the log of a session's first commit), before anything
// is opened: the library's ErrSessionExists speaks of its Open.
func refuseUsedDir(dir string) error {
	hasLog, err := storefs.HasLog(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, serr := os.Stat(filepath.Join(dir, "state.json")); serr == nil || hasLog {
		return fmt.Errorf("%s already holds a session: continue it with refine resume --dir %s, or give another --dir", dir, shellQuote(dir))
	}
	return nil
}

// describe names the location for messages: the folder, or the session
// in its store.
func (l sessionLoc) describe() string {
	if l.store == "" {
		return l.dir
	}
	return "session " + l.id + " in " + l.store
}
