//go:build !linux

package fs

import (
	"errors"
	"fmt"
	"io"
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

// create creates the file name (mode 0600, failing if something is there)
// holding data.
func (f folder) create(name string, data []byte) error {
	file, err := f.openFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if len(data) > 0 {
		_, err = file.Write(data)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// rewrite writes data over the file name, if reusable accepts it and it
// can be locked (see spares.go; never here, where there are no spares).
func (f folder) rewrite(name string, data []byte, reusable func(iofs.FileInfo) bool) error {
	file, err := f.openFile(name, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotSpare, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !reusable(fi) || !lockSpare(file) {
		return errNotSpare
	}
	if _, err := file.WriteAt(data, 0); err != nil {
		return err
	}
	if fi.Size() > int64(len(data)) {
		return file.Truncate(int64(len(data)))
	}
	return nil
}

// read returns the contents of the file name if it is the file want
// describes; otherwise an error wrapping errChanged.
func (f folder) read(name string, want iofs.FileInfo) ([]byte, error) {
	file, err := f.openFile(name, os.O_RDONLY, 0)
	if err != nil {
		if isNotExist(err) {
			return nil, errChanged
		}
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !sameFile(want, st) {
		return nil, fmt.Errorf("%s %w", f.rel(name), errChanged)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(file, b); err != nil {
		return nil, err
	}
	return b, nil
}
