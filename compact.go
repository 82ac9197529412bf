package refine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/core/statedoc"
	"github.com/refine-spec/refine/store"
)

// Compact rewrites the session in st so that it stands on its own: the
// journal is folded into one whole state.json, every state backup that
// refers to the journal becomes a whole state, and the journal and the
// older snapshots are deleted, in one commit. `refine export` does this to
// the folder it writes; a host may do it before archiving a session. No
// session may be running on st meanwhile. The session opens and resumes as
// before; later durable points journal again.
func Compact(ctx context.Context, st Store) error {
	ls, err := loadState(ctx, st)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	keys, err := st.List(ctx, "")
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	var ops []store.Op
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, statedoc.JournalPrefix), strings.HasPrefix(k, statedoc.SnapshotPrefix):
			ops = append(ops, store.Delete(k))
		case strings.HasPrefix(k, "state_backup_round_"):
			b, err := st.Get(ctx, k)
			if err != nil {
				return fmt.Errorf("compact: read %s: %w", k, err)
			}
			if _, isRef := statedoc.ParseBackupRef(b); isRef {
				whole, err := statedoc.ResolveBackup(bind(ctx, st), k, b)
				if err != nil {
					return fmt.Errorf("compact: %s: %w", k, err)
				}
				ops = append(ops, store.Put(k, statedoc.SealDoc(bytes.TrimSuffix(whole, []byte("\n")))))
			}
		}
	}
	ls.st.JournalSeq = ls.j.Seq
	doc, err := json.Marshal(ls.st)
	if err != nil {
		return fmt.Errorf("compact: encode state: %w", err)
	}
	ops = append(ops, store.Put(state.KeyState, statedoc.SealDoc(doc)))
	if err := st.Commit(ctx, ops...); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}
