package einobench

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/fs"
)

// Rounds is the session's length: Rounds Engineer calls and as many
// Reviewer calls.
const Rounds = 5

// Result is one session's timing.
type Result struct {
	// Wall is the session's wall time, from its start (refine.New; the
	// eino graph's first Invoke) to its end.
	Wall time.Duration
	// InCalls is the time spent inside the role calls (the sleeps and
	// what they return, as refine's BenchmarkOverhead measures it).
	InCalls time.Duration
	// Checkpoints is how many checkpoints an eino session wrote (0 for
	// refine, whose commits the fs store counts).
	Checkpoints int
}

// Overhead is Wall ÷ InCalls: 1 is a session that costs nothing but its
// calls.
func (r Result) Overhead() float64 { return float64(r.Wall) / float64(r.InCalls) }

// timed times what a call does and adds it to in.
func timed(in *atomic.Int64, latency time.Duration, content func() string) string {
	start := time.Now()
	if latency > 0 {
		time.Sleep(latency) // the role's latency, not synchronisation
	}
	c := content()
	in.Add(int64(time.Since(start)))
	return c
}

// gaps are the session's gaps: one a round, as BenchmarkOverhead's.
func gaps() []gap.Gap {
	gs := make([]gap.Gap, Rounds)
	for i := range gs {
		gs[i] = gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-BENCH-%03d", i+1)), Title: "benchmark gap", Severity: gap.Medium}
	}
	return gs
}

// RunRefine plays the session as refine's BenchmarkOverhead does on the
// fs store: a store opened in a new folder under dir (not timed), the
// session created and run (timed), the store closed (not timed).
func RunRefine(ctx context.Context, dir string, latency time.Duration) (Result, error) {
	var in atomic.Int64
	role := func(content func(refine.Request) string) refine.Role {
		return refine.RoleFunc(func(_ context.Context, req refine.Request) (refine.Response, error) {
			return refine.Response{Content: timed(&in, latency, func() string { return content(req) })}, nil
		})
	}
	eng := role(func(req refine.Request) string { return refinetest.EngineerOutput(req.Gaps...) })
	rev := role(func(req refine.Request) string { return refinetest.ReviewerOutput(req.Round, req.Gaps) })
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, gaps()...)
	cfg.GapsPerRound = 1
	cfg.Clock = refine.SystemClock{}
	folder, err := os.MkdirTemp(dir, "refine-")
	if err != nil {
		return Result{}, err
	}
	st, err := fs.Open(folder)
	if err != nil {
		return Result{}, err
	}
	cfg.Store = st
	start := time.Now()
	s, err := refine.New(ctx, cfg)
	if err != nil {
		st.Close()
		return Result{}, err
	}
	out, err := s.Run(ctx)
	wall := time.Since(start)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Result{}, fmt.Errorf("refine session: %w", err)
	}
	if out.Round != Rounds || out.Status != refine.StatusComplete {
		return Result{}, fmt.Errorf("refine session: %s after round %d (%s), want COMPLETE after %d", out.Status, out.Round, out.Reason, Rounds)
	}
	return Result{Wall: wall, InCalls: time.Duration(in.Load())}, nil
}
