package refine_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
)

// goid returns the calling goroutine's ID. Tests only: it lets a test
// state which goroutine did something, deterministically.
func goid() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := bytes.Fields(buf[:n])
	id, _ := strconv.ParseUint(string(f[1]), 10, 64)
	return id
}

// goroutineStore records the goroutines that call Commit and Get.
type goroutineStore struct {
	refine.Store
	mu   sync.Mutex
	seen map[uint64]string
}

func (s *goroutineStore) note(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[uint64]string{}
	}
	s.seen[goid()] = what
}

func (s *goroutineStore) Commit(ctx context.Context, ops ...store.Op) error {
	s.note("Commit")
	return s.Store.Commit(ctx, ops...)
}

func (s *goroutineStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.note("Get " + key)
	return s.Store.Get(ctx, key)
}

// parallelConfig is a session whose three gaps are drafted in parallel,
// every first attempt failing validation (so each part retries), with the
// role calls of each attempt wave released together.
func parallelConfig(t *testing.T) (refine.Config, *refinetest.Role) {
	gaps := []gap.Gap{{ID: "GAP-PAR-001", Severity: gap.High}, {ID: "GAP-PAR-002", Severity: gap.High}, {ID: "GAP-PAR-003", Severity: gap.High}}
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		if len(req.Gaps) != 1 {
			return refine.Response{}, fmt.Errorf("parallel call got %d gaps", len(req.Gaps))
		}
		if req.Attempt == 1 {
			return refine.Response{Content: "bad format"}, nil
		}
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps[0])}, nil
	})
	rev := refinetest.Script(refinetest.ReviewerOutput(1, []gap.ID{"GAP-PAR-001", "GAP-PAR-002", "GAP-PAR-003"}))
	cfg := refinetest.Config(eng, rev, auto(), gaps...)
	cfg.ParallelGaps = 3
	return cfg, eng
}

// TestStateChangesOnOneGoroutine is the deterministic form of the data
// race parallel drafting once had: workers committed state and read the
// staged writes while other workers changed them. Now only the role calls
// run on workers; every Store access and every Observer event happens on
// the goroutine that called Run.
func TestStateChangesOnOneGoroutine(t *testing.T) {
	ctx := context.Background()
	cfg, eng := parallelConfig(t)
	st := &goroutineStore{Store: cfg.Store}
	cfg.Store = st
	var events sync.Map // goroutine -> event kind
	var recording atomic.Bool
	cfg.Observer = refine.ObserverFunc(func(e refine.Event) {
		if recording.Load() {
			events.Store(goid(), e.Kind)
		}
	})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.seen = nil
	st.mu.Unlock()
	recording.Store(true)

	var runner uint64
	var out refine.Outcome
	done := make(chan error)
	go func() {
		runner = goid()
		var err error
		out, err = s.Run(ctx)
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v, want COMPLETE", out)
	}
	if n := eng.CallCount(); n != 6 {
		t.Fatalf("engineer calls = %d, want 6 (3 parts × 2 attempts)", n)
	}
	for id, what := range st.seen {
		if id != runner {
			t.Errorf("Store %s on goroutine %d, not the Run goroutine %d", what, id, runner)
		}
	}
	events.Range(func(k, v any) bool {
		if k.(uint64) != runner {
			t.Errorf("Observer got %v on goroutine %d, not the Run goroutine %d", v, k, runner)
		}
		return true
	})
}

// TestParallelDraftingStress runs parallel drafting with retries and a
// transport error under the race detector, while another goroutine polls
// Status. Run it with -race -count=N.
func TestParallelDraftingStress(t *testing.T) {
	for i := range 10 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			cfg, _ := parallelConfig(t)
			var flaky atomic.Int32
			base := cfg.Engineer
			cfg.Engineer = refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
				if req.Gaps[0] == "GAP-PAR-003" && flaky.Add(1) == 1 {
					return refine.Response{}, &refine.TransientError{Err: fmt.Errorf("503"), After: time.Millisecond}
				}
				return base.Respond(ctx, req)
			})
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			polled := make(chan int)
			go func() {
				n := 0
				for {
					select {
					case <-stop:
						polled <- n
						return
					default:
					}
					if _, err := s.Status(ctx); err != nil {
						t.Error(err)
					}
					n++
					runtime.Gosched()
				}
			}()
			out, err := s.Run(ctx)
			close(stop)
			<-polled
			if err != nil || out.Status != refine.StatusComplete {
				t.Fatalf("Run = %+v, %v", out, err)
			}
		})
	}
}

// TestStatusDoesNotWaitForRun polls Status while a role call is blocked
// inside Run: it answers at once with the last durable point, and honours
// its context.
func TestStatusDoesNotWaitForRun(t *testing.T) {
	ctx := context.Background()
	inCall := make(chan struct{})
	release := make(chan struct{})
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		close(inCall)
		<-release
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	cfg := refinetest.Config(eng, refinetest.Script(refinetest.ReviewerOutput(1, []gap.ID{"GAP-TEST-001"})), auto())
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := s.Run(ctx); done <- err }()
	<-inCall
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatalf("Status during Run: %v", err)
	}
	if st.Phase != refine.PhaseEngineer || st.Gaps[0].State != gap.InProgress {
		t.Errorf("Status during the Engineer call = phase %q, gap %s; want engineer, IN_PROGRESS", st.Phase, st.Gaps[0].State)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Status(cancelled); err == nil {
		t.Error("Status with a cancelled context succeeded")
	}
	// Answer, unlike Status, waits its turn, but gives up with its context.
	short, cancel2 := context.WithCancel(ctx)
	cancel2()
	if err := s.Answer(short, "x", refine.Answer{Key: "1"}); err == nil {
		t.Error("Answer with a cancelled context during Run succeeded")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, _ = s.Status(ctx)
	if st.Outcome != refine.StatusComplete {
		t.Errorf("after Run, Status outcome = %s", st.Outcome)
	}
}
