package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// coldRoot does the file work of cold storage under its root folder
// without following any symbolic link below it: a link planted in the cold
// root (the workflow folder, a session folder, cleanup_log.txt) could
// otherwise make a move write archives elsewhere, the log append to
// another file, or --expire delete a file outside the root. Every path is
// relative to the root and opened through an os.Root, which cannot leave
// it; each component is also checked not to be a link, since os.Root
// would follow one that stays inside. The root folder itself is the
// user's choice and may be a link.
type coldRoot struct {
	dir  string
	root *os.Root
}

// maxManifestBytes bounds manifest.json: 64 MiB holds several hundred
// thousand archive entries.
const maxManifestBytes = 64 << 20

// openColdRoot opens (creating it if needed, mode 0700) the cold-storage
// root dir.
func openColdRoot(dir string) (*coldRoot, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cold storage: %w", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cold storage: %w", err)
	}
	return &coldRoot{dir: dir, root: r}, nil
}

func (c *coldRoot) Close() error { return c.root.Close() }

// rel turns a path under the root (as rollback.ColdPlan returns them) into
// one relative to it.
func (c *coldRoot) rel(path string) (string, error) {
	rel, err := filepath.Rel(c.dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("cold storage: %s is not below the cold-storage root %s", path, c.dir)
	}
	return rel, nil
}

// noLinks fails if rel or any folder on the way to it is a symbolic link
// (or, for the folders, not a folder). A missing component ends the check:
// nothing below it exists yet.
func (c *coldRoot) noLinks(rel string) error {
	parts := strings.Split(rel, string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		fi, err := c.root.Lstat(p)
		switch {
		case errors.Is(err, iofs.ErrNotExist):
			return nil
		case err != nil:
			return fmt.Errorf("cold storage: %w", err)
		case fi.Mode()&iofs.ModeSymlink != 0:
			return fmt.Errorf("cold storage: %s is a symbolic link, and refine follows no link under the cold-storage root; remove it (nothing was written)", filepath.Join(c.dir, p))
		case i < len(parts)-1 && !fi.IsDir():
			return fmt.Errorf("cold storage: %s is not a folder; remove it", filepath.Join(c.dir, p))
		}
	}
	return nil
}

// readFile reads rel, or returns an error wrapping iofs.ErrNotExist.
func (c *coldRoot) readFile(rel string) ([]byte, error) {
	if err := c.noLinks(rel); err != nil {
		return nil, err
	}
	f, err := c.root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cold storage: %s is not a regular file", filepath.Join(c.dir, rel))
	}
	return readLimited(filepath.Join(c.dir, rel), f, maxManifestBytes)
}

// writeDurable writes rel atomically (temporary file, fsync, rename over
// rel, which replaces a link rather than following it), mode 0600,
// creating its folders (0700).
func (c *coldRoot) writeDurable(rel string, data []byte) error {
	dir := filepath.Dir(rel)
	if err := c.noLinks(rel); err != nil {
		return err
	}
	if dir != "." {
		if err := c.root.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("cold storage: %w", err)
		}
		if err := c.noLinks(dir); err != nil { // raced in meanwhile?
			return err
		}
	}
	temp := filepath.Join(dir, ".tmp-"+filepath.Base(rel))
	_ = c.root.Remove(temp) // a failed attempt's leftover
	f, err := c.root.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("cold storage: %w", err)
	}
	defer c.root.Remove(temp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.root.Rename(temp, rel)
	}
	if err != nil {
		return fmt.Errorf("cold storage: write %s: %w", filepath.Join(c.dir, rel), err)
	}
	return nil
}

// appendText appends text to the regular file rel, creating it (0600).
func (c *coldRoot) appendText(rel, text string) error {
	if err := c.noLinks(rel); err != nil {
		return err
	}
	f, err := c.root.OpenFile(rel, os.O_APPEND|os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("cold storage: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("cold storage: %s is not a regular file", filepath.Join(c.dir, rel))
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// remove deletes the file rel (a link there is removed itself, never its
// target); a missing file is not an error.
func (c *coldRoot) remove(rel string) error {
	if err := c.noLinks(filepath.Dir(rel)); err != nil {
		return err
	}
	if err := c.root.Remove(rel); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("cold storage: %w", err)
	}
	return nil
}
