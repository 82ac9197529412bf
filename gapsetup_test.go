package refine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/scaling"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/memory"
)

// gapList is a gaps file of n gaps (`refine run --gaps`), 999 to an area.
func gapList(n int) []byte {
	var sb strings.Builder
	for i := range n {
		a := i / 999
		fmt.Fprintf(&sb, "- GAP-G%c%c-%03d (HIGH): gap number %d of a long list\n", 'A'+a/26, 'A'+a%26, i%999+1, i)
	}
	return []byte(sb.String())
}

// setUpGaps is gap setup as `refine run` does it: the gaps file parsed,
// the session created (its ledger, its first commit) and its status read.
func setUpGaps(tb testing.TB, list []byte) {
	tb.Helper()
	ctx := context.Background()
	gaps, err := gapsfile.Parse("gaps.md", list)
	if err != nil {
		tb.Fatal(err)
	}
	eng, rev, _ := instantRoles(0, 0)
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, gaps...)
	cfg.Store = memory.New()
	s, err := refine.New(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if st, err := s.Status(ctx); err != nil || len(st.Gaps) != len(gaps) {
		tb.Fatalf("status: %d gaps, %v; want %d", len(st.Gaps), err, len(gaps))
	}
}

// Setting a session up grows linearly with its gap list (issue #24:
// 20k gaps took 1.8 s, 40k 8.3 s, 80k 31 s).
func TestGapSetupScalesLinearly(t *testing.T) {
	scaling.Linear(t, "gap setup", 1000, 16, gapList, func(list []byte) { setUpGaps(t, list) })
}

// A gap list above Config.MaxGaps is refused with a clear error, before
// any work; at the limit it is accepted.
func TestMaxGaps(t *testing.T) {
	ctx := context.Background()
	gaps, err := gapsfile.Parse("gaps.md", gapList(12))
	if err != nil {
		t.Fatal(err)
	}
	eng, rev, _ := instantRoles(0, 0)
	for _, tc := range []struct {
		max, n int
		ok     bool
	}{{10, 11, false}, {10, 10, true}, {0, 12, true}, {-1, 1, false}} {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, gaps[:tc.n]...)
		cfg.MaxGaps = tc.max
		_, err := refine.New(ctx, cfg)
		switch {
		case tc.ok && err != nil:
			t.Errorf("MaxGaps %d, %d gaps: %v", tc.max, tc.n, err)
		case !tc.ok && !errors.Is(err, refine.ErrInvalidConfig):
			t.Errorf("MaxGaps %d, %d gaps: %v, want ErrInvalidConfig", tc.max, tc.n, err)
		case !tc.ok && tc.max > 0 && !strings.Contains(err.Error(), fmt.Sprintf("%d gaps, above the limit of %d", tc.n, tc.max)):
			t.Errorf("MaxGaps %d, %d gaps: the error does not say why: %v", tc.max, tc.n, err)
		}
	}
	if refine.DefaultMaxGaps != 100_000 {
		t.Errorf("DefaultMaxGaps = %d, the documented limit is 100,000", refine.DefaultMaxGaps)
	}
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, gaps[:1]...)
	cfg.Gaps = make([]gap.Gap, refine.DefaultMaxGaps+1) // refused from its length, before any gap is read
	if _, err := refine.New(ctx, cfg); !errors.Is(err, refine.ErrInvalidConfig) || !strings.Contains(err.Error(), "MaxGaps") {
		t.Errorf("New with %d gaps = %v, want ErrInvalidConfig naming MaxGaps", refine.DefaultMaxGaps+1, err)
	}
}

// BenchmarkGapSetupGrowth: gap setup (parse, New, Status) of 100,000 gaps
// against 10,000; linear code stays near 10 (issue #24: ≤ 12).
func BenchmarkGapSetupGrowth(b *testing.B) {
	small, large := gapList(10_000), gapList(100_000)
	best := func(list []byte) time.Duration {
		d := time.Duration(1<<63 - 1)
		for range 3 {
			start := time.Now()
			setUpGaps(b, list)
			d = min(d, time.Since(start))
		}
		return d
	}
	var ratio float64
	var ts, tl time.Duration
	for b.Loop() {
		ts, tl = best(small), best(large)
		ratio = float64(tl) / float64(ts)
	}
	b.ReportMetric(ratio, "100k/10k")
	b.ReportMetric(float64(ts)/1e6, "ms-10k")
	b.ReportMetric(float64(tl)/1e6, "ms-100k")
}
