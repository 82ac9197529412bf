package refine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/memory"
)

func benchGaps(n int) []gap.Gap {
	gs := make([]gap.Gap, n)
	for i := range gs {
		gs[i] = gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-BENCH-%03d", i+1)), Title: "benchmark gap", Severity: gap.Medium}
	}
	return gs
}

// instantRoles answer at once: the Engineer resolves every assigned gap,
// the Reviewer finds no issues. A delay, when set, is each call's latency;
// inRole accumulates the time actually spent inside calls (a sleep
// overshoots its duration, and that is the role's time, not ours).
func instantRoles(engDelay, revDelay time.Duration) (eng, rev refine.Role, inRole *atomic.Int64) {
	inRole = new(atomic.Int64)
	timed := func(d time.Duration, content func(refine.Request) string) refine.Role {
		return refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
			start := time.Now()
			if d > 0 {
				time.Sleep(d) // the role's latency, not synchronisation
			}
			c := content(req)
			inRole.Add(int64(time.Since(start)))
			return refine.Response{Content: c}, nil
		})
	}
	eng = timed(engDelay, func(req refine.Request) string { return engineerDoc(req.Gaps...) })
	rev = timed(revDelay, func(req refine.Request) string { return reviewerDoc(req.Round, joinIDs(req.Gaps)) })
	return eng, rev, inRole
}

func joinIDs(xs []gap.ID) gap.ID {
	var out gap.ID
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// BenchmarkRoundOneGap: one round over one gap, the unit of BenchmarkOverhead.
func BenchmarkRoundOneGap(b *testing.B) {
	ctx := context.Background()
	eng, rev, _ := instantRoles(0, 0)
	for b.Loop() {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(1)...)
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out, err := s.Run(ctx); err != nil || out.Round != 1 {
			b.Fatalf("%+v %v", out, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/round")
}

// BenchmarkRound: one round over 10 gaps with instant roles on the memory
// store: the per-round cost the performance targets are stated in
// (docs/benchmarks.md).
func BenchmarkRound(b *testing.B) {
	ctx := context.Background()
	eng, rev, _ := instantRoles(0, 0)
	for b.Loop() {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(10)...)
		cfg.GapsPerRound = 10
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out, err := s.Run(ctx); err != nil || out.Round != 1 {
			b.Fatalf("%+v %v", out, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/round")
}

// BenchmarkOverhead: a 5-round session whose roles take 20 ms per call;
// total time ÷ the sum of role latencies (benchmark b).
func BenchmarkOverhead(b *testing.B) {
	const latency = 20 * time.Millisecond
	for _, kind := range []string{"memory", "fs"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			eng, rev, inRole := instantRoles(latency, latency)
			var ratio float64
			for b.Loop() {
				inRole.Store(0)
				cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(5)...)
				cfg.GapsPerRound = 1
				cfg.Clock = refine.SystemClock{}
				if kind == "fs" {
					st, err := fs.Open(b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					cfg.Store = st
					defer st.Close()
				} else {
					cfg.Store = memory.New()
				}
				start := time.Now()
				s, err := refine.New(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				out, err := s.Run(ctx)
				if err != nil || out.Round != 5 {
					b.Fatalf("%+v %v", out, err)
				}
				ratio = float64(time.Since(start)) / float64(inRole.Load())
			}
			b.ReportMetric(ratio, "total/role-latency")
		})
	}
}

// BenchmarkParallelGaps: ParallelGaps=5 with 50 ms Engineer calls and an
// instant Reviewer; round time ÷ 50 ms (benchmark c; sequential would be ≥ 5).
func BenchmarkParallelGaps(b *testing.B) {
	const latency = 50 * time.Millisecond
	ctx := context.Background()
	eng, rev, _ := instantRoles(latency, 0)
	var ratio float64
	for b.Loop() {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(5)...)
		cfg.GapsPerRound, cfg.ParallelGaps = 5, 5
		cfg.Clock = refine.SystemClock{}
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if out, err := s.Run(ctx); err != nil || out.Round != 1 {
			b.Fatalf("%+v %v", out, err)
		}
		ratio = float64(time.Since(start)) / float64(latency)
	}
	b.ReportMetric(ratio, "round/call-latency")
}
