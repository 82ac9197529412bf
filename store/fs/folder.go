package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"strings"
	"sync/atomic"
)

// Folders. Every file operation on a key goes through an open handle of
// the folder the key is in (a folder, see folder_linux.go), named relative
// to it: one system call a lookup, a write or a rename, where resolving
// the key's path from the session folder again (as os.Root does, opening
// and closing each folder on the way) took two or three a path component.
// The handles of one operation (a Get, a commit's checks, an apply) are
// opened once each by a folders and closed when the operation ends, so
// nothing outlives it: a folder that another process removes or renames
// between two operations is looked up afresh by the next, exactly as a
// path would be. Only the session folder and the log folder, the store's
// own, stay open as long as the Store. A folder is opened without
// following a link, each from its parent's handle, so a link planted on
// the way to a key is found as it always was.

// opCounter counts the file operations made through a Store's folder
// handles (lookups, opens, creates, renames, removals), for the tests
// that bound them per commit. It is cheap enough to count always.
type opCounter = atomic.Int64

// folders holds the folders one operation opened, by root-relative path
// ("." is the session folder, which it does not own). Not safe for
// concurrent use: each operation makes its own.
type folders struct {
	root    folder
	open    map[string]folder
	missing map[string]error // folders found missing, and how
}

// folders starts an operation's folder handles; close them when it ends.
func (s *Store) folders() *folders {
	return &folders{root: s.rootDir}
}

// close closes the folders the operation opened.
func (fs *folders) close() {
	for _, f := range fs.open {
		f.close()
	}
	fs.open = nil
}

// errBlocked: something that is not a folder is where a folder of the key
// would be.
var errBlocked = errors.New("not a folder")

// get returns the open folder at rel (root-relative, slash-separated),
// opening it and its parents as needed; with create, it creates the
// folders that are missing (mode 0700). An error wraps iofs.ErrNotExist
// if rel is not there (and create is false), errBlocked (naming in
// blocker the first of rel's folders that is something else) if a file
// is on the way, or errLink if a link is.
func (fs *folders) get(rel string, create bool) (f folder, blocker string, err error) {
	if rel == "." || rel == "" {
		return fs.root, "", nil
	}
	if f, ok := fs.open[rel]; ok {
		return f, "", nil
	}
	missing, known := fs.missing[rel]
	if known && !create {
		return folder{}, "", missing
	}
	parentPath, name := path.Split(rel)
	parentPath = strings.TrimSuffix(parentPath, "/")
	parent, blocker, err := fs.get(parentPath, create)
	if err != nil {
		return folder{}, blocker, err
	}
	if known {
		err = missing // found missing earlier in the operation: create it
	} else {
		f, err = parent.openFolder(name)
	}
	if create && isNotExist(err) {
		err = parent.mkdir(name)
		if err == nil || errors.Is(err, iofs.ErrExist) { // created meanwhile: open what is there
			f, err = parent.openFolder(name)
		}
	}
	switch {
	case err == nil:
		delete(fs.missing, rel)
	case isNotExist(err):
		if fs.missing == nil {
			fs.missing = map[string]error{}
		}
		fs.missing[rel] = err
		return folder{}, "", err
	case errors.Is(err, errLink):
		return folder{}, rel, linkError(rel)
	case errors.Is(err, errBlocked):
		return folder{}, rel, fmt.Errorf("%s is a file, so it cannot be a folder: %w", rel, errBlocked)
	default:
		return folder{}, "", err
	}
	if fs.open == nil {
		fs.open = map[string]folder{}
	}
	fs.open[rel] = f
	return f, "", nil
}

// forget closes the handles of rel and of every folder below it, after
// the operation removed rel.
func (fs *folders) forget(rel string) {
	for p, f := range fs.open {
		if p == rel || strings.HasPrefix(p, rel+"/") {
			f.close()
			delete(fs.open, p)
		}
	}
}

// keyFolder returns the open folder key is in and key's name in it, as
// get does.
func (fs *folders) keyFolder(key string, create bool) (f folder, name, blocker string, err error) {
	dir, name := path.Split(key)
	f, blocker, err = fs.get(strings.TrimSuffix(dir, "/"), create)
	return f, name, blocker, err
}

// lstatKey looks at key without following links, through fs. It returns
// key's FileInfo (nil if absent), or the first folder of key's that exists
// but is not a folder (blocker), or an error wrapping errLink if one of
// its folders is a link.
func (fs *folders) lstatKey(key string) (fi iofs.FileInfo, blocker string, err error) {
	f, name, blocker, err := fs.keyFolder(key, false)
	switch {
	case isNotExist(err):
		return nil, "", nil
	case errors.Is(err, errBlocked):
		return nil, blocker, nil
	case err != nil:
		return nil, blocker, err
	}
	fi, err = f.lstat(name)
	if isNotExist(err) {
		return nil, "", nil
	}
	return fi, "", err
}

// walBase returns the name in the log folder of rel, a root-relative path
// in it (as walPath makes).
func walBase(rel string) string {
	return strings.TrimPrefix(strings.ReplaceAll(rel, "\\", "/"), walName+"/")
}

// count counts one file operation made through the folder's handle.
func (f folder) count() {
	if f.ops != nil {
		f.ops.Add(1)
	}
}

// rel is name's path relative to the session folder.
func (f folder) rel(name string) string {
	if f.path == "." {
		return name
	}
	return f.path + "/" + name
}
