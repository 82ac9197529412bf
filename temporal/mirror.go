package refinetemporal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// mirrorBatchBytes bounds one Mirror activity's input, well under
// Temporal's payload limit (2 MiB by default). A local activity's input
// stays in the worker, so the local mirror sends one batch.
const mirrorBatchBytes = 512 << 10

// mirrorMode is how the session's store reaches the worker's mirror.
type mirrorMode int

const (
	// mirrorNone: the session is not mirrored; no Mirror call is made.
	mirrorNone mirrorMode = iota
	// mirrorLocal: a local activity at each rendering, run by the worker
	// inside the workflow task that rendered: a marker in the history, no
	// task of its own.
	mirrorLocal
	// mirrorActivity: the Mirror activity at each rendering, with a
	// mirror or without, as workflows recorded before versionLean do.
	mirrorActivity
)

// mirroredStore is the session's Store inside the workflow: an in-memory
// store (the workflow's history rebuilds it on replay) that, whenever a
// commit writes status.md (once per round, and when a question is asked),
// hands every key changed since the last time to the mirror.
type mirroredStore struct {
	*memory.Store
	session string
	mode    mirrorMode
	changed []string
	seen    map[string]bool
}

func newMirroredStore(session string, mode mirrorMode) *mirroredStore {
	return &mirroredStore{Store: memory.New(), session: session, mode: mode, seen: map[string]bool{}}
}

// Commit applies ops in memory and mirrors the changes at renderings.
func (m *mirroredStore) Commit(ctx context.Context, ops ...store.Op) error {
	if err := m.Store.Commit(ctx, ops...); err != nil {
		return err
	}
	if m.mode == mirrorNone {
		return nil
	}
	rendered := false
	for _, op := range ops {
		if !m.seen[op.Key] {
			m.seen[op.Key] = true
			m.changed = append(m.changed, op.Key)
		}
		rendered = rendered || op.Key == "status.md"
	}
	if rendered {
		return m.flush(ctx)
	}
	return nil
}

// flush sends the changed keys' current values to the mirror, in batches.
func (m *mirroredStore) flush(ctx context.Context) error {
	if m.mode == mirrorNone || len(m.changed) == 0 {
		return nil
	}
	w := workflowOf(ctx)
	limit := mirrorBatchBytes
	if m.mode == mirrorLocal {
		limit = math.MaxInt
	}
	keys := slices.Clone(m.changed)
	slices.Sort(keys)
	req := MirrorRequest{Session: m.session}
	size := 0
	send := func() error {
		if len(req.Puts)+len(req.Deletes) == 0 {
			return nil
		}
		var f workflow.Future
		if m.mode == mirrorLocal {
			f = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(w, localMirrorOptions), activityMirror, req)
		} else {
			f = workflow.ExecuteActivity(workflow.WithActivityOptions(w, mirrorOptions), activityMirror, req)
		}
		if err := f.Get(w, nil); err != nil {
			return fmt.Errorf("mirror %d keys: %w", len(req.Puts)+len(req.Deletes), err)
		}
		req, size = MirrorRequest{Session: m.session}, 0
		return nil
	}
	for _, k := range keys {
		v, err := m.Store.Get(ctx, k)
		switch {
		case errors.Is(err, refine.ErrNotFound):
			req.Deletes = append(req.Deletes, k)
		case err != nil:
			return err
		default:
			if size > 0 && size+len(v) > limit {
				if err := send(); err != nil {
					return err
				}
			}
			req.Puts = append(req.Puts, MirrorEntry{Key: k, Value: v})
			size += len(v)
		}
	}
	if err := send(); err != nil {
		return err
	}
	m.changed, m.seen = m.changed[:0], map[string]bool{}
	return nil
}
