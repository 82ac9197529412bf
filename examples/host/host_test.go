package refinehost

import (
	"context"
	"fmt"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// TestTenRoundsWhilePollingStatus runs a scripted ten-round session (one
// gap a round) and, while round 5's Engineer call is in flight, polls the
// session's Status from another goroutine: Status answers at once with
// the round that is running instead of waiting for Run.
func TestTenRoundsWhilePollingStatus(t *testing.T) {
	ctx := context.Background()
	var gaps []gap.Gap
	for i := 1; i <= 10; i++ {
		gaps = append(gaps, gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-HOST-%03d", i)), Title: fmt.Sprintf("Host gap %d", i), Severity: gap.High})
	}

	var session *refine.Session
	sessionReady := make(chan *refine.Session, 1)
	inRound5 := make(chan struct{})
	polled := make(chan refine.Status)
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 5 {
			close(inRound5)
			// The Engineer's call stays in flight until the poller has
			// read the session's status.
			select {
			case st := <-polled:
				if st.Round != 4 || st.Phase != refine.PhaseEngineer {
					return refine.Response{}, fmt.Errorf("status during round 5 = round %d phase %q; want round 4 done, engineer phase", st.Round, st.Phase)
				}
			case <-ctx.Done():
				return refine.Response{}, ctx.Err()
			}
		}
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})

	go func() {
		s := <-sessionReady
		<-inRound5
		st, err := s.Status(ctx)
		if err != nil {
			t.Error(err)
		}
		polled <- st
	}()
	r := Refiner{Engineer: eng, Reviewer: rev, MaxRounds: 12,
		Started: func(s *refine.Session) { session = s; sessionReady <- s }}
	out, s, err := r.Refine(ctx, "# Host spec\n\nTen things to decide.\n", gaps)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != refine.StatusComplete || out.Round != 10 {
		t.Fatalf("outcome = %s after round %d; want COMPLETE after round 10", out.Status, out.Round)
	}
	if s != session {
		t.Fatal("a different session came back")
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range st.Gaps {
		if g.State != gap.Accepted {
			t.Errorf("%s is %s, want ACCEPTED", g.ID, g.State)
		}
	}
}
