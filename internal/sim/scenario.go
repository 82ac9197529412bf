package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/rollback"
)

// Driver names how the operator plays the session between stops.
type Driver string

// The drivers: Run until a stop, Step one round at a time, or Next with
// Advance and Deliver as a durable-execution host does.
const (
	DriverRun  Driver = "run"
	DriverStep Driver = "step"
	DriverNext Driver = "next"
)

// Scenario is what a seed generates before the session starts.
type Scenario struct {
	Seed     uint64
	Gaps     []gap.Gap
	Settings refine.Settings
	// Driver plays the perturbed session; the clean twins are played by
	// Run and by Next.
	Driver Driver
	// DefaultBias is the operator's odds, in 5, of answering with a
	// question's default (2; 4 in flaky seeds, which skip failing roles).
	DefaultBias int
	// Store is where the session starts.
	Store StoreKind
	// Mix is the roles' odds: DefaultMix, or for one seed in five a flaky
	// one (most outputs invalid, no retry), so that both roles fail in a
	// round.
	Mix Mix
}

// NewScenario generates seed's scenario: 1–12 gaps of every severity and
// small limits so sessions end within a few rounds.
func NewScenario(seed uint64) Scenario {
	r := rngOf(seed, "scenario")
	sc := Scenario{Seed: seed}
	n := 1 + r.IntN(12)
	for i := range n {
		sc.Gaps = append(sc.Gaps, gap.Gap{
			ID:       gap.ID(fmt.Sprintf("GAP-SIM-%03d", i+1)),
			Title:    fmt.Sprintf("Simulated gap %d", i+1),
			Severity: gap.Severity(1 + r.IntN(4)),
		})
	}
	set := refine.DefaultConfig().Settings
	set.MaxRounds = 2 + r.IntN(6)
	set.GapsPerRound = 1 + r.IntN(4)
	if chance(r, 0.25) {
		set.ParallelGaps = 2 + r.IntN(2)
	}
	set.MaxRetries = r.IntN(3)
	set.StallRounds = 1 + r.IntN(3)
	set.BackupRetention = 1 + r.IntN(3)
	set.RollbackLimit = 1 + r.IntN(4)
	set.RollbackMode = []rollback.Mode{rollback.ModeInteractive, rollback.ModeAutoRetry, rollback.ModeStrict}[r.IntN(3)]
	set.TransportRetries = r.IntN(3)
	set.BackoffBase, set.BackoffMax = time.Millisecond, 10*time.Millisecond
	sc.Settings = set
	sc.Driver = []Driver{DriverRun, DriverStep, DriverNext}[r.IntN(3)]
	if set.ParallelGaps > 1 {
		// Run's parallel drafting settles the calls in the order they
		// complete, which the goroutine scheduler picks: only Next plays
		// it the same way twice, as the crash and twin comparisons need.
		sc.Driver = DriverNext
	}
	sc.Mix, sc.DefaultBias = DefaultMix, 2
	if r.IntN(5) == 0 {
		sc.Mix.Invalid = 0.6
		sc.Settings.MaxRetries = 0
		sc.DefaultBias = 4
	}
	sc.Store = Memory
	if chance(r, 0.04) {
		sc.Store = []StoreKind{FS, SQLite}[r.IntN(2)]
	}
	return sc
}

// specText is the spec every simulated session refines.
const specText = "# Simulated Spec\n\nA small spec under refinement by the simulator.\n"

// fixedClock reads one instant and never waits: every branch of a seed
// sees the same times, and backoff costs nothing.
type fixedClock struct{}

var simEpoch = time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)

func (fixedClock) Now() time.Time { return simEpoch }

func (fixedClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// fixedIDs gives every branch of a seed the same session ID.
type fixedIDs struct{ id string }

func (f fixedIDs) NewID() string { return f.id }
