package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/refine-spec/refine/internal/sessionid"
	"github.com/refine-spec/refine/internal/summary"
	"github.com/refine-spec/refine/store"
)

// Backend is a store.Backend holding many in-memory Stores, for tests
// and for hosts whose sessions need not outlive the process. One writer
// per session is enforced within the process: a second Session call for a
// session whose writer is still open fails with store.ErrLocked naming
// that writer. The zero value is not usable; call NewBackend.
type Backend struct {
	now func() time.Time
	ids func() string

	mu       sync.Mutex
	sessions map[string]*entry
	writers  int // writers handed out so far, to name each holder
	closed   bool
}

type entry struct {
	store            *Store
	holder           string // "" when no writer has the session
	created, updated time.Time
}

var (
	_ store.Backend      = (*Backend)(nil)
	_ store.NamedCreator = (*Backend)(nil)
)

// BackendOption configures NewBackend.
type BackendOption func(*Backend)

// WithClock sets the clock a session's created and last-commit times come
// from, for sessions that have no summary record. The default is
// time.Now.
func WithClock(now func() time.Time) BackendOption {
	return func(b *Backend) { b.now = now }
}

// WithIDs sets the function Create takes new session IDs from; each must
// pass store.ValidSessionID. The default is the current time and random
// digits ("20250301-141502-3fa9c1").
func WithIDs(next func() string) BackendOption {
	return func(b *Backend) { b.ids = next }
}

// NewBackend returns an empty Backend.
func NewBackend(opts ...BackendOption) *Backend {
	b := &Backend{now: time.Now, sessions: make(map[string]*entry)}
	for _, o := range opts {
		o(b)
	}
	if b.ids == nil {
		b.ids = sessionid.Generator{Now: b.now}.New
	}
	return b
}

// Create starts a new, empty session with a fresh ID and returns its
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
	return "", nil, fmt.Errorf("memory: create: the ID function returned taken IDs 10 times in a row: %w", store.ErrSessionExists)
}

// CreateNamed starts a new, empty session under id and returns its writer.
// An id that exists fails with an error wrapping store.ErrSessionExists.
func (b *Backend) CreateNamed(ctx context.Context, id string) (store.Store, error) {
	if err := b.check(ctx, "create", id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosed("create " + id)
	}
	if _, ok := b.sessions[id]; ok {
		return nil, fmt.Errorf("memory: create %s: %w; pick another ID or open it with Session", id, store.ErrSessionExists)
	}
	now := b.now()
	e := &entry{store: New(), created: now, updated: now}
	b.sessions[id] = e
	return b.lockLocked(id, e), nil
}

// Session opens session id for writing. It fails with store.ErrNotFound
// for an unknown id and store.ErrLocked while another writer has it.
func (b *Backend) Session(ctx context.Context, id string) (store.Store, error) {
	if err := b.check(ctx, "session", id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e, err := b.lookupLocked("session", id)
	if err != nil {
		return nil, err
	}
	if e.holder != "" {
		return nil, fmt.Errorf("memory: session %s: %w: held by %s; close that writer first, or use View to read", id, store.ErrLocked, e.holder)
	}
	return b.lockLocked(id, e), nil
}

// View opens session id for reading; Commit fails with store.ErrReadOnly.
// It does not take the writer's place, so it works while a writer has the
// session.
func (b *Backend) View(ctx context.Context, id string) (store.Store, error) {
	if err := b.check(ctx, "view", id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e, err := b.lookupLocked("view", id)
	if err != nil {
		return nil, err
	}
	return &handle{b: b, id: id, e: e, readOnly: true}, nil
}

// Sessions lists every session, newest activity first. A session without
// a summary record is listed with the time it was created and last
// committed to, and an empty outcome.
func (b *Backend) Sessions(ctx context.Context) ([]store.SessionInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: sessions: %w", err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errClosed("sessions")
	}
	type row struct {
		id string
		e  entry
	}
	rows := make([]row, 0, len(b.sessions))
	for id, e := range b.sessions {
		rows = append(rows, row{id, *e})
	}
	b.mu.Unlock()
	infos := make([]store.SessionInfo, 0, len(rows))
	for _, r := range rows {
		raw, err := r.e.store.Get(ctx, store.SummaryKey)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("memory: sessions: %s: %w", r.id, err)
		}
		infos = append(infos, summary.Info(r.id, raw, r.e.created, r.e.updated))
	}
	summary.Sort(infos)
	return infos, nil
}

// Delete removes session id. It fails with store.ErrLocked while a writer
// has the session and store.ErrNotFound for an unknown id. Views already
// open keep reading what the session held.
func (b *Backend) Delete(ctx context.Context, id string) error {
	if err := b.check(ctx, "delete", id); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e, err := b.lookupLocked("delete", id)
	if err != nil {
		return err
	}
	if e.holder != "" {
		return fmt.Errorf("memory: delete %s: %w: held by %s; close that writer first", id, store.ErrLocked, e.holder)
	}
	delete(b.sessions, id)
	return nil
}

// Close drops every session. Stores handed out keep working on their own
// data, but the Backend refuses every call after Close.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.sessions = nil
	return nil
}

func (b *Backend) check(ctx context.Context, op, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: %s %s: %w", op, id, err)
	}
	if err := store.ValidSessionID(id); err != nil {
		return fmt.Errorf("memory: %s: %w", op, err)
	}
	return nil
}

// lookupLocked finds session id; b.mu must be held.
func (b *Backend) lookupLocked(op, id string) (*entry, error) {
	if b.closed {
		return nil, errClosed(op + " " + id)
	}
	e, ok := b.sessions[id]
	if !ok {
		return nil, fmt.Errorf("memory: %s %s: %w: no such session; refine sessions lists them", op, id, store.ErrNotFound)
	}
	return e, nil
}

// lockLocked makes e's writer; b.mu must be held.
func (b *Backend) lockLocked(id string, e *entry) *handle {
	b.writers++
	e.holder = fmt.Sprintf("writer %d of process %d (opened %s)", b.writers, os.Getpid(), b.now().UTC().Format(time.RFC3339))
	return &handle{b: b, id: id, e: e, holder: e.holder}
}

func errClosed(op string) error {
	return fmt.Errorf("memory: %s: the backend is closed", op)
}

// handle is a session's writer or a view of it.
type handle struct {
	b        *Backend
	id       string
	e        *entry
	holder   string // the writer's name; "" for a view
	readOnly bool

	mu     sync.RWMutex
	closed bool
}

var (
	_ store.Store = (*handle)(nil)
	_ io.Closer   = (*handle)(nil)
)

func (h *handle) usable(op string) error {
	if h.closed {
		return fmt.Errorf("memory: %s: the store of session %s is closed; open the session again", op, h.id)
	}
	return nil
}

func (h *handle) Get(ctx context.Context, key string) ([]byte, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.usable("get " + key); err != nil {
		return nil, err
	}
	return h.e.store.Get(ctx, key)
}

func (h *handle) List(ctx context.Context, prefix string) ([]string, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.usable("list " + prefix); err != nil {
		return nil, err
	}
	return h.e.store.List(ctx, prefix)
}

func (h *handle) Commit(ctx context.Context, ops ...store.Op) error {
	if h.readOnly {
		return fmt.Errorf("memory: commit to session %s: %w: opened with View; open it with Session to write", h.id, store.ErrReadOnly)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.usable("commit"); err != nil {
		return err
	}
	if err := h.e.store.Commit(ctx, ops...); err != nil {
		return err
	}
	h.b.mu.Lock()
	h.e.updated = h.b.now()
	h.b.mu.Unlock()
	return nil
}

// Appends reports whether Commit accepts OpAppend: a writer does.
func (h *handle) Appends() bool { return !h.readOnly }

// Copies reports whether Commit accepts OpCopy: a writer does.
func (h *handle) Copies() bool { return !h.readOnly }

// Close releases the writer's hold on the session (a view holds nothing).
// It is idempotent.
func (h *handle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	if h.holder != "" {
		h.b.mu.Lock()
		if h.e.holder == h.holder {
			h.e.holder = ""
		}
		h.b.mu.Unlock()
	}
	return nil
}
