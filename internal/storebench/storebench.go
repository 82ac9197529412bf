// Package storebench measures what a Store costs a real session: a
// 5-round session over 5 gaps whose roles take 20 ms per call, timed
// against the time spent inside the roles. 1.00 would be a free store.
package storebench

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// Overhead runs the session once per iteration on a Store from open and
// reports total time ÷ role latency as "total/role-latency".
func Overhead(b *testing.B, open func(b *testing.B) refine.Store) {
	const latency = 20 * time.Millisecond
	ctx := context.Background()
	var inRole atomic.Int64
	timed := func(content func(refine.Request) string) refine.Role {
		return refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
			start := time.Now()
			time.Sleep(latency) // the role's latency, not synchronisation
			c := content(req)
			inRole.Add(int64(time.Since(start)))
			return refine.Response{Content: c}, nil
		})
	}
	eng := timed(func(req refine.Request) string { return refinetest.EngineerOutput(req.Gaps...) })
	rev := timed(func(req refine.Request) string { return refinetest.ReviewerOutput(req.Round, req.Gaps) })
	gaps := make([]gap.Gap, 5)
	for i := range gaps {
		gaps[i] = gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-BENCH-%03d", i+1)), Title: "benchmark gap", Severity: gap.Medium}
	}
	var total, roles time.Duration // summed over iterations: one slow run must not decide
	for b.Loop() {
		inRole.Store(0)
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, gaps...)
		cfg.GapsPerRound = 1
		cfg.Clock = refine.SystemClock{}
		cfg.Store = open(b)
		start := time.Now()
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		out, err := s.Run(ctx)
		if err != nil || out.Round != 5 {
			b.Fatalf("session: %+v %v", out, err)
		}
		total += time.Since(start)
		roles += time.Duration(inRole.Load())
		if c, ok := cfg.Store.(io.Closer); ok {
			c.Close()
		}
	}
	b.ReportMetric(float64(total)/float64(roles), "total/role-latency")
}
