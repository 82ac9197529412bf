package refine_test

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/memory"
)

// byteCounter is a Store that counts the bytes handed to Commit in two
// ways. byRound: by the round running when they were handed over (a
// commit span: the commit that ends round N also starts round N+1, so
// round N+1's span holds round N's end and round 1's span holds no end of
// a round). ownBytes: by the round they belong to — a key naming a round
// (round_NNN/…, *_round_N.*) counts for that round, a journal segment for
// the round that started it, and every other key (status.md,
// decisions.md, convergence.svg, session.json, snapshots) for the round
// whose end the commit carries (it writes that round's summary.md), else
// for the round running.
type byteCounter struct {
	refine.Store
	mu       sync.Mutex
	round    int
	byRound  map[int]int
	ownBytes map[int]int
	segments map[string]int // journal segment → the round it started in
	journal  int            // prompts and raw responses: the journal's content
	total    int
}

var roundKey = regexp.MustCompile(`^round_(\d{3})/|_round_(\d+)\.`)

// roundOf returns the round key names, if any.
func roundOf(key string) (int, bool) {
	m := roundKey.FindStringSubmatch(key)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1] + m[2])
	return n, err == nil
}

func (c *byteCounter) Commit(ctx context.Context, ops ...store.Op) error {
	c.mu.Lock()
	if c.segments == nil {
		c.segments, c.ownBytes = map[string]int{}, map[int]int{}
	}
	ended := c.round
	for _, op := range ops {
		if n, ok := roundOf(op.Key); ok && strings.HasSuffix(op.Key, "/summary.md") && n < ended {
			ended = n
		}
	}
	for _, op := range ops {
		c.byRound[c.round] += len(op.Value)
		c.total += len(op.Value)
		if strings.Contains(op.Key, "/prompts/") || strings.Contains(op.Key, "/attempts/") {
			c.journal += len(op.Value)
		}
		n, ok := roundOf(op.Key)
		if strings.HasPrefix(op.Key, "journal/") {
			if _, seen := c.segments[op.Key]; !seen {
				c.segments[op.Key] = c.round
			}
			n, ok = c.segments[op.Key], true
		}
		if !ok {
			n = ended
		}
		c.ownBytes[n] += len(op.Value)
	}
	c.mu.Unlock()
	return c.Store.Commit(ctx, ops...)
}

// Appends forwards the wrapped Store's store.Appender capability, as a
// host's wrapper should.
func (c *byteCounter) Appends() bool {
	a, ok := c.Store.(store.Appender)
	return ok && a.Appends()
}

// Copies forwards the wrapped Store's store.Copier capability.
func (c *byteCounter) Copies() bool {
	a, ok := c.Store.(store.Copier)
	return ok && a.Copies()
}

func (c *byteCounter) Observe(e refine.Event) {
	if e.Kind == refine.EventRoundStarted {
		c.mu.Lock()
		c.round = e.Round
		c.mu.Unlock()
	}
}

// realisticRoles answer like a model would in size: an Engineer section of
// about 3 KB per gap and a Reviewer output of about 1.5 KB with one LOW
// issue, after a latency (0 for none).
func realisticRoles(latency time.Duration) (eng, rev refine.Role) {
	para := "The Mediator validates the output against the two tiers, records the attempt with its prompt and raw response, " +
		"and retries with the failure-specific modification when validation fails; the retry budget is two per role and round. "
	eng = refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		time.Sleep(latency) // the model's latency, not synchronisation
		out := refinetest.EngineerOutput(req.Gaps...)
		out = strings.Replace(out, "### Examples", strings.Repeat(para, 10)+"\n\n### Examples", len(req.Gaps))
		return refine.Response{Content: out}, nil
	})
	rev = refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		time.Sleep(latency)
		out := refinetest.ReviewerOutput(req.Round, req.Gaps, refinetest.Issue{Severity: gap.Low, Summary: "wording: " + strings.Repeat("be precise about the bound ", 20)})
		return refine.Response{Content: out}, nil
	})
	return eng, rev
}

// realisticSpec is a source spec of about 4 KB.
func realisticSpec() string {
	var b strings.Builder
	b.WriteString("# Orders API\n\n")
	for i := range 12 {
		fmt.Fprintf(&b, "## Section %d\n\nClients list, create and cancel orders. Every response carries a request ID; errors use one JSON shape with a code, a message and details.\n\n", i+1)
	}
	return b.String()
}

// BenchmarkStoreBytes: a 50-round session, one gap a round, with
// realistic output sizes. It reports the bytes handed to the Store in
// round 49 against round 1 (target ≤ 2) and in the whole session against
// the journal's content, the prompts and raw responses (target ≤ 4).
func BenchmarkStoreBytes(b *testing.B) {
	ctx := context.Background()
	eng, rev := realisticRoles(0)
	var last *byteCounter
	for b.Loop() {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(50)...)
		cfg.Spec = realisticSpec()
		cfg.GapsPerRound, cfg.MaxRounds = 1, 60
		c := &byteCounter{Store: memory.New(), byRound: map[int]int{}}
		cfg.Store, cfg.Observer = c, c
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		out, err := s.Run(ctx)
		if err != nil || out.Round != 50 {
			b.Fatalf("%+v %v", out, err)
		}
		last = c
	}
	b.ReportMetric(float64(last.byRound[49])/float64(last.byRound[1]), "round49/round1")
	// A snapshot (state.json rewritten, about every 48 rounds here) lands in
	// whichever round crosses the threshold: the median of rounds 40–49 is
	// the steady growth, the maximum the snapshot round.
	var late []int
	for r := 40; r <= 49; r++ {
		late = append(late, last.byRound[r])
	}
	slices.Sort(late)
	b.ReportMetric(float64(late[len(late)/2])/float64(last.byRound[1]), "median(r40-49)/round1")
	b.ReportMetric(float64(late[len(late)-1])/float64(last.byRound[1]), "max(r40-49)/round1")
	b.ReportMetric(float64(last.ownBytes[49])/float64(last.ownBytes[1]), "own(r49)/own(r1)")
	var own []int
	for r := 40; r <= 49; r++ {
		own = append(own, last.ownBytes[r])
	}
	slices.Sort(own)
	b.ReportMetric(float64(own[len(own)-1])/float64(last.ownBytes[1]), "max(own-r40-49)/own(r1)")
	b.ReportMetric(float64(last.total)/float64(last.journal), "total/journal")
	b.ReportMetric(float64(last.total)/50/1024, "KiB/round")
}

// BenchmarkOverheadWithClose: a 5-round session whose roles take 20 ms a
// call, from New to the Store's Close (fs: its last checkpoint): total
// time ÷ time inside role calls, the median of 9 sessions per iteration.
// Targets: memory ≤ 1.02, fs ≤ 1.10.
func BenchmarkOverheadWithClose(b *testing.B) {
	const latency = 20 * time.Millisecond
	for _, kind := range []string{"memory", "fs"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			eng, rev, inRole := instantRoles(latency, latency)
			var ratios []float64
			for b.Loop() {
				for range 9 {
					inRole.Store(0)
					cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(5)...)
					cfg.GapsPerRound = 1
					cfg.Clock = refine.SystemClock{}
					start := time.Now()
					var closeStore func() error
					if kind == "fs" {
						st, err := fs.Open(b.TempDir())
						if err != nil {
							b.Fatal(err)
						}
						cfg.Store, closeStore = st, st.Close
					} else {
						cfg.Store, closeStore = memory.New(), func() error { return nil }
					}
					s, err := refine.New(ctx, cfg)
					if err != nil {
						b.Fatal(err)
					}
					out, err := s.Run(ctx)
					if err != nil || out.Round != 5 {
						b.Fatalf("%+v %v", out, err)
					}
					if err := closeStore(); err != nil {
						b.Fatal(err)
					}
					ratios = append(ratios, float64(time.Since(start))/float64(inRole.Load()))
				}
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "total/role-median")
		})
	}
}

// BenchmarkSessionCPU: the engine's own work in a 5-round session (the
// session of BenchmarkOverheadWithClose) with instant roles, back to back:
// ms per session, and what it would add to 200 ms of role calls if it ran
// as fast between real calls ("cpu-overhead"; BenchmarkSessionAfterIdle
// shows why it does not).
func BenchmarkSessionCPU(b *testing.B) {
	ctx := context.Background()
	eng, rev, _ := instantRoles(0, 0)
	for b.Loop() {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(5)...)
		cfg.GapsPerRound = 1
		cfg.Clock = refine.SystemClock{}
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out, err := s.Run(ctx); err != nil || out.Round != 5 {
			b.Fatalf("%+v %v", out, err)
		}
	}
	perSession := float64(b.Elapsed()) / float64(b.N)
	b.ReportMetric(perSession/1e6, "ms/session")
	b.ReportMetric(1+perSession/float64(200*time.Millisecond), "cpu-overhead")
}

// BenchmarkSessionAfterIdle: the same session run right after a 20 ms
// sleep (as the engine runs after each role call) against back to back,
// median of 60 each: how much slower the same work runs on a CPU that
// has just been idle.
func BenchmarkSessionAfterIdle(b *testing.B) {
	ctx := context.Background()
	eng, rev, _ := instantRoles(0, 0)
	session := func() time.Duration {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(5)...)
		cfg.GapsPerRound = 1
		cfg.Clock = refine.SystemClock{}
		start := time.Now()
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out, err := s.Run(ctx); err != nil || out.Round != 5 {
			b.Fatalf("%+v %v", out, err)
		}
		return time.Since(start)
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2])
	}
	var ratio float64
	for b.Loop() {
		var hot, idle []time.Duration
		for range 60 {
			hot = append(hot, session())
		}
		for range 60 {
			time.Sleep(20 * time.Millisecond) // a role call's latency, not synchronisation
			idle = append(idle, session())
		}
		ratio = median(idle) / median(hot)
	}
	b.ReportMetric(ratio, "after-idle/back-to-back")
}

// BenchmarkOpenLongSession: reading a session stopped after 50 rounds
// (a crash, say) whose background snapshot is not complete yet: the
// records since its first snapshot are replayed, in time linear in their
// bytes.
func BenchmarkOpenLongSession(b *testing.B) {
	ctx := context.Background()
	eng, rev := realisticRoles(0)
	st := memory.New()
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(60)...)
	cfg.Spec = realisticSpec()
	cfg.GapsPerRound, cfg.MaxRounds, cfg.Store = 1, 60, st
	s, err := refine.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	for range 50 {
		if _, err := s.Step(ctx); err != nil {
			b.Fatal(err)
		}
	}
	journal := 0
	keys, _ := st.List(ctx, "journal/")
	for _, k := range keys {
		v, _ := st.Get(ctx, k)
		journal += len(v)
	}
	for b.Loop() {
		if _, err := refine.Inspect(ctx, st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(journal)/1024, "journal-KiB")
}

// BenchmarkRoundGrowth: the engine's time per round late in a long
// session against early in it (95 rounds of one gap each, realistic
// output sizes, instant roles): work that grows with the session's
// history shows here.
func BenchmarkRoundGrowth(b *testing.B) {
	ctx := context.Background()
	eng, rev := realisticRoles(0)
	// The samples of every iteration are pooled: one session's ten rounds
	// swing with the machine's load and the collector's timing.
	var early, late []time.Duration
	for b.Loop() {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(99)...)
		cfg.Spec = realisticSpec()
		cfg.GapsPerRound, cfg.MaxRounds, cfg.Store = 1, 99, memory.New()
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		// CPU time of the thread that plays the round (the engine's work
		// runs on the caller's goroutine with instant roles), so a busy
		// machine does not skew early rounds against late ones.
		runtime.LockOSThread()
		var per []time.Duration
		for range 95 {
			start := threadCPU()
			if _, err := s.Step(ctx); err != nil {
				b.Fatal(err)
			}
			per = append(per, threadCPU()-start)
		}
		runtime.UnlockOSThread()
		early, late = append(early, per[1:11]...), append(late, per[85:95]...)
	}
	median := func(ds []time.Duration) float64 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return float64(ds[len(ds)/2])
	}
	b.ReportMetric(median(late)/median(early), "round86-95/round2-11")
	b.ReportMetric(median(early)/1e6, "ms/early-round")
	b.ReportMetric(median(late)/1e6, "ms/late-round")
}
