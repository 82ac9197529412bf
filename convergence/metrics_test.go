package convergence

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func TestMeasureFlow002Example(t *testing.T) {
	ledgers := flow002Ledgers(t)
	tr, err := NewTracker(Settings{StallRounds: 2, DivergenceNet: -2, Weights: gap.UnitWeights()})
	if err != nil {
		t.Fatal(err)
	}
	var got []Row
	for round := 1; round < len(ledgers); round++ {
		got = append(got, tr.Observe(round, ledgers[round-1], ledgers[round]))
	}
	want := []Row{
		{Round: 1, GapsStart: 25, Resolved: 3, New: 2, GapsEnd: 24, Net: 1, WeightedNet: 1, WeightedOpen: 24, State: Converging},
		{Round: 2, GapsStart: 24, Resolved: 4, New: 4, GapsEnd: 24, Net: 0, WeightedNet: 0, WeightedOpen: 24, State: Stalled(1)},
		{Round: 3, GapsStart: 24, Resolved: 1, New: 5, GapsEnd: 28, Net: -4, WeightedNet: -4, WeightedOpen: 28, State: DivergenceWarning},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, tr.Rows()); diff != "" {
		t.Errorf("Rows() (-want +got):\n%s", diff)
	}
}

func TestMeasure(t *testing.T) {
	w := gap.DefaultWeights()
	tests := []struct {
		name string
		// build returns the ledgers at the end of the previous round and of this round.
		build func(t *testing.T) (before, after *gap.Ledger)
		want  Row
		// split rounds break the simple count identity on purpose.
		split bool
	}{
		{
			name: "severity trade-off: three LOW resolved, one CRITICAL opened",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := &gap.Ledger{}
				addGaps(t, before, 1, 3, gap.Low, 0)
				addGaps(t, before, 4, 4, gap.High, 0)
				after := before.Clone()
				for n := 1; n <= 3; n++ {
					accept(t, after, gid(n), 1)
				}
				addGaps(t, after, 5, 5, gap.Critical, 1)
				return before, after
			},
			want: Row{Round: 1, GapsStart: 4, Resolved: 3, New: 1, GapsEnd: 2, Net: 2, WeightedNet: 3 - 16, WeightedOpen: 4 + 16},
		},
		{
			name: "split: parent superseded, children neither new nor resolved",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := ledgerOf(t, g(7, gap.High, gap.Open), g(8, gap.Low, gap.Open))
				after := before.Clone()
				move(t, after, gid(7), 1, gap.Superseded)
				for _, c := range []gap.ID{gid(7).Child('a'), gid(7).Child('b')} {
					if err := after.Add(gap.Gap{ID: c, Severity: gap.High, Parent: gid(7), Round: 1}); err != nil {
						t.Fatal(err)
					}
				}
				// A child accepted in the round it was split off is still part of the split.
				accept(t, after, gid(7).Child('b'), 1)
				return before, after
			},
			want:  Row{Round: 1, GapsStart: 2, GapsEnd: 2, WeightedOpen: 4 + 1},
			split: true,
		},
		{
			name: "late child of a parent split in an earlier round is new",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := ledgerOf(t, g(7, gap.High, gap.Superseded))
				after := before.Clone()
				if err := after.Add(gap.Gap{ID: gid(7).Child('c'), Severity: gap.Medium, Parent: gid(7), Round: 2}); err != nil {
					t.Fatal(err)
				}
				return before, after
			},
			want: Row{Round: 1, New: 1, GapsEnd: 1, Net: -1, WeightedNet: -2, WeightedOpen: 2},
		},
		{
			name: "reopen: ACCEPTED to NEEDS_REVISION and DEFERRED to OPEN",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := ledgerOf(t, g(1, gap.High, gap.Accepted), g(2, gap.Low, gap.Deferred), g(3, gap.Medium, gap.Open))
				after := before.Clone()
				move(t, after, gid(1), 1, gap.NeedsRevision)
				move(t, after, gid(2), 1, gap.Open)
				return before, after
			},
			want: Row{Round: 1, GapsStart: 1, Reopened: 2, GapsEnd: 3, Net: -2, WeightedNet: -(4 + 1), WeightedOpen: 4 + 1 + 2},
		},
		{
			name: "reopened and accepted again within the round nets to zero",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := ledgerOf(t, g(1, gap.High, gap.Deferred))
				after := before.Clone()
				move(t, after, gid(1), 1, gap.Open)
				accept(t, after, gid(1), 1)
				return before, after
			},
			want: Row{Round: 1, Resolved: 1, Reopened: 1},
		},
		{
			name: "deferral is a scope change, not progress",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := ledgerOf(t, g(1, gap.Medium, gap.Open), g(2, gap.Low, gap.Blocked), g(3, gap.High, gap.Open))
				after := before.Clone()
				move(t, after, gid(1), 1, gap.Deferred)
				move(t, after, gid(2), 1, gap.Deferred)
				return before, after
			},
			want: Row{Round: 1, GapsStart: 3, Deferred: 2, GapsEnd: 1, WeightedOpen: 4},
		},
		{
			name: "new and accepted in the same round counts both ways",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := ledgerOf(t, g(1, gap.Medium, gap.Open))
				after := before.Clone()
				if err := after.Add(g(2, gap.Critical, gap.Accepted)); err != nil {
					t.Fatal(err)
				}
				if err := after.Add(g(3, gap.Low, gap.Deferred)); err != nil {
					t.Fatal(err)
				}
				return before, after
			},
			want: Row{Round: 1, GapsStart: 1, Resolved: 1, Deferred: 1, New: 2, GapsEnd: 1, Net: -1, WeightedNet: -1 /* 16 resolved − 16 new CRITICAL − 1 new LOW */, WeightedOpen: 2},
		},
		{
			name: "BLOCKED resolved by a user decision counts as resolved",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := ledgerOf(t, g(1, gap.Critical, gap.Blocked))
				after := before.Clone()
				move(t, after, gid(1), 1, gap.Accepted)
				return before, after
			},
			want: Row{Round: 1, GapsStart: 1, Resolved: 1, Net: 1, WeightedNet: 16},
		},
		{
			name: "severity change alone moves the open load, not the net",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				before := ledgerOf(t, g(1, gap.Low, gap.Open))
				after := before.Clone()
				if err := after.SetSeverity(gid(1), gap.Critical); err != nil {
					t.Fatal(err)
				}
				move(t, after, gid(1), 1, gap.InProgress, gap.Proposed)
				return before, after
			},
			want: Row{Round: 1, GapsStart: 1, GapsEnd: 1, WeightedOpen: 16},
		},
		{
			name:  "nil ledgers are empty",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) { return nil, nil },
			want:  Row{Round: 1},
		},
		{
			name: "nil before: the whole initial list is new",
			build: func(t *testing.T) (*gap.Ledger, *gap.Ledger) {
				return nil, ledgerOf(t, g(1, gap.High, gap.Open), g(2, gap.Low, gap.Open))
			},
			want: Row{Round: 1, New: 2, GapsEnd: 2, Net: -2, WeightedNet: -5, WeightedOpen: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, after := tt.build(t)
			got := Measure(1, before, after, w)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Measure (-want +got):\n%s", diff)
			}
			if tt.split {
				return
			}
			if id := got.GapsStart + got.New + got.Reopened - got.Resolved - got.Deferred; id != got.GapsEnd {
				t.Errorf("count identity: GapsStart+New+Reopened-Resolved-Deferred = %d, GapsEnd = %d", id, got.GapsEnd)
			}
		})
	}
}

func TestMeasureTradeOffIsNotProgress(t *testing.T) {
	before := &gap.Ledger{}
	addGaps(t, before, 1, 3, gap.Low, 0)
	after := before.Clone()
	for n := 1; n <= 3; n++ {
		accept(t, after, gid(n), 1)
	}
	addGaps(t, after, 4, 4, gap.Critical, 1)

	var tr Tracker // zero value: default weights and thresholds
	row := tr.Observe(1, before, after)
	if row.Net <= 0 {
		t.Fatalf("precondition: plain Net = %d, want positive (3 resolved, 1 new)", row.Net)
	}
	if row.WeightedNet >= 0 || row.State != Stalled(1) {
		t.Errorf("got WeightedNet %d state %s, want negative and STALLED(1)", row.WeightedNet, row.State)
	}
}

func TestMeasureZeroWeightsMeanDefaults(t *testing.T) {
	before := ledgerOf(t, g(1, gap.Critical, gap.Open))
	after := before.Clone()
	accept(t, after, gid(1), 1)
	if got := Measure(1, before, after, gap.Weights{}).WeightedNet; got != 16 {
		t.Errorf("WeightedNet with zero Weights = %d, want 16 (default CRITICAL weight)", got)
	}
}

func TestMeasureDoesNotModifyLedgers(t *testing.T) {
	ledgers := flow002Ledgers(t)
	before, after := ledgers[0].Clone(), ledgers[1].Clone()
	Measure(1, before, after, gap.DefaultWeights())
	if diff := cmp.Diff(ledgers[0], before); diff != "" {
		t.Errorf("before changed:\n%s", diff)
	}
	if diff := cmp.Diff(ledgers[1], after); diff != "" {
		t.Errorf("after changed:\n%s", diff)
	}
}
