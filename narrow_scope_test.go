package refine_test

import (
	"context"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// Two REVISE rounds raise the divergence warning; narrowing scope defers
// the only gap. The session must not end COMPLETE (the last review was
// REVISE), and the round's convergence row counts the deferral (issue #23).
func TestNarrowScopeAfterReviseIsNotComplete(t *testing.T) {
	ctx := context.Background()
	id := gap.ID("GAP-TEST-001")
	eng, rev := revisingRoles(id)
	asker := refinetest.Answers(refine.Answer{Key: convergence.KeyNarrowScope, Text: string(id)}, refine.Answer{Key: convergence.KeyAccept})
	cfg := refinetest.Config(eng, rev, asker)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Not COMPLETE: the good-enough offer, accepted by a person.
	if out.Status != refine.StatusUserApproved {
		t.Fatalf("outcome %s after a REVISE review whose gap was deferred by narrowing scope, want USER_APPROVED from the good-enough offer", out.Status)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Convergence) < 2 {
		t.Fatalf("convergence rows %+v", st.Convergence)
	}
	row := st.Convergence[1]
	if row.Round != 2 || row.Deferred != 1 || row.GapsEnd != 0 {
		t.Errorf("round 2's row = %+v, want Deferred 1 and Gaps End 0", row)
	}
	if row.State != convergence.DivergenceWarning {
		t.Errorf("round 2's state %s, want it kept as DIVERGENCE_WARNING", row.State)
	}
}

// A round that makes no role call (every gap deferred) starts, stages its
// backup and ends in the commit that finishes the session with a whole
// snapshot: the backup must keep what it is rebuilt from (found by the
// simulator, seed 1932: export failed with "no snapshot at or before
// journal record 12").
func TestBackupStagedWithTheFinishingSnapshot(t *testing.T) {
	ctx := context.Background()
	id := gap.ID("GAP-TEST-001")
	eng, rev := revisingRoles(id)
	asker := refinetest.Answers(refine.Answer{Key: convergence.KeyNarrowScope, Text: string(id)}, refine.Answer{Key: convergence.KeyContinue})
	cfg := refinetest.Config(eng, rev, asker)
	cfg.MaxRounds, cfg.BackupRetention = 3, 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusMaxRounds {
		t.Fatalf("Run: %+v, %v; want MAX_ROUNDS after a round with nothing to do", out, err)
	}
	if err := refine.Compact(ctx, cfg.Store); err != nil {
		t.Fatalf("Compact (refine export): %v", err)
	}
	s, err = refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Asker = refinetest.Keys("1")
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 2, Reason: "redo round 3", Adjustments: []string{"x"}}); err != nil {
		t.Fatalf("rollback to 2: %v", err)
	}
}

// revisingRoles play a gap the Reviewer never accepts: the Engineer
// proposes, then revises for the last round's issue; the Reviewer raises a
// HIGH issue against it every round.
func revisingRoles(id gap.ID) (eng, rev refine.Role) {
	eng = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 1 {
			return refine.Response{Content: refinetest.EngineerOutput(id)}, nil
		}
		return refine.Response{Content: refinetest.Revision(id, refinetest.IssueID(req.Round-1, 1), "bound the retries")}, nil
	})
	rev = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps,
			refinetest.Issue{Severity: gap.High, Gap: id, Summary: "retries are unbounded", Suggestion: "bound the retries"})}, nil
	})
	return eng, rev
}
