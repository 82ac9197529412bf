package sim

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/validate"
)

// Invariant names one of issue #23's invariants.
type Invariant string

// The invariants, checked after every step.
const (
	// NeverStuck (1): every offered key is accepted and moves the session
	// on; a refused answer changes nothing.
	NeverStuck Invariant = "stuck"
	// RoundTrip (2): export → import keeps status --json and the outcome.
	RoundTrip Invariant = "roundtrip"
	// RollbackTargets (3): a rollback to every offered round succeeds.
	RollbackTargets Invariant = "rollback"
	// CrashSafe (4): a crash at any commit, then reopen, ends as the
	// uncrashed twin, repeating at most the calls in flight.
	CrashSafe Invariant = "crash"
	// Outcomes (5): COMPLETE only with no open gap and an APPROVE last
	// review; a fatal error leaves FAILED, never RUNNING.
	Outcomes Invariant = "outcome"
	// Drivers (6): Run and Next/Deliver leave byte-identical sessions.
	Drivers Invariant = "drivers"
	// Errors: an operation failed that the design does not let fail.
	Errors Invariant = "error"
)

// Move names one of the operator's moves.
type Move string

// The operator's moves. Answer, rollback, approve and abandon change the
// session (decisions); the others must not (perturbations and probes).
const (
	MoveAnswer    Move = "answer"
	MoveAnswerNow Move = "answernow" // answered inside Run, as at a terminal
	MoveRollback  Move = "rollback"
	MoveApprove   Move = "approve"
	MoveAbandon   Move = "abandon"
	MoveReopen    Move = "reopen"   // defer, close, reopen and answer there
	MoveBadKey    Move = "badkey"   // a key not offered: refused, nothing changes
	MoveCaseKey   Move = "casekey"  // a key differing only in case
	MoveNoText    Move = "notext"   // an option that needs text, without it
	MoveExport    Move = "export"   // export, import, continue from the copy
	MoveMove      Move = "move"     // the same into another kind of store
	MoveCrash     Move = "crash"    // crash at a random commit and reopen
	MoveKeyProbe  Move = "keyprobe" // invariant 1 on a copy for every key
	MoveRBProbe   Move = "rbprobe"  // invariant 3 on a copy for every target
	MoveTwins     Move = "twins"    // the clean twins (invariants 2, 4, 6 at the end)
)

// Options tune a simulation. The zero value checks everything.
type Options struct {
	// Dir is where fs and sqlite stores are made ("" the system's temp).
	Dir string
	// Off turns off moves and invariants by name ("crash", "rollback",
	// "casekey", …) so that a known bug's area can be left out while it
	// is being fixed.
	Off map[string]bool
	// MaxStops bounds the stops of one session (default 60).
	MaxStops int
	// Mix overrides the roles' odds (nil: the scenario's).
	Mix *Mix
	// Quirks makes the roles write like real models (refinetest.Quirky)
	// at these rates, and checks the invariants of #38 (SilentLoss,
	// SameReading); nil: the scripted roles write the formats exactly.
	Quirks *refinetest.QuirkRates
	// ProbeScale scales the odds of the probes on copies (every offered
	// key, every rollback target) at a stop: 0 means 1; below 1 trades
	// probes for seeds per second (the 100,000-seed command uses 0.25).
	ProbeScale float64
}

func (o Options) probeScale() float64 {
	if o.ProbeScale == 0 {
		return 1
	}
	return o.ProbeScale
}

func (o Options) on(name string) bool { return !o.Off[name] }

// stuckChecked reports whether the never-stuck check applies to an answer
// to question id given the pending set: Off entries "q:TEXT" leave out
// questions whose ID contains TEXT, and "flowpending" leaves out answers
// given while another pending question is a rollback dialog.
func (o Options) stuckChecked(id string, pending []refine.Question) bool {
	for k, off := range o.Off {
		if t, ok := strings.CutPrefix(k, "q:"); ok && off && strings.Contains(id, t) {
			return false
		}
	}
	if o.Off["flowpending"] {
		for _, q := range pending {
			if q.ID != id && rollbackWaits(refine.Status{Pending: []refine.Question{q}}) {
				return false
			}
		}
	}
	return true
}

// Violation is one broken invariant.
type Violation struct {
	Invariant Invariant
	Seed      uint64
	Branch    string
	Message   string
	// History is the branch's history up to the violation, shortened.
	History []string
}

func (v Violation) String() string {
	return fmt.Sprintf("seed %d: invariant %s (%s): %s\nreplay: go test ./internal/sim -run TestSimulate -seed=%d -v\nhistory:\n  %s",
		v.Seed, v.Invariant, v.Branch, v.Message, v.Seed, strings.Join(v.History, "\n  "))
}

// Result is what one seed's simulation found.
type Result struct {
	Seed       uint64
	Scenario   Scenario
	Outcome    refine.OutcomeStatus
	Stops      int
	History    []string
	Violations []Violation
	// Coverage counts what the main session went through: question kinds
	// ("question:conflict"), validation failure types seen in its log
	// ("failure:WRONG_FORMAT") and perturbations ("move:crash").
	Coverage map[string]int
}

// simulation is one seed's run.
type simulation struct {
	sc    Scenario
	opt   Options
	mix   Mix
	dir   string
	nDirs int
	res   *Result
}

// Simulate plays seed's session with every move and checks every
// invariant, returning what it found. The error is for the simulator's
// own trouble (a temp folder it cannot make), not a violation.
func Simulate(ctx context.Context, seed uint64, opt Options) (Result, error) {
	if opt.MaxStops == 0 {
		opt.MaxStops = 60
	}
	sc := NewScenario(seed)
	sim := &simulation{sc: sc, opt: opt, mix: sc.Mix}
	if opt.Mix != nil {
		sim.mix = *opt.Mix
	}
	sim.res = &Result{Seed: seed, Scenario: sim.sc, Coverage: map[string]int{}}
	defer func() {
		if sim.dir != "" {
			os.RemoveAll(sim.dir)
		}
	}()
	main, err := sim.play(ctx, "main", sim.sc.Driver, sim.sc.Store, true, sim.mix)
	if err != nil {
		return *sim.res, err
	}
	sim.res.History = main.hist
	for _, m := range main.perturbed {
		sim.res.Coverage["move:"+string(m)]++
	}
	if opt.on(string(MoveTwins)) {
		sim.twins(ctx, main)
	}
	return *sim.res, nil
}

// newPlace makes an empty store of kind; fs and sqlite stores live in
// the seed's folder, made on first use and removed when the seed ends.
func (s *simulation) newPlace(ctx context.Context, kind StoreKind) (*place, error) {
	if kind != Memory && s.dir == "" {
		d, err := tempDir(s.opt.Dir, s.sc.Seed)
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		s.dir = d
	}
	s.nDirs++
	return newPlace(ctx, kind, s.dir, s.nDirs)
}

// quiet is the mix without role errors.
func (s *simulation) quiet() Mix {
	m := s.mix
	m.Transient, m.Permanent = 0, 0
	return m
}

// violate records a violation on branch b (at most three of each
// invariant per branch: a stuck session repeats itself).
func (s *simulation) violate(b *branch, inv Invariant, format string, args ...any) {
	if !s.opt.on(string(inv)) {
		return
	}
	msg := fmt.Sprintf(format, args...)
	b.logf("VIOLATION %s: %s", inv, msg)
	if b.violations == nil {
		b.violations = map[Invariant]int{}
	}
	if b.violations[inv]++; b.violations[inv] > 3 {
		return
	}
	s.res.Violations = append(s.res.Violations, Violation{Invariant: inv, Seed: s.sc.Seed, Branch: b.name, Message: msg, History: shorten(b.hist)})
}

// shorten keeps the start and the end of a history.
func shorten(h []string) []string {
	const head, tail = 6, 30
	if len(h) <= head+tail {
		return slices.Clone(h)
	}
	out := slices.Clone(h[:head])
	out = append(out, fmt.Sprintf("… %d steps …", len(h)-head-tail))
	return append(out, h[len(h)-tail:]...)
}

// play creates a session and plays it to its end; perturb says whether
// the perturbations and probes run.
func (s *simulation) play(ctx context.Context, name string, d Driver, kind StoreKind, perturb bool, mix Mix) (*branch, error) {
	return s.playWith(ctx, name, d, kind, perturb, mix, quirksAll)
}

// quirkSet says which of Options.Quirks a branch plays with.
type quirkSet int

const (
	quirksAll    quirkSet = iota
	quirksNone            // the plain twin
	quirksBenign          // the benign ones alone
)

// playWith is play with the quirks q says.
func (s *simulation) playWith(ctx context.Context, name string, d Driver, kind StoreKind, perturb bool, mix Mix, q quirkSet) (*branch, error) {
	pl, err := s.newPlace(ctx, kind)
	if err != nil {
		return nil, err
	}
	b := &branch{sim: s, name: name, driver: d, place: pl, calls: &callLog{}, decides: true, visits: map[string]int{}, mix: mix, plain: q == quirksNone, benignOnly: q == quirksBenign}
	if perturb {
		b.per = rngOf(s.sc.Seed, "perturb")
	}
	defer func() { b.place.close() }()
	b.logf("seed %d: %d gaps %s; max_rounds %d, gaps_per_round %d, parallel %d, max_retries %d, stall %d, retention %d, rollback limit %d mode %s, transport retries %d; driver %s, store %s",
		s.sc.Seed, len(s.sc.Gaps), gapList(s.sc), s.sc.Settings.MaxRounds, s.sc.Settings.GapsPerRound, s.sc.Settings.ParallelGaps,
		s.sc.Settings.MaxRetries, s.sc.Settings.StallRounds, s.sc.Settings.BackupRetention, s.sc.Settings.RollbackLimit,
		s.sc.Settings.RollbackMode, s.sc.Settings.TransportRetries, d, kind)
	if err := b.create(ctx); err != nil {
		s.violate(b, Errors, "New: %v", err)
		return b, nil
	}
	s.operate(ctx, b)
	// The session's Status is its last durable point (a crash reopens it,
	// an import replaces it): what the store holds, without replaying it.
	s.reportLosses(b)
	if st, err := b.sess.Status(ctx); err == nil {
		b.finalSt = st
		if b.name == "main" {
			s.res.Outcome = st.Outcome
			for _, v := range st.Validation {
				for _, ft := range failureTypes {
					if v.FailureType == ft || strings.Contains(v.Message, string(ft)) {
						s.res.Coverage["failure:"+string(ft)]++
					}
				}
			}
		}
		b.logf("end: %s after round %d", st.Outcome, st.Round)
	}
	b.finalStatus, _ = b.doc(ctx)
	if !perturb && strings.HasPrefix(name, "clean-") && s.sc.Settings.ParallelGaps == 1 { // twins compares these folders
		final, err := dumpCompacted(ctx, b.store)
		if err != nil {
			s.violate(b, RoundTrip, "export at the end: %v", err)
		}
		b.final = final
	}
	return b, nil
}

func gapList(sc Scenario) string {
	parts := make([]string, len(sc.Gaps))
	for i, g := range sc.Gaps {
		parts[i] = g.Severity.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// failureTypes are the validation failure types the roles aim at.
var failureTypes = []validate.FailureType{validate.MissingFile, validate.EmptyOutput, validate.WrongFormat, validate.NoGapsAddressed,
	validate.InconsistentRefs, validate.ExecutionError, validate.MaxRetriesExhausted, validate.InvalidDisagreeRef,
	validate.MalformedDisagree, validate.ReArguedConflict, validate.Truncated, validate.Refusal}

// pendingIDs lists the IDs of qs, sorted.
func pendingIDs(qs []refine.Question) []string {
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
	}
	sort.Strings(ids)
	return ids
}
