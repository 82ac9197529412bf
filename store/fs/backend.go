package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/refine-spec/refine/internal/sessionid"
	"github.com/refine-spec/refine/internal/summary"
	"github.com/refine-spec/refine/store"
)

// Backend is a store.Backend over a root folder: each subfolder is a
// session folder (as Open keeps it) and its name is the session's ID. A
// session's writer holds the folder's lock, so one writer per session is
// enforced across processes on the host; within the process the Backend
// also remembers its own writers, to name them when refusing another.
type Backend struct {
	root  string
	store []Option
	ids   func() string

	mu      sync.Mutex
	writers map[string]*backendStore // session ID -> this process's writer
	opened  int                      // writers opened so far, to name them
	closed  bool
}

var (
	_ store.Backend      = (*Backend)(nil)
	_ store.NamedCreator = (*Backend)(nil)
)

// BackendOption configures OpenBackend.
type BackendOption func(*Backend)

// WithStoreOptions sets the Options every session's Store is opened with
// (NoSync for tests, WithLogger).
func WithStoreOptions(opts ...Option) BackendOption {
	return func(b *Backend) { b.store = append(b.store, opts...) }
}

// WithIDs sets the function Create takes new session IDs from; each must
// pass store.ValidSessionID. The default is the current time and random
// digits ("20250301-141502-3fa9c1").
func WithIDs(next func() string) BackendOption {
	return func(b *Backend) { b.ids = next }
}

// deletingPrefix names a session folder being deleted: Delete renames it
// first, so the session disappears at once and a crash leaves a folder
// that Sessions skips (its name is not a valid session ID).
const deletingPrefix = ".refine-deleting-"

// OpenBackend opens root as a Backend, creating the folder (mode 0700) if
// it does not exist.
func OpenBackend(root string, opts ...BackendOption) (*Backend, error) {
	abs, err := absDir(root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("fs: open backend %s: %w", abs, err)
	}
	b := &Backend{root: abs, writers: make(map[string]*backendStore)}
	for _, o := range opts {
		o(b)
	}
	if b.ids == nil {
		b.ids = sessionid.Generator{}.New
	}
	return b, nil
}

// Root returns the absolute path of the root folder.
func (b *Backend) Root() string { return b.root }

// Dir returns the session folder of id (which need not exist).
func (b *Backend) Dir(id string) string { return filepath.Join(b.root, id) }

// Create makes a new session folder under a fresh ID and returns its
// writer.
func (b *Backend) Create(ctx context.Context) (string, store.Store, error) {
	for range 10 {
		id := b.ids()
		st, err := b.CreateNamed(ctx, id)
		if errors.Is(err, store.ErrSessionExists) {
			continue // an ID function that repeats itself; try another
		}
		return id, st, err
	}
	return "", nil, fmt.Errorf("fs: create in %s: the ID function returned taken IDs 10 times in a row: %w", b.root, store.ErrSessionExists)
}

// CreateNamed makes the session folder id and returns its writer. An
// existing folder fails with an error wrapping store.ErrSessionExists.
func (b *Backend) CreateNamed(ctx context.Context, id string) (store.Store, error) {
	if err := b.check(ctx, "create", id); err != nil {
		return nil, err
	}
	dir := b.Dir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, iofs.ErrExist) {
			return nil, fmt.Errorf("fs: create %s: %w; pick another ID, or open the existing session (Backend.Open)", dir, store.ErrSessionExists)
		}
		return nil, fmt.Errorf("fs: create %s: %w", dir, err)
	}
	return b.open(id)
}

// Session opens session id for writing: Open on its folder. It fails with
// store.ErrNotFound if the folder does not exist and store.ErrLocked
// while another writer, in this process or another, has it.
func (b *Backend) Session(ctx context.Context, id string) (store.Store, error) {
	if err := b.check(ctx, "session", id); err != nil {
		return nil, err
	}
	if err := b.exists("session", id); err != nil {
		return nil, err
	}
	return b.open(id)
}

func (b *Backend) open(id string) (store.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, b.errClosed("session " + id)
	}
	if w, ok := b.writers[id]; ok {
		return nil, fmt.Errorf("fs: session %s: %w: held by %s; close that writer first, or use View to read", b.Dir(id), store.ErrLocked, w.holder)
	}
	st, err := Open(b.Dir(id), b.store...)
	if err != nil {
		return nil, err // names the holding process when it is another
	}
	b.opened++
	h := fmt.Sprintf("writer %d of process %d (opened %s)", b.opened, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	w := &backendStore{Store: st, b: b, id: id, holder: h}
	b.writers[id] = w
	return w, nil
}

// writer returns this process's writer of session id, or nil. Its
// commits reach the files in the background (see applier.go), so the
// Backend's own readers consult it for the ones not there yet.
func (b *Backend) writer(id string) *Store {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.writers[id]; w != nil {
		return w.Store
	}
	return nil
}

// View opens session id for reading with OpenReadOnly: it takes no lock,
// and Commit fails with store.ErrReadOnly. While this process also has
// the session's writer, the view sees every commit the writer has
// returned, including those still on their way to the files.
func (b *Backend) View(ctx context.Context, id string) (store.Store, error) {
	if err := b.check(ctx, "view", id); err != nil {
		return nil, err
	}
	if err := b.exists("view", id); err != nil {
		return nil, err
	}
	st, err := OpenReadOnly(b.Dir(id))
	if err != nil {
		return nil, err
	}
	st.live = func() *Store { return b.writer(id) }
	return &viewStore{st}, nil
}

// Sessions lists the session folders, newest activity first, reading only
// each one's summary record (session.json). A folder without one is listed
// with its modification time as created and updated, and an empty
// outcome.
func (b *Backend) Sessions(ctx context.Context) ([]store.SessionInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fs: sessions in %s: %w", b.root, err)
	}
	entries, err := os.ReadDir(b.root)
	if err != nil {
		return nil, fmt.Errorf("fs: sessions in %s: %w", b.root, err)
	}
	infos := make([]store.SessionInfo, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() || store.ValidSessionID(e.Name()) != nil || strings.HasPrefix(e.Name(), ".") {
			continue // files, links and folders that cannot be sessions
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("fs: sessions in %s: %w", b.root, err)
		}
		fi, err := e.Info()
		if errors.Is(err, iofs.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("fs: sessions in %s: %w", b.root, err)
		}
		raw, err := b.summary(e.Name())
		if err != nil {
			return nil, fmt.Errorf("fs: sessions in %s: %w", b.root, err)
		}
		infos = append(infos, summary.Info(e.Name(), raw, fi.ModTime(), fi.ModTime()))
	}
	summary.Sort(infos)
	return infos, nil
}

// summary returns session id's summary record: from its writer in this
// process if a commit not yet in the files changed it, else from the
// file. It asks the writer first: a value that leaves the overlay is in
// the file by then.
func (b *Backend) summary(id string) ([]byte, error) {
	if w := b.writer(id); w != nil {
		if p, ok := w.pendingValue(store.SummaryKey); ok {
			if p.del {
				return nil, nil
			}
			return p.value, nil
		}
	}
	return readSummary(filepath.Join(b.root, id))
}

// readSummary reads dir's summary record without following a link; nil
// when there is none.
func readSummary(dir string) ([]byte, error) {
	p := filepath.Join(dir, store.SummaryKey)
	fi, err := os.Lstat(p)
	if errors.Is(err, iofs.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(p)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	}
	return raw, err
}

// Delete removes session id's folder. It takes the session's lock first,
// so it fails with store.ErrLocked while a writer has it, then renames the
// folder out of the listing and removes it.
func (b *Backend) Delete(ctx context.Context, id string) error {
	if err := b.check(ctx, "delete", id); err != nil {
		return err
	}
	if err := b.exists("delete", id); err != nil {
		return err
	}
	st, err := b.open(id)
	if err != nil {
		return err
	}
	w := st.(*backendStore)
	// A fresh name: os.Rename refuses to replace a folder, so reserve the
	// name with MkdirTemp and free it just before the rename.
	doomed, err := os.MkdirTemp(b.root, deletingPrefix+id+"-")
	if err == nil {
		if err = os.Remove(doomed); err == nil {
			err = os.Rename(b.Dir(id), doomed)
		}
	}
	cerr := w.Close() // the renamed folder is still the Store's root
	if err != nil {
		return fmt.Errorf("fs: delete %s: %w", b.Dir(id), err)
	}
	if err := os.RemoveAll(doomed); err != nil {
		return fmt.Errorf("fs: delete %s: the session is gone but %s is left: %w; remove it by hand", b.Dir(id), doomed, err)
	}
	_ = cerr // the checkpoint of a folder being deleted does not matter
	return nil
}

// Close marks the Backend closed; Stores already handed out keep working
// until they are closed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

func (b *Backend) check(ctx context.Context, op, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fs: %s %s: %w", op, id, err)
	}
	if err := store.ValidSessionID(id); err != nil {
		return fmt.Errorf("fs: %s in %s: %w", op, b.root, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.errClosed(op + " " + id)
	}
	return nil
}

func (b *Backend) exists(op, id string) error {
	fi, err := os.Lstat(b.Dir(id))
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return fmt.Errorf("fs: %s %s: %w: no such session folder; refine sessions --store %s lists them", op, b.Dir(id), store.ErrNotFound, b.root)
	case err != nil:
		return fmt.Errorf("fs: %s %s: %w", op, b.Dir(id), err)
	case !fi.IsDir():
		return fmt.Errorf("fs: %s %s: %w: not a folder, so not a session", op, b.Dir(id), store.ErrNotFound)
	}
	return nil
}

func (b *Backend) errClosed(op string) error {
	return fmt.Errorf("fs: %s in %s: the backend is closed", op, b.root)
}

// backendStore is a session's writer: Close also forgets the holder.
type backendStore struct {
	*Store
	b      *Backend
	id     string
	holder string
	once   sync.Once
}

func (s *backendStore) Close() error {
	err := s.Store.Close()
	s.once.Do(func() {
		s.b.mu.Lock()
		if s.b.writers[s.id] == s {
			delete(s.b.writers, s.id)
		}
		s.b.mu.Unlock()
	})
	return err
}

// viewStore is a read-only session whose Commit error wraps
// store.ErrReadOnly.
type viewStore struct{ *Store }

func (v *viewStore) Commit(ctx context.Context, ops ...store.Op) error {
	return fmt.Errorf("fs: commit to %s: %w: opened for reading; open the session for writing to change it", v.Dir(), store.ErrReadOnly)
}
