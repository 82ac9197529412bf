package sqlkv

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/refine-spec/refine/store"
)

// Entry is what a commit leaves at one key: deleted, a value the commit
// names whole (Base empty), or the value Base held before the commit (none
// if Base was absent) followed by Value, when the commit appends to a
// stored value or copies one (the database computes it; the commit does
// not send it).
type Entry struct {
	Deleted bool
	Base    string
	Value   []byte
}

// Final is what a commit leaves at each key it touches.
type Final map[string]Entry

// Writes is a commit worked out by Plan.
type Writes struct {
	// Final is the state the commit leaves at each key it touches.
	Final Final
	// Steps are the writes to run, in order: puts, deletes, appends and
	// copies, at most one a key unless a copy reads the key between two of
	// its writes. A put followed by appends is one put of the whole value,
	// a write that a later one replaces unread is dropped. Without copies
	// the steps are independent and sorted by key, so SQL statements run
	// in a stable order; with copies they keep the order of the ops, so a
	// copy reads its source as the ops before it left it.
	Steps []store.Op
	// Need are the keys a copy reads before the commit writes them, which
	// must be stored when the commit starts (sorted); a copy of a missing
	// one fails the commit.
	Need []string
}

// Plan validates ops (an append is valid if appendOK, a copy if copyOK)
// and works out what the commit writes, in order: a copy sees the puts and
// appends of its source before it, an append those of its key. A copy
// whose source an earlier op deleted fails with store.ErrNotFound; an
// invalid op with store.ErrInvalidKey.
func Plan(ops []store.Op, appendOK, copyOK bool) (*Writes, error) {
	if err := store.ValidStoreOps(ops, appendOK, copyOK); err != nil {
		return nil, err
	}
	final := make(Final, len(ops))
	steps := make([]store.Op, 0, len(ops))
	dead := make([]bool, 0, len(ops))
	// open is the index of a key's last step while no copy has read the
	// key since: a later write may drop it (a put, a delete, a copy to the
	// key) or extend it (an append).
	open := map[string]int{}
	need := map[string]bool{}
	copied := false
	write := func(op store.Op) {
		if i, ok := open[op.Key]; ok {
			dead[i] = true
		}
		open[op.Key] = len(steps)
		steps, dead = append(steps, op), append(dead, false)
	}
	for _, op := range ops {
		k := op.Key
		switch op.Kind {
		case store.OpPut:
			v := concat(nil, op.Value)
			final[k] = Entry{Value: v}
			write(store.Put(k, v))
		case store.OpDelete:
			final[k] = Entry{Deleted: true}
			write(store.Delete(k))
		case store.OpAppend:
			e, touched := final[k]
			switch {
			case !touched:
				e = Entry{Base: k, Value: concat(nil, op.Value)}
			case e.Deleted:
				e = Entry{Value: concat(nil, op.Value)}
			default:
				e.Value = concat(e.Value, op.Value)
			}
			final[k] = e
			if i, ok := open[k]; ok {
				switch s := steps[i]; s.Kind {
				case store.OpPut, store.OpAppend:
					steps[i].Value = concat(s.Value, op.Value)
					continue
				case store.OpDelete:
					steps[i] = store.Put(k, concat(nil, op.Value))
					continue
				}
			}
			open[k] = len(steps)
			steps, dead = append(steps, store.Append(k, concat(nil, op.Value))), append(dead, false)
		case store.OpCopy:
			copied = true
			src, touched := final[op.From]
			switch {
			case !touched:
				need[op.From] = true
				src = Entry{Base: op.From}
			case src.Deleted:
				return nil, fmt.Errorf("copy %s to %s: %w: an earlier op of the commit deletes it; nothing was applied", op.From, k, store.ErrNotFound)
			}
			if k == op.From {
				continue // the key keeps its value
			}
			delete(open, op.From) // the copy reads it: its last write stays
			final[k] = src        // values are never changed in place: share it
			write(op)
		}
	}
	w := &Writes{Final: final, Steps: make([]store.Op, 0, len(steps))}
	for i, s := range steps {
		if !dead[i] {
			w.Steps = append(w.Steps, s)
		}
	}
	if !copied {
		slices.SortFunc(w.Steps, func(a, b store.Op) int { return strings.Compare(a.Key, b.Key) })
	}
	for k := range need {
		w.Need = append(w.Need, k)
	}
	sort.Strings(w.Need)
	return w, nil
}

// concat returns a new slice holding a then b, never nil (an empty value
// is not a deletion).
func concat(a, b []byte) []byte {
	v := make([]byte, 0, len(a)+len(b))
	return append(append(v, a...), b...)
}
