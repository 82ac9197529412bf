package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/refine-spec/refine/store/fs"
)

// storeLogger shows on stderr what the session store's recovery found and
// did when it opened a folder a crash left: commits redone from the log,
// files discarded, anything it could not clean up. A clean open says
// nothing. (slog's text form quotes values, so no file name can carry
// terminal escapes through it.)
func (c *cli) storeLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{
		Level: slog.LevelInfo,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{} // a one-shot command's lines need no timestamp
			}
			return a
		},
	}))
}

// openStore opens dir for writing, creating it if needed, and redoes what
// a crash left in its log.
func (c *cli) openStore(dir string) (*fs.Store, error) {
	return fs.Open(dir, fs.WithLogger(c.storeLogger()))
}

// errNoSessionDir: the folder holds no session, so nothing was opened.
var errNoSessionDir = errors.New("holds no session")

// openSession opens the existing session folder dir for cmd. It opens the
// store for writing first, which redoes commits a crash left in the log
// (a session's first commit may be there and nowhere else), and only then
// can anyone tell whether dir holds a session. A folder with neither
// state.json nor the store's log holds none and is left untouched. When
// another process holds the folder it fails with refine.ErrLocked (a
// reader then opens it read-only: openLoc).
func (c *cli) openSession(dir string) (*fs.Store, error) {
	if err := checkSessionDir(dir); err != nil {
		return nil, err
	}
	return c.openStore(dir)
}

// checkSessionDir fails unless dir is a folder that may hold a session:
// one with state.json or the store's log. It creates nothing.
func checkSessionDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w; check the session folder's path", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder; pass the session folder", dir)
	}
	hasLog, err := fs.HasLog(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json")); err != nil && !hasLog {
		return noSession(dir)
	}
	return nil
}

func noSession(dir string) error {
	return fmt.Errorf("%s %w: start one with refine run --dir %s", dir, errNoSessionDir, shellQuote(dir))
}
