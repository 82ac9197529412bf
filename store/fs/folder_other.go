//go:build !linux

package fs

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// folder is an open folder, here an os.Root: each name in it is resolved
// by os.Root, and renames take absolute paths (see folder_linux.go for the
// handle-relative version).
type folder struct {
	root *os.Root
	abs  string     // the folder's absolute path, for renames
	path string     // root-relative, for messages; "." for the session folder
	ops  *opCounter // the Store's
}

// openRootFolder uses the Store's Root for the session folder abs.
func openRootFolder(abs string, root *os.Root, ops *opCounter) (folder, error) {
	return folder{root: root, abs: abs, path: ".", ops: ops}, nil
}

func (f folder) count() {
	if f.ops != nil {
		f.ops.Add(1)
	}
}

func (f folder) rel(name string) string {
	if f.path == "." {
		return name
	}
	return f.path + "/" + name
}

func (f folder) openFolder(name string) (folder, error) {
	f.count()
	fi, err := f.root.Lstat(name)
	switch {
	case err != nil:
		return folder{}, err
	case fi.Mode()&iofs.ModeSymlink != 0:
		return folder{}, &os.PathError{Op: "open", Path: f.rel(name), Err: errLink}
	case !fi.IsDir():
		return folder{}, &os.PathError{Op: "open", Path: f.rel(name), Err: errBlocked}
	}
	r, err := f.root.OpenRoot(name)
	if err != nil {
		return folder{}, err
	}
	return folder{root: r, abs: filepath.Join(f.abs, name), path: f.rel(name), ops: f.ops}, nil
}

func (f folder) mkdir(name string) error { f.count(); return f.root.Mkdir(name, 0o700) }

func (f folder) lstat(name string) (iofs.FileInfo, error) { f.count(); return f.root.Lstat(name) }

func (f folder) openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	f.count()
	return f.root.OpenFile(name, flag|noFollow, perm)
}

func (f folder) remove(name string) error { f.count(); return f.root.Remove(name) }

func (f folder) rmdir(name string) error { f.count(); return f.root.Remove(name) }

// renameTo renames name over to's toName; exchanging is not supported here.
func (f folder) renameTo(name string, to folder, toName string, exchange bool) error {
	f.count()
	if exchange {
		return errors.ErrUnsupported
	}
	return os.Rename(filepath.Join(f.abs, name), filepath.Join(to.abs, toName))
}

func cannotExchange(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL)
}

func (f folder) close() error {
	if f.path == "" || f.path == "." {
		return nil
	}
	return f.root.Close()
}

// sameFile reports whether a and b describe the same file.
func sameFile(a, b iofs.FileInfo) bool { return os.SameFile(a, b) }
