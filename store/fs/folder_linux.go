//go:build linux

package fs

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// folder is an open folder: a file descriptor, so that each operation on
// a name in it is one system call relative to it (openat, fstatat,
// mkdirat, unlinkat, renameat2), with no path to resolve.
type folder struct {
	fd   int
	path string     // root-relative, for messages; "." for the session folder
	ops  *opCounter // the Store's
}

// openRootFolder opens the session folder abs.
func openRootFolder(abs string, _ *os.Root, ops *opCounter) (folder, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return folder{}, &os.PathError{Op: "open", Path: abs, Err: err}
	}
	return folder{fd: fd, path: ".", ops: ops}, nil
}

// retry calls fn until it is not interrupted.
func retry[T any](fn func() (T, error)) (T, error) {
	for {
		v, err := fn()
		if err != unix.EINTR {
			return v, err
		}
	}
}

func (f folder) pathErr(op, name string, err error) error {
	return &os.PathError{Op: op, Path: filepath.FromSlash(f.rel(name)), Err: err}
}

// openFolder opens the folder name, without following a link: an error
// wraps errLink if name is a link, errBlocked if it is something else
// that is not a folder, iofs.ErrNotExist if it is not there.
func (f folder) openFolder(name string) (folder, error) {
	f.count()
	fd, err := retry(func() (int, error) {
		return unix.Openat(f.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err == nil {
		return folder{fd: fd, path: f.rel(name), ops: f.ops}, nil
	}
	if err == unix.ENOTDIR || err == unix.ELOOP {
		// Tell a link from a file.
		if fi, lerr := f.lstat(name); lerr == nil && fi.Mode()&iofs.ModeSymlink != 0 {
			return folder{}, f.pathErr("open", name, errLink)
		}
		return folder{}, f.pathErr("open", name, errBlocked)
	}
	return folder{}, f.pathErr("open", name, err)
}

// mkdir creates the folder name, mode 0700.
func (f folder) mkdir(name string) error {
	f.count()
	if _, err := retry(func() (struct{}, error) { return struct{}{}, unix.Mkdirat(f.fd, name, 0o700) }); err != nil {
		return f.pathErr("mkdir", name, err)
	}
	return nil
}

// lstat returns name's FileInfo, not following a link.
func (f folder) lstat(name string) (iofs.FileInfo, error) {
	f.count()
	var st unix.Stat_t
	if _, err := retry(func() (struct{}, error) {
		return struct{}{}, unix.Fstatat(f.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}); err != nil {
		return nil, f.pathErr("lstat", name, err)
	}
	return newFileInfo(name, &st), nil
}

// openFile opens the file name; flag always includes O_NOFOLLOW.
func (f folder) openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	f.count()
	fd, err := retry(func() (int, error) {
		return unix.Openat(f.fd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err != nil {
		return nil, f.pathErr("open", name, err)
	}
	return os.NewFile(uintptr(fd), filepath.FromSlash(f.rel(name))), nil
}

// remove removes the file (or link) name.
func (f folder) remove(name string) error {
	f.count()
	if _, err := retry(func() (struct{}, error) { return struct{}{}, unix.Unlinkat(f.fd, name, 0) }); err != nil {
		return f.pathErr("remove", name, err)
	}
	return nil
}

// rmdir removes the empty folder name.
func (f folder) rmdir(name string) error {
	f.count()
	if _, err := retry(func() (struct{}, error) { return struct{}{}, unix.Unlinkat(f.fd, name, unix.AT_REMOVEDIR) }); err != nil {
		return f.pathErr("remove", name, err)
	}
	return nil
}

// renameTo moves name to to's toName, replacing what is there; with
// exchange, it swaps the two instead, atomically (renameat2
// RENAME_EXCHANGE), and fails if toName is missing or the file system
// cannot swap.
func (f folder) renameTo(name string, to folder, toName string, exchange bool) error {
	f.count()
	var flags uint
	if exchange {
		flags = unix.RENAME_EXCHANGE
	}
	_, err := retry(func() (struct{}, error) { return struct{}{}, unix.Renameat2(f.fd, name, to.fd, toName, flags) })
	if err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.FromSlash(f.rel(name)), New: filepath.FromSlash(to.rel(toName)), Err: err}
	}
	return nil
}

// canExchange reports whether err, from renameTo with exchange, says the
// file system cannot swap files, so renaming is all there is.
func cannotExchange(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL)
}

func (f folder) close() error {
	if f.path == "" {
		return nil
	}
	return unix.Close(f.fd)
}

// fileInfo is a FileInfo from fstatat. Sys returns a *syscall.Stat_t, as
// os's does.
type fileInfo struct {
	name string
	st   syscall.Stat_t
}

func newFileInfo(name string, st *unix.Stat_t) *fileInfo {
	return &fileInfo{name: name, st: syscall.Stat_t{
		Dev: st.Dev, Ino: st.Ino, Nlink: st.Nlink, Mode: st.Mode, Uid: st.Uid, Gid: st.Gid, Rdev: st.Rdev,
		Size: st.Size, Blksize: st.Blksize, Blocks: st.Blocks,
		Mtim: syscall.Timespec{Sec: st.Mtim.Sec, Nsec: st.Mtim.Nsec},
	}}
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Sec, fi.st.Mtim.Nsec) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }

// Mode is the mode as os reports it.
func (fi *fileInfo) Mode() iofs.FileMode {
	m := iofs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= iofs.ModeDevice
	case syscall.S_IFCHR:
		m |= iofs.ModeDevice | iofs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= iofs.ModeDir
	case syscall.S_IFIFO:
		m |= iofs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= iofs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= iofs.ModeSocket
	}
	if fi.st.Mode&syscall.S_ISGID != 0 {
		m |= iofs.ModeSetgid
	}
	if fi.st.Mode&syscall.S_ISUID != 0 {
		m |= iofs.ModeSetuid
	}
	if fi.st.Mode&syscall.S_ISVTX != 0 {
		m |= iofs.ModeSticky
	}
	return m
}

// sameFile reports whether a and b describe the same file.
func sameFile(a, b iofs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// The three file operations of the commit path (creating a temporary
// file, rewriting a spare, reading a key) work on the raw descriptor: an
// os.File would cost a fcntl each to ask whether the descriptor is
// non-blocking.

// create creates the file name (mode 0600, failing if something is there)
// holding data.
func (f folder) create(name string, data []byte) error {
	f.count()
	fd, err := retry(func() (int, error) {
		return unix.Openat(f.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return f.pathErr("open", name, err)
	}
	err = pwriteAll(fd, data)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return f.pathErr("write", name, err)
	}
	return nil
}

// rewrite writes data over the file name from its start, and cuts it to
// len(data), if reusable accepts it and an exclusive flock on it can be
// had without waiting; otherwise it leaves the file alone and returns an
// error wrapping errNotSpare.
func (f folder) rewrite(name string, data []byte, reusable func(iofs.FileInfo) bool) error {
	f.count()
	fd, err := retry(func() (int, error) {
		return unix.Openat(f.fd, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return fmt.Errorf("%w: %v", errNotSpare, f.pathErr("open", name, err))
	}
	defer unix.Close(fd) // releases the flock
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || !reusable(newFileInfo(name, &st)) {
		return errNotSpare
	}
	if _, err := retry(func() (struct{}, error) { return struct{}{}, unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) }); err != nil {
		return errNotSpare
	}
	err = pwriteAll(fd, data)
	if err == nil && st.Size > int64(len(data)) {
		_, err = retry(func() (struct{}, error) { return struct{}{}, unix.Ftruncate(fd, int64(len(data))) })
	}
	if err != nil {
		return f.pathErr("write", name, err)
	}
	return nil
}

// read returns the contents of the file name, opened without following a
// link, if it is the file want describes; otherwise an error wrapping
// errChanged.
func (f folder) read(name string, want iofs.FileInfo) ([]byte, error) {
	f.count()
	fd, err := retry(func() (int, error) {
		return unix.Openat(f.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		if err == unix.ENOENT || err == unix.ELOOP || err == unix.ENOTDIR {
			return nil, errChanged
		}
		return nil, f.pathErr("open", name, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, f.pathErr("stat", name, err)
	}
	if !sameFile(want, newFileInfo(name, &st)) {
		return nil, fmt.Errorf("%s %w", f.rel(name), errChanged)
	}
	b := make([]byte, st.Size)
	for off := 0; off < len(b); {
		n, err := retry(func() (int, error) { return unix.Pread(fd, b[off:], int64(off)) })
		switch {
		case err != nil:
			return nil, f.pathErr("read", name, err)
		case n == 0:
			return nil, f.pathErr("read", name, io.ErrUnexpectedEOF)
		}
		off += n
	}
	return b, nil
}

// pwriteAll writes data at the start of fd.
func pwriteAll(fd int, data []byte) error {
	for off := 0; off < len(data); {
		n, err := retry(func() (int, error) { return unix.Pwrite(fd, data[off:], int64(off)) })
		if err != nil {
			return err
		}
		off += n
	}
	return nil
}
