package gap

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

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

// Adding n gaps, then looking each up, grows linearly with n (issue #24:
// every Add scanned the ledger, so a long gap list set up in n² time).
func TestLedgerScalesLinearly(t *testing.T) {
	scaling.Linear(t, "ledger add and lookup", 2000, 16, ledgerGaps, func(gs []Gap) {
		var l Ledger
		for _, g := range gs {
			if err := l.Add(g); err != nil {
				t.Fatal(err)
			}
		}
		for _, g := range gs {
			if !l.Has(g.ID) {
				t.Fatalf("%s missing", g.ID)
			}
		}
	})
}

// Lookups stay right however Gaps was set: decoded, appended to, renamed
// in place, or shared with a copy that added its own gaps.
func TestLedgerIndexStaysRight(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gs := ledgerGaps(50)
	var l Ledger
	for _, g := range gs[:40] {
		if err := l.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Add(gs[3]); err == nil {
		t.Errorf("a duplicate was added")
	}

	// A copy shares the index; its Adds are not found in the original.
	c := l
	if err := c.Add(gs[40]); err != nil {
		t.Fatal(err)
	}
	if l.Has(gs[40].ID) || !c.Has(gs[40].ID) || !c.Has(gs[0].ID) {
		t.Errorf("after the copy's Add: lookups wrong")
	}
	// (The copy's Gaps may share the original's array, as any slice
	// copy does: it is not looked at after the original's Add.)
	if err := l.Add(gs[41]); err != nil {
		t.Fatal(err)
	}
	if !l.Has(gs[41].ID) || !l.Has(gs[0].ID) || l.Has(gs[40].ID) {
		t.Errorf("after the original's Add: lookups wrong")
	}

	// Decoded from JSON: right before and after Reindex.
	b, _ := json.Marshal(&l)
	var d Ledger
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, reindex := range []bool{false, true} {
		if reindex {
			d.Reindex()
		}
		if g, ok := d.Get(gs[41].ID); !ok || g.ID != gs[41].ID || d.Has(gs[45].ID) {
			t.Errorf("decoded ledger (reindexed %v): lookups wrong", reindex)
		}
	}

	// Appended to behind its back: found; renamed in place: found after Reindex.
	d.Gaps = append(d.Gaps, gs[45])
	if !d.Has(gs[45].ID) {
		t.Errorf("a gap appended to Gaps directly is not found")
	}
	d.Gaps[0].ID = gs[46].ID
	d.Reindex()
	if !d.Has(gs[46].ID) || d.Has(gs[0].ID) {
		t.Errorf("after a rename and Reindex: lookups wrong")
	}
	if err := d.Transition(gs[46].ID, InProgress, 1, at, "r"); err != nil {
		t.Errorf("transition of the renamed gap: %v", err)
	}

	// A clone is indexed and independent.
	cl := l.Clone()
	if err := cl.Add(gs[47]); err != nil || l.Has(gs[47].ID) || !cl.Has(gs[47].ID) {
		t.Errorf("clone: %v", err)
	}
}
