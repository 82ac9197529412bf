package core

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/store"
)

// ReadyWrites are the writes of the Ready being decided: the decisions'
// commits are not made but kept, in order, for the driver to commit as
// Ready.Persist; the decisions read the session through it (a view),
// seeing their own writes over the session's Store, which they read
// through the view the driver binds (base) and never write. It accepts
// what the session's Store accepts (appends, copies), so the ops it keeps
// are ones that Store takes as they are.
type ReadyWrites struct {
	// Base is the session's Store as the driver binds it for a Handle.
	Base View
	// ColdBase is Config.ColdStore as the driver binds it (nil: none).
	ColdBase view
	// appendOK and copyOK are the session Store's capabilities.
	appendOK, copyOK bool
	Ops              []store.Op
	// Cold are the writes to Config.ColdStore (Ready.Cold).
	Cold []store.Op
	// values holds the keys the kept ops changed.
	values  map[string]stagedKey
	Commits int
	// kept holds a copy of each op's value in test binaries (see
	// unchanged): the ops keep the committers' slices, which must not be
	// written again.
	kept    [][]byte
	guarded bool
	// next is Commit's scratch map (the keys one commit changes),
	// reused from commit to commit.
	next map[string]stagedKey
}

// stagedKey is a key as the kept ops leave it: deleted, or a value, or (a key
// only appended to) a suffix to the Store's value, which is not read
// unless the key is.
type stagedKey struct {
	v        []byte
	deleted  bool
	overBase bool
}

// newReadyWrites returns the writes of a new Ready over a Store with
// caps (which say which ops it accepts).
func newReadyWrites(caps StoreCaps, check bool) *ReadyWrites {
	return &ReadyWrites{appendOK: caps.Appends, copyOK: caps.Copies, values: map[string]stagedKey{}, guarded: check}
}

// guard keeps a copy of ops' values in test binaries, for unchanged.
func (st *ReadyWrites) guard(ops []store.Op) {
	if !st.guarded {
		return
	}
	for _, op := range ops {
		st.kept = append(st.kept, slices.Clone(op.Value))
	}
}

// Unchanged reports an op whose value was written after its commit: the
// writes keep the slices they are given (copying every value cost a tenth
// of a short session's allocations), so a committer that reuses a buffer
// would change a write already decided. Test binaries check it at every
// decide.
func (st *ReadyWrites) Unchanged() error {
	if !st.guarded {
		return nil
	}
	for i, v := range st.kept {
		if op := st.Ops[i]; !bytes.Equal(op.Value, v) {
			return fmt.Errorf("refine: internal error: the value of the op on %s was written after its commit", op.Key)
		}
	}
	return nil
}

// Appends forwards the session Store's Appender capability.
func (st *ReadyWrites) Appends() bool { return st.appendOK }

// Copies forwards the session Store's Copier capability.
func (st *ReadyWrites) Copies() bool { return st.copyOK }

// Get returns key's value as the kept commits leave it.
func (st *ReadyWrites) Get(key string) ([]byte, error) {
	if v, ok := st.values[key]; ok {
		return st.value(key, v)
	}
	return st.Base.Get(key)
}

// value is the value of key, stagedKey as v.
func (st *ReadyWrites) value(key string, v stagedKey) ([]byte, error) {
	switch {
	case v.deleted:
		return nil, fmt.Errorf("get %s: %w", key, store.ErrNotFound)
	case v.overBase:
		b, err := st.Base.Get(key)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return append(b, v.v...), nil
	}
	return slices.Clone(v.v), nil
}

// List lists the keys as the kept commits leave them.
func (st *ReadyWrites) List(prefix string) ([]string, error) {
	keys, err := st.Base.List(prefix)
	if err != nil {
		return nil, err
	}
	keys = slices.DeleteFunc(keys, func(k string) bool {
		v, changed := st.values[k]
		return changed && v.deleted
	})
	for k, v := range st.values {
		if !v.deleted && strings.HasPrefix(k, prefix) && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Keep keeps ops, all or nothing, as the session's Store would apply
// them: the decisions' commit.
func (st *ReadyWrites) Keep(ops ...store.Op) error {
	if err := store.ValidStoreOps(ops, st.Appends(), st.Copies()); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	// The values are kept as they are: a committer does not write a
	// slice it committed again (checked by unchanged).
	if st.next == nil {
		st.next = map[string]stagedKey{}
	}
	next := st.next
	clear(next)
	current := func(key string) (stagedKey, bool) {
		if v, ok := next[key]; ok {
			return v, true
		}
		v, ok := st.values[key]
		return v, ok
	}
	for _, op := range ops {
		switch op.Kind {
		case store.OpPut:
			next[op.Key] = stagedKey{v: op.Value}
		case store.OpDelete:
			next[op.Key] = stagedKey{deleted: true}
		case store.OpAppend:
			cur, ok := current(op.Key)
			switch {
			case !ok:
				next[op.Key] = stagedKey{v: op.Value, overBase: true}
			case cur.deleted:
				next[op.Key] = stagedKey{v: op.Value}
			default:
				next[op.Key] = stagedKey{v: append(slices.Clip(cur.v), op.Value...), overBase: cur.overBase}
			}
		case store.OpCopy:
			var v []byte
			var err error
			if cur, ok := current(op.From); ok {
				v, err = st.value(op.From, cur)
			} else {
				v, err = st.Base.Get(op.From)
			}
			if err != nil {
				return fmt.Errorf("commit: copy %s to %s: %w", op.From, op.Key, err)
			}
			next[op.Key] = stagedKey{v: v}
		}
	}
	for k, v := range next {
		st.values[k] = v
	}
	st.Ops = append(st.Ops, ops...)
	st.guard(ops)
	st.Commits++
	return nil
}

// CompactOps returns ops with what a later op of the same commit makes
// moot left out: a Put or Append superseded by a later Put or Delete of
// its key (unless a Copy reads the key in between), and runs of Appends to
// one key joined into one. Committed as one atomic Commit, the result
// leaves every key as ops would, with fewer writes.
func CompactOps(ops []store.Op) []store.Op {
	if len(ops) < 2 {
		return ops
	}
	keep := make([]bool, len(ops))
	// Backwards: a key is overwritten from here on until a Copy reads it.
	overwritten := map[string]bool{}
	for i := len(ops) - 1; i >= 0; i-- {
		op := ops[i]
		switch op.Kind {
		case store.OpPut, store.OpDelete:
			keep[i] = !overwritten[op.Key]
			overwritten[op.Key] = true
		case store.OpAppend:
			keep[i] = !overwritten[op.Key]
		case store.OpCopy:
			keep[i] = !overwritten[op.Key]
			overwritten[op.Key] = true
			delete(overwritten, op.From) // the copy reads From as it is here
		}
	}
	out := make([]store.Op, 0, len(ops))
	// lastAppend is, for each key, the index in out of an Append that no
	// later kept op of that key (nor a Copy from it) has followed yet.
	lastAppend := map[string]int{}
	for i, op := range ops {
		if !keep[i] {
			continue
		}
		switch op.Kind {
		case store.OpAppend:
			if j, ok := lastAppend[op.Key]; ok {
				out[j].Value = append(slices.Clip(out[j].Value), op.Value...)
				continue
			}
			lastAppend[op.Key] = len(out)
		case store.OpCopy:
			delete(lastAppend, op.Key)
			delete(lastAppend, op.From)
		default:
			delete(lastAppend, op.Key)
		}
		out = append(out, op)
	}
	return out
}
