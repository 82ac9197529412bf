package gap

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/internal/scaling"
)

// ledgerGaps are n gaps with distinct IDs, 999 to an area.
func ledgerGaps(n int) []Gap {
	gs := make([]Gap, n)
	for i := range gs {
		a := i / 999
		gs[i] = Gap{ID: ID(fmt.Sprintf("GAP-L%c%c-%03d", 'A'+a/26, 'A'+a%26, i%999+1)), Title: "t"}
	}
	return gs
}

// Adding a long gap list grows linearly with it (issue #24: each Add
// scanned the ledger for a duplicate, so a session's setup took n² time).
func TestLedgerAddAllScalesLinearly(t *testing.T) {
	scaling.Linear(t, "ledger AddAll", 2000, 16, ledgerGaps, func(gs []Gap) {
		var l Ledger
		if err := l.AddAll(gs); err != nil {
			t.Fatal(err)
		}
	})
}

// AddAll adds as Add does, and refuses what Add refuses, leaving the
// ledger unchanged.
func TestLedgerAddAll(t *testing.T) {
	gs := ledgerGaps(6)
	var one, all Ledger
	for _, g := range gs {
		if err := one.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	if err := all.AddAll(gs[:3]); err != nil {
		t.Fatal(err)
	}
	if err := all.AddAll(gs[3:]); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(one, all); diff != "" {
		t.Errorf("AddAll differs from Add (-Add +AddAll):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		add  []Gap
		want error
	}{
		{"duplicate of the ledger", []Gap{{ID: "GAP-NEW-001", Title: "n"}, gs[2]}, ErrDuplicateGap},
		{"duplicate in the list", []Gap{{ID: "GAP-NEW-001", Title: "n"}, {ID: "GAP-NEW-001", Title: "n"}}, ErrDuplicateGap},
		{"bad ID", []Gap{{ID: "GAP-NEW-001", Title: "n"}, {ID: "nope", Title: "n"}}, nil},
		{"bad severity", []Gap{{ID: "GAP-NEW-001", Title: "n"}, {ID: "GAP-NEW-002", Severity: 99}}, nil},
	} {
		before := *all.Clone()
		err := all.AddAll(tc.add)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want an error (%v)", tc.name, err, tc.want)
		}
		if diff := cmp.Diff(before, all); diff != "" {
			t.Errorf("%s: the refused AddAll changed the ledger:\n%s", tc.name, diff)
		}
	}
}
