package refine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/core/statedoc"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// putOnly hides a Store's Appender capability: the journal rewrites
// segments and snapshots whole.
type putOnly struct{ Store }

// The journal, driven without a session, stores a state that grows past
// its rotation threshold so that the state reads back as it was last
// committed, and every round's state backup reads back as the state was
// when it was taken, with or without an appending Store. With one, the
// snapshot is written in the background; without, state.json is rewritten.
func TestStateJournalWithoutSession(t *testing.T) {
	for _, tc := range []struct {
		name    string
		store   Store
		snapKey string // where the last snapshot is
	}{
		{"appends", memory.New(), statedoc.SnapshotPrefix},
		{"puts", putOnly{memory.New()}, state.KeyState},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := &state.State{Schema: state.SchemaVersion, SessionID: "journal-only"}
			j := statedoc.NewJournal(appends(tc.store))
			backedUp := map[int]int{} // round -> adjustments then
			round := 0
			for i := 1; i <= 400; i++ {
				var pending []store.Op
				if i%60 == 0 {
					round++
					ops, err := j.StateBackupOps(st, round)
					if err != nil {
						t.Fatal(err)
					}
					pending, backedUp[round] = ops, len(st.Adjustments)
				}
				st.Adjustments = append(st.Adjustments, fmt.Sprintf("%d %s", i, strings.Repeat("x", 1000)))
				ops, err := j.CommitOps(statedoc.StoreView{Store: bind(ctx, tc.store), Pending: pending}, st, pending)
				if err != nil {
					t.Fatal(err)
				}
				if err := tc.store.Commit(ctx, append(pending, ops...)...); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.HasPrefix(j.SnapKey, tc.snapKey) || j.SnapSeq <= 1 {
				t.Errorf("last snapshot %s at record %d, want a new one under %q", j.SnapKey, j.SnapSeq, tc.snapKey)
			}
			ls, err := loadState(ctx, tc.store)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(st.Adjustments, ls.st.Adjustments); diff != "" || ls.j.Seq != j.Seq {
				t.Errorf("loaded record %d (want %d), adjustments -want +got:\n%s", ls.j.Seq, j.Seq, diff)
			}
			for r, want := range backedUp {
				b, err := statedoc.ReadStateBackup(statedoc.StoreView{Store: bind(ctx, tc.store)}, r)
				if err != nil {
					t.Fatalf("backup of round %d: %v", r, err)
				}
				old, err := state.ParseState(b)
				if err != nil {
					t.Fatal(err)
				}
				if len(old.Adjustments) != want {
					t.Errorf("backup of round %d holds %d adjustments, want %d", r, len(old.Adjustments), want)
				}
			}
		})
	}
}
