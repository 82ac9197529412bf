package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/store/sqlite"
)

// StoreKind names where a session lives.
type StoreKind string

// The stores the simulator moves sessions between.
const (
	Memory StoreKind = "memory"
	FS     StoreKind = "fs"
	SQLite StoreKind = "sqlite"
)

// place is where one branch's session lives; open hands out a handle as
// a new process would get it, closing the previous one.
type place struct {
	kind StoreKind
	mem  *memory.Store
	dir  string
	db   *sqlite.DB
	id   string
	cur  refine.Store
}

// newPlace makes an empty store of kind; fs and sqlite live under dir.
func newPlace(ctx context.Context, kind StoreKind, dir string, n int) (*place, error) {
	p := &place{kind: kind}
	switch kind {
	case Memory:
		p.mem = memory.New()
	case FS:
		p.dir = filepath.Join(dir, fmt.Sprintf("fs-%d", n))
	case SQLite:
		db, err := sqlite.Open(ctx, filepath.Join(dir, fmt.Sprintf("db-%d.sqlite", n)), sqlite.Config{Heartbeat: -1})
		if err != nil {
			return nil, err
		}
		p.db, p.id = db, fmt.Sprintf("sim-%d", n)
		st, err := db.CreateNamed(ctx, p.id)
		if err != nil {
			db.Close()
			return nil, err
		}
		if err := closeStore(st); err != nil {
			db.Close()
			return nil, err
		}
	default:
		return nil, fmt.Errorf("sim: unknown store kind %q", kind)
	}
	return p, nil
}

// open closes the current handle, if any, and opens the store again, as
// another process would.
func (p *place) open(ctx context.Context) (refine.Store, error) {
	if p.kind == Memory {
		return p.mem, nil
	}
	if err := p.closeHandle(); err != nil {
		return nil, err
	}
	var err error
	switch p.kind {
	case FS:
		p.cur, err = fs.Open(p.dir, fs.NoSync())
	case SQLite:
		p.cur, err = p.db.Session(ctx, p.id)
	}
	return p.cur, err
}

func (p *place) closeHandle() error {
	if p.cur == nil {
		return nil
	}
	err := closeStore(p.cur)
	p.cur = nil
	return err
}

// close releases everything the place holds.
func (p *place) close() error {
	err := p.closeHandle()
	if p.db != nil {
		err = errors.Join(err, p.db.Close())
		p.db = nil
	}
	return err
}

func closeStore(st refine.Store) error {
	if c, ok := st.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// copyKeys copies every key of src into dst in one commit, as `refine
// export` and `refine import` do (cmd/refine/export.go: the CLI's copy is
// not a library function, so it is replicated here key for key).
func copyKeys(ctx context.Context, src, dst refine.Store) error {
	keys, err := src.List(ctx, "")
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	ops := make([]store.Op, 0, len(keys))
	for _, k := range keys {
		v, err := src.Get(ctx, k)
		if err != nil {
			return fmt.Errorf("get %s: %w", k, err)
		}
		ops = append(ops, store.Put(k, v))
	}
	return dst.Commit(ctx, ops...)
}

// exportTo writes src as `refine export` does: a copy of every key, then
// refine.Compact on the copy.
func exportTo(ctx context.Context, src, folder refine.Store) error {
	if err := copyKeys(ctx, src, folder); err != nil {
		return fmt.Errorf("export: copy: %w", err)
	}
	if err := refine.Compact(ctx, folder); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// snapshotStore copies st into a new memory store (no Compact): a fork of
// the session for a probe or a twin.
func snapshotStore(ctx context.Context, st refine.Store) (*memory.Store, error) {
	m := memory.New()
	if err := copyKeys(ctx, st, m); err != nil {
		return nil, fmt.Errorf("fork the store: %w", err)
	}
	return m, nil
}

// dump reads every key of st.
func dump(ctx context.Context, st refine.Store) (map[string]string, error) {
	keys, err := st.List(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		v, err := st.Get(ctx, k)
		if err != nil {
			return nil, err
		}
		out[k] = string(v)
	}
	return out, nil
}

// diffDumps names the keys that differ between a and b, at most limit.
func diffDumps(a, b map[string]string, limit int) []string {
	var keys []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			keys = append(keys, "-"+k)
		} else if w != v {
			keys = append(keys, "~"+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, "+"+k)
		}
	}
	sort.Strings(keys)
	if len(keys) > limit {
		keys = append(keys[:limit], fmt.Sprintf("… %d more", len(keys)-limit))
	}
	return keys
}

// statusDoc is `refine status --json` of the session in st, times aside.
func statusDoc(ctx context.Context, st refine.Store) (string, error) {
	s, err := refine.Inspect(ctx, st)
	if err != nil {
		return "", err
	}
	return statusDocOf(s), nil
}

func statusDocOf(s refine.Status) string {
	doc := statusjson.From(s)
	for i := range doc.Gaps {
		for j := range doc.Gaps[i].History {
			doc.Gaps[i].History[j].At = ""
		}
	}
	for i := range doc.Rollbacks {
		doc.Rollbacks[i].At = ""
	}
	b, _ := json.MarshalIndent(doc, "", " ")
	return string(b)
}

// tempDir makes a folder for a seed's fs and sqlite stores.
func tempDir(parent string, seed uint64) (string, error) {
	return os.MkdirTemp(parent, fmt.Sprintf("sim-%d-", seed))
}

func newMem() *memory.Store { return memory.New() }

// dumpCompacted reads st as `refine export` would write it: compacted
// (one whole state.json, whole backups, no journal).
func dumpCompacted(ctx context.Context, st refine.Store) (map[string]string, error) {
	m := memory.New()
	if err := exportTo(ctx, st, m); err != nil {
		return nil, err
	}
	return dump(ctx, m)
}
