package refine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/fs"
)

// copyDir copies a session folder from testdata into a temporary folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := os.CopyFS(dst, os.DirFS(src))
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func legacyConfig(t *testing.T, dir string) (refine.Config, *fs.Store) {
	t.Helper()
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := refine.DefaultConfig()
	cfg.Store = st
	// The recorded answers first, then a Role that resolves what it is
	// given, so the resumed session can finish whatever the answers.
	r := replay.Dir("cmd/refine/demo/replay")
	fallback := refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		if resp, err := r.Respond(ctx, req); err == nil {
			return resp, nil
		}
		if req.Role == refine.Engineer {
			return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	cfg.Engineer, cfg.Reviewer = fallback, fallback
	cfg.Asker = refine.DefaultAsker{}
	return cfg, st
}

// Session folders written by refine 0.1 (commit ec0199c, state.json
// schema 1) open, report their status and resume; the first commit
// rewrites state.json in the current schema.
func TestLegacySessionsOpenAndResume(t *testing.T) {
	ctx := context.Background()
	t.Run("finished demo", func(t *testing.T) {
		cfg, _ := legacyConfig(t, copyDir(t, "testdata/legacy-ec0199c/demo"))
		s, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Status(ctx)
		if err != nil || st.Outcome != refine.StatusComplete || st.Round != 4 {
			t.Fatalf("status = %s round %d, %v; want COMPLETE after round 4", st.Outcome, st.Round, err)
		}
		if len(st.Rollbacks) != 1 {
			t.Errorf("rollbacks = %d, want the demo's one", len(st.Rollbacks))
		}
	})
	t.Run("paused replay", func(t *testing.T) {
		dir := copyDir(t, "testdata/legacy-ec0199c/paused")
		cfg, _ := legacyConfig(t, dir)
		s, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.Status(ctx)
		if st.Outcome != refine.StatusPaused || len(st.Pending) != 1 || st.Pending[0].ID != "rate-warning-r2" {
			t.Fatalf("status = %s, pending %v; want PAUSED on rate-warning-r2", st.Outcome, st.Pending)
		}
		if err := s.Answer(ctx, "rate-warning-r2", refine.Answer{Key: "1"}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !out.Status.Terminal() {
			t.Fatalf("outcome %s (%s), pending %+v, want a terminal one", out.Status, out.Reason, out.Pending)
		}
		b, err := cfg.Store.Get(ctx, "state.json")
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ Schema int }
		if err := json.Unmarshal(b, &head); err != nil || head.Schema != 3 {
			t.Errorf("state.json schema after resuming = %d (%v), want 3", head.Schema, err)
		}
		// And the rewritten session opens again, in another process.
		cfg.Store.(*fs.Store).Close()
		cfg2, _ := legacyConfig(t, dir)
		s2, err := refine.Open(ctx, cfg2)
		if err != nil {
			t.Fatal(err)
		}
		st2, _ := s2.Status(ctx)
		if st2.Outcome != out.Status || st2.Round != out.Round {
			t.Errorf("reopened: %s round %d, want %s round %d", st2.Outcome, st2.Round, out.Status, out.Round)
		}
	})
}

// Session folders written by b1a9ae5 (schema 2: a journal, snapshots and
// backups without a checksum) open, roll back through their backups and
// resume; the first commit writes state.json sealed (schema 3).
func TestSchema2SessionsOpenAndResume(t *testing.T) {
	ctx := context.Background()
	t.Run("finished demo rolls back", func(t *testing.T) {
		dir := copyDir(t, "testdata/legacy-b1a9ae5/demo")
		cfg, _ := legacyConfig(t, dir)
		s, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Status(ctx)
		if err != nil || st.Outcome != refine.StatusComplete || st.Round != 4 || len(st.Rollbacks) != 1 {
			t.Fatalf("status = %s round %d, %d rollbacks, %v; want COMPLETE after round 4, 1 rollback", st.Outcome, st.Round, len(st.Rollbacks), err)
		}
		if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "again", Adjustments: []string{"be concrete"}}); err != nil {
			t.Fatalf("rollback to round 1 through schema-2 backups: %v", err)
		}
		if st, _ := s.Status(ctx); st.Round != 1 {
			t.Errorf("after the rollback: round %d, want 1", st.Round)
		}
		b, err := cfg.Store.Get(ctx, "state.json")
		if err != nil || !strings.HasPrefix(string(b), `{"checksum":"crc32c:`) {
			t.Errorf("state.json after the rollback is not sealed: %.60s (%v)", b, err)
		}
	})
	t.Run("paused replay", func(t *testing.T) {
		dir := copyDir(t, "testdata/legacy-b1a9ae5/paused")
		cfg, _ := legacyConfig(t, dir)
		s, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.Status(ctx)
		const q = "conflict-r2-ISSUE-R1-001"
		if st.Outcome != refine.StatusPaused || len(st.Pending) != 1 || st.Pending[0].ID != q {
			t.Fatalf("status = %s, pending %v; want PAUSED on %s", st.Outcome, st.Pending, q)
		}
		if err := s.Answer(ctx, q, refine.Answer{Key: "A"}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Run(ctx)
		if err != nil || !out.Status.Terminal() {
			t.Fatalf("Run = %s (%s), %v; want a terminal outcome", out.Status, out.Reason, err)
		}
		cfg.Store.(*fs.Store).Close()
		cfg2, _ := legacyConfig(t, dir)
		s2, err := refine.Open(ctx, cfg2)
		if err != nil {
			t.Fatal(err)
		}
		st2, _ := s2.Status(ctx)
		if st2.Outcome != out.Status || st2.Round != out.Round {
			t.Errorf("reopened: %s round %d, want %s round %d", st2.Outcome, st2.Round, out.Status, out.Round)
		}
	})
}

// The session folders under testdata/legacy-ec0199c and
// testdata/legacy-b1a9ae5 were written by those commits' CLIs (their
// READMEs say how). running/ and diverging/ replay testdata/legacy-replay:
// one HIGH gap, an issue in each of two rounds; diverging/ pauses on the
// divergence warning after round 2, running/ is the same session answered
// accept_complexity and cut short by the replay running out at round 3's
// Engineer call (RUNNING after round 2, with backups of rounds 0-2).
var legacyVersions = []string{"ec0199c", "b1a9ae5"}

// legacyGap is the one gap of the small legacy sessions.
var legacyGap = []gap.ID{"GAP-TEST-001"}

// openLegacyWith opens a copy of the legacy session folder dir with
// today's code, with the given roles and asker and no integration step
// (the old sessions had none, and the scripts below end where the rounds
// end).
func openLegacyWith(t *testing.T, dir string, eng, rev refine.Role, asker refine.Asker) (*refine.Session, refine.Config, string) {
	t.Helper()
	folder := copyDir(t, dir)
	cfg := legacyCfg(t, folder, eng, rev, asker)
	s, err := refine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open %s with today's code: %v", dir, err)
	}
	return s, cfg, folder
}

// legacyCfg is the Config of the session in folder, on its own Store.
func legacyCfg(t *testing.T, folder string, eng, rev refine.Role, asker refine.Asker) refine.Config {
	t.Helper()
	st, err := fs.Open(folder)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := refine.DefaultConfig()
	cfg.Store = st
	cfg.Integrate = false
	cfg.Engineer, cfg.Reviewer, cfg.Asker = eng, rev, asker
	return cfg
}

// reopenLegacy opens folder as a new process would, after closing the
// Store of the session that played it.
func reopenLegacy(t *testing.T, folder string, closeFirst refine.Store, eng, rev refine.Role, asker refine.Asker) *refine.Session {
	t.Helper()
	if c, ok := closeFirst.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := refine.Open(context.Background(), legacyCfg(t, folder, eng, rev, asker))
	if err != nil {
		t.Fatalf("open %s with today's code: %v", folder, err)
	}
	return s
}

// generatedRoles answer every call with a valid output for the gaps
// asked about: the Engineer resolves them, the Reviewer approves.
func generatedRoles() (eng, rev *refinetest.Role) {
	eng = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	return eng, rev
}

// callsOf lists a role's calls as "role call N round R attempt A".
func callsOf(r *refinetest.Role) []string {
	var out []string
	for _, c := range r.Calls() {
		out = append(out, fmt.Sprintf("%s call %d round %d attempt %d", c.Role, c.Call, c.Round, c.Attempt))
	}
	return out
}

// askedIDs lists the IDs of the questions a recording Asker was asked.
func askedIDs(a *refinetest.Asker) []string {
	var out []string
	for _, q := range a.Asked() {
		out = append(out, q.ID)
	}
	return out
}

// pendingIDsOf lists the IDs of questions.
func pendingIDsOf(qs []refine.Question) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.ID)
	}
	return out
}

// Every legacy session folder opens with today's code in the state its
// writer left it, and resumes to COMPLETE with generated roles; the
// questions it left pending are asked again first, and the finished
// session opens again with the same outcome.
func TestLegacyFixturesResumeToComplete(t *testing.T) {
	ctx := context.Background()
	type fixture struct {
		name    string
		status  refine.OutcomeStatus
		round   int
		pending []string
		// asked are the questions the resumed Run asks, in order, each
		// answered with its default.
		asked []string
		calls int // role calls the resumed Run makes
		// final is the round the resumed Run ends after.
		final int
	}
	fixtures := map[string][]fixture{
		"ec0199c": {
			{name: "running", status: refine.StatusRunning, round: 2, calls: 2, final: 3},
			{name: "diverging", status: refine.StatusPaused, round: 1, pending: []string{"r2-divergence"}, asked: []string{"r2-divergence"}, calls: 2, final: 3},
			{name: "paused", status: refine.StatusPaused, round: 1, pending: []string{"rate-warning-r2"}, asked: []string{"rate-warning-r2", "conflict-r2-ISSUE-R1-001"}, calls: 3, final: 3},
			{name: "demo", status: refine.StatusComplete, round: 4, final: 4},
		},
		"b1a9ae5": {
			{name: "running", status: refine.StatusRunning, round: 2, calls: 2, final: 3},
			{name: "diverging", status: refine.StatusPaused, round: 1, pending: []string{"r2-divergence"}, asked: []string{"r2-divergence"}, calls: 2, final: 3},
			{name: "paused", status: refine.StatusPaused, round: 1, pending: []string{"conflict-r2-ISSUE-R1-001"}, asked: []string{"conflict-r2-ISSUE-R1-001"}, calls: 3, final: 3},
			{name: "demo", status: refine.StatusComplete, round: 4, final: 4},
		},
	}
	for _, v := range legacyVersions {
		for _, f := range fixtures[v] {
			t.Run(v+"/"+f.name, func(t *testing.T) {
				eng, rev := generatedRoles()
				asker := auto()
				s, cfg, folder := openLegacyWith(t, "testdata/legacy-"+v+"/"+f.name, eng, rev, asker)
				st, err := s.Status(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.Outcome != f.status || st.Round != f.round || !cmp.Equal(pendingIDsOf(st.Pending), f.pending) {
					t.Fatalf("opened as %s round %d pending %v; want %s round %d pending %v", st.Outcome, st.Round, pendingIDsOf(st.Pending), f.status, f.round, f.pending)
				}
				out, err := s.Run(ctx)
				if err != nil || out.Status != refine.StatusComplete || out.Round != f.final {
					t.Fatalf("Run = %s round %d (%s), %v; want COMPLETE round %d", out.Status, out.Round, out.Reason, err, f.final)
				}
				if diff := cmp.Diff(f.asked, askedIDs(asker)); diff != "" {
					t.Errorf("questions asked (-want +got):\n%s", diff)
				}
				if n := eng.CallCount() + rev.CallCount(); n != f.calls {
					t.Errorf("resuming made %d role calls, want %d: %v %v", n, f.calls, callsOf(eng), callsOf(rev))
				}
				again, _ := reopenLegacy(t, folder, cfg.Store, refinetest.Script(), refinetest.Script(), refinetest.Keys()).Status(ctx)
				if again.Outcome != out.Status || again.Round != out.Round {
					t.Errorf("reopened: %s round %d, want %s round %d", again.Outcome, again.Round, out.Status, out.Round)
				}
			})
		}
	}
}

// A session cut short in round 3 by an old version resumes with the very
// call it was making (round 3, the Engineer's third call, attempt 1),
// under Run and under Next, and finishes with exactly the scripted
// responses and no question.
func TestLegacyRunningResumesTheCallInFlight(t *testing.T) {
	ctx := context.Background()
	for _, v := range legacyVersions {
		for _, driver := range []string{"Run", "Next"} {
			t.Run(v+"/"+driver, func(t *testing.T) {
				eng := refinetest.Script(refinetest.Revision("GAP-TEST-001", "ISSUE-R2-001", "state the timeout"))
				rev := refinetest.Script(refinetest.ReviewerOutput(3, legacyGap))
				asker := refinetest.Keys() // any question fails the run
				s, cfg, folder := openLegacyWith(t, "testdata/legacy-"+v+"/running", eng, rev, asker)
				st, _ := s.Status(ctx)
				if st.Outcome != refine.StatusRunning || st.Round != 2 || st.Calls != 4 || len(st.Pending) != 0 {
					t.Fatalf("opened as %s round %d, %d calls, pending %v; want RUNNING after round 2, 4 calls", st.Outcome, st.Round, st.Calls, pendingIDsOf(st.Pending))
				}
				var out refine.Outcome
				if driver == "Run" {
					var err error
					if out, err = s.Run(ctx); err != nil {
						t.Fatal(err)
					}
				} else {
					var readies []refine.Ready
					out, readies = drive(t, s, cfg.Store, eng, rev, asker)
					if len(readies[0].Calls) != 1 || readies[0].Calls[0].Call != 3 || readies[0].Calls[0].Round != 3 {
						t.Errorf("first Ready asks for %+v, want the Engineer's call 3 of round 3", readies[0].Calls)
					}
				}
				if out.Status != refine.StatusComplete || out.Round != 3 {
					t.Fatalf("outcome %s round %d (%s), want COMPLETE after round 3", out.Status, out.Round, out.Reason)
				}
				want := []string{"engineer call 3 round 3 attempt 1", "reviewer call 3 round 3 attempt 1"}
				if diff := cmp.Diff(want, append(callsOf(eng), callsOf(rev)...)); diff != "" {
					t.Errorf("calls (-want +got):\n%s", diff)
				}
				if len(asker.Asked()) != 0 {
					t.Errorf("asked %v, want no question", askedIDs(asker))
				}
				again, _ := reopenLegacy(t, folder, cfg.Store, refinetest.Script(), refinetest.Script(), refinetest.Keys()).Status(ctx)
				if again.Outcome != refine.StatusComplete || len(again.Gaps) != 1 || again.Gaps[0].State != gap.Accepted {
					t.Errorf("reopened: %s, gaps %+v; want COMPLETE with GAP-TEST-001 accepted", again.Outcome, again.Gaps)
				}
			})
		}
	}
}

// A legacy session rolls back through the backups its writer made:
// running/ back to round 1, then plays round 2 again from there, with the
// rollback's adjustment in its prompt, and finishes; the archives of the
// undone rounds are kept.
func TestLegacyRunningRollsBack(t *testing.T) {
	ctx := context.Background()
	for _, v := range legacyVersions {
		t.Run(v, func(t *testing.T) {
			eng := refinetest.Script(refinetest.Revision("GAP-TEST-001", "ISSUE-R1-001", ""))
			rev := refinetest.Script(refinetest.ReviewerOutput(2, legacyGap))
			// Leave round 2's archived decision (accept_complexity)
			// archived; keep the archives when the session ends.
			asker := refinetest.Keys("3", "1")
			s, cfg, folder := openLegacyWith(t, "testdata/legacy-"+v+"/running", eng, rev, asker)
			rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "round 2 went sideways", Adjustments: []string{"state the timeout"}})
			if err != nil {
				t.Fatalf("rollback to round 1 through %s's backups: %v", v, err)
			}
			// Round 3 was under way (its Engineer prompt is written): it is
			// undone too.
			if !cmp.Equal(rep.Undone, []int{3, 2}) || rep.Round != 1 || len(rep.Archives) != 2 {
				t.Fatalf("rollback report: undone %v, round %d, archives %v; want rounds 3 and 2 undone into an archive each", rep.Undone, rep.Round, rep.Archives)
			}
			for _, a := range rep.Archives {
				if _, err := cfg.Store.Get(ctx, a); err != nil {
					t.Errorf("archive %s: %v", a, err)
				}
			}
			st, _ := s.Status(ctx)
			if st.Round != 1 || len(st.Rollbacks) != 2 || st.Gaps[0].State == gap.Accepted {
				t.Fatalf("after the rollback: round %d, %d rollbacks, gap %s; want round 1, a rollback record per undone round, the gap open", st.Round, len(st.Rollbacks), st.Gaps[0].State)
			}
			out, err := s.Run(ctx)
			if err != nil || out.Status != refine.StatusComplete || out.Round != 2 {
				t.Fatalf("Run after the rollback = %s round %d (%s), %v; want COMPLETE after round 2; asked %v", out.Status, out.Round, out.Reason, err, askedIDs(asker))
			}
			// b1a9ae5 journaled round 3's Engineer call as in flight
			// (usage.next_call), so its number stays spent after the
			// rollback; ec0199c kept only the responses, so call 3 is free.
			engCall := map[string]int{"ec0199c": 3, "b1a9ae5": 4}[v]
			want := []string{fmt.Sprintf("engineer call %d round 2 attempt 1", engCall), "reviewer call 3 round 2 attempt 1"}
			if diff := cmp.Diff(want, append(callsOf(eng), callsOf(rev)...)); diff != "" {
				t.Errorf("calls after the rollback (-want +got):\n%s", diff)
			}
			if p := eng.Prompt(0); !containsAll(p, "state the timeout") {
				t.Errorf("the retried round's prompt lacks the rollback's adjustment:\n%s", p)
			}
			if diff := cmp.Diff([]string{"rollback-recovery-r2", "rollback-archives"}, askedIDs(asker)); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
			again, _ := reopenLegacy(t, folder, cfg.Store, refinetest.Script(), refinetest.Script(), refinetest.Keys()).Status(ctx)
			if again.Outcome != refine.StatusComplete || again.Round != 2 || len(again.Rollbacks) != 2 {
				t.Errorf("reopened: %s round %d, %d rollbacks; want COMPLETE round 2, 2 rollback records", again.Outcome, again.Round, len(again.Rollbacks))
			}
		})
	}
}

// The finished demo sessions roll back a round and play it again to
// COMPLETE. b1a9ae5's demo cannot go back to round 3 or 2: that version
// wrote its own rollback (journal record 15) into state.json only, so the
// backups made after it point into a journal with a hole (b1a9ae5's own
// CLI fails the same way). Today's code refuses with ErrCorrupt and
// persists nothing; the session, opened again as the next CLI command
// would, rolls back to round 1, before the hole.
func TestLegacyFinishedRollsBackAndFinishes(t *testing.T) {
	ctx := context.Background()
	for _, v := range legacyVersions {
		t.Run(v, func(t *testing.T) {
			eng, rev := generatedRoles()
			asker := auto()
			s, cfg, folder := openLegacyWith(t, "testdata/legacy-"+v+"/demo", eng, rev, asker)
			to, firstCall := 3, "engineer call 7 round 4 attempt 1"
			_, err := s.Rollback(ctx, refine.RollbackRequest{To: 3, Reason: "again", Adjustments: []string{"be concrete"}})
			if v == "b1a9ae5" {
				if !errors.Is(err, refine.ErrCorrupt) {
					t.Fatalf("rollback to round 3 over b1a9ae5's journal hole = %v, want ErrCorrupt", err)
				}
				s = reopenLegacy(t, folder, cfg.Store, eng, rev, asker)
				st, _ := s.Status(ctx)
				if st.Round != 4 || len(st.Rollbacks) != 1 || st.Outcome != refine.StatusComplete || len(st.Pending) != 0 {
					t.Fatalf("after the refused rollback: %s round %d, %d rollbacks, pending %v; want it unchanged", st.Outcome, st.Round, len(st.Rollbacks), pendingIDsOf(st.Pending))
				}
				to, firstCall = 1, "engineer call 7 round 2 attempt 1"
				_, err = s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "again", Adjustments: []string{"be concrete"}})
			}
			if err != nil {
				t.Fatalf("rollback to round %d: %v", to, err)
			}
			out, err := s.Run(ctx)
			if err != nil || out.Status != refine.StatusComplete || out.Round <= to {
				t.Fatalf("Run = %s round %d (%s), %v; want COMPLETE after round %d", out.Status, out.Round, out.Reason, err, to)
			}
			if calls := callsOf(eng); len(calls) == 0 || calls[0] != firstCall {
				t.Errorf("Engineer calls %v, want round %d played again from %q", calls, to+1, firstCall)
			}
			if st, _ := s.Status(ctx); len(st.Rollbacks) < 2 {
				t.Errorf("%d rollbacks, want the demo's one and this one", len(st.Rollbacks))
			}
		})
	}
}

// A Rollback refused with ErrCorrupt leaves the session able to take
// another in the same process (it left its dialog in memory: "a rollback
// of round 4 already waits for an answer", with no question pending in
// Status), and its pending questions as stored.
func TestLegacyRefusedRollbackLeavesNoDialog(t *testing.T) {
	ctx := context.Background()
	eng, rev := generatedRoles()
	s, _, _ := openLegacyWith(t, "testdata/legacy-b1a9ae5/demo", eng, rev, auto())
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 3, Reason: "again", Adjustments: []string{"be concrete"}}); !errors.Is(err, refine.ErrCorrupt) {
		t.Fatalf("rollback to round 3 = %v, want ErrCorrupt", err)
	}
	if st, err := s.Status(ctx); err != nil || len(st.Pending) != 0 {
		t.Fatalf("status after the refused rollback: %d pending, %v; want none", len(st.Pending), err)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "again", Adjustments: []string{"be concrete"}}); err != nil {
		t.Fatalf("rollback to round 1 after a refused one: %v", err)
	}
}

// A legacy session paused on a question plays on exactly as a session
// started by today's code does from the same point: answering the
// divergence warning with a rollback makes the same calls and asks the
// same questions, and leaves the same gaps and convergence rows.
func TestLegacyDivergingPlaysAsToday(t *testing.T) {
	ctx := context.Background()
	recorded := func(name string) string {
		b, err := os.ReadFile("testdata/legacy-replay/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// The roles replay the recording for its calls, then generate.
	roles := func() (eng, rev *refinetest.Role) {
		gen := func(role refine.RoleName, content func(req refine.Request) string) *refinetest.Role {
			return refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
				if req.Call <= 2 {
					return refine.Response{Content: recorded(fmt.Sprintf("%s-%03d.md", role, req.Call))}, nil
				}
				return refine.Response{Content: content(req)}, nil
			})
		}
		return gen(refine.Engineer, func(req refine.Request) string { return refinetest.EngineerOutput(req.Gaps...) }),
			gen(refine.Reviewer, func(req refine.Request) string { return refinetest.ReviewerOutput(req.Round, req.Gaps) })
	}
	type played struct {
		calls, asked []string
		status       refine.Status
	}
	play := func(s *refine.Session, eng, rev *refinetest.Role, asker *refinetest.Asker) played {
		out, err := s.Run(ctx)
		if err != nil || out.Status != refine.StatusComplete {
			t.Fatalf("Run = %s (%s), %v; want COMPLETE", out.Status, out.Reason, err)
		}
		st, _ := s.Status(ctx)
		return played{calls: append(callsOf(eng), callsOf(rev)...), asked: askedIDs(asker), status: st}
	}

	eng, rev := roles()
	asker := then(refinetest.Keys("rollback"))
	cfg := refinetest.Config(eng, rev, asker, gap.Gap{ID: "GAP-TEST-001", Title: "The test gap", Severity: gap.High})
	fresh, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	today := play(fresh, eng, rev, asker)
	// The first four calls made the recorded rounds the legacy folders hold.
	today.calls = slicesDeleteRecorded(today.calls)

	for _, v := range legacyVersions {
		t.Run(v, func(t *testing.T) {
			eng, rev := roles()
			asker := then(refinetest.Keys("rollback"))
			s, _, _ := openLegacyWith(t, "testdata/legacy-"+v+"/diverging", eng, rev, asker)
			got := play(s, eng, rev, asker)
			if diff := cmp.Diff(today.calls, got.calls); diff != "" {
				t.Errorf("calls after the pause (-today +legacy):\n%s", diff)
			}
			if diff := cmp.Diff(today.asked, got.asked); diff != "" {
				t.Errorf("questions (-today +legacy):\n%s", diff)
			}
			if diff := cmp.Diff(today.status.Convergence, got.status.Convergence); diff != "" {
				t.Errorf("convergence rows (-today +legacy):\n%s", diff)
			}
			if len(got.status.Rollbacks) != 1 || got.status.Outcome != today.status.Outcome || got.status.Round != today.status.Round {
				t.Errorf("legacy ended %s round %d with %d rollbacks; today's session %s round %d", got.status.Outcome, got.status.Round, len(got.status.Rollbacks), today.status.Outcome, today.status.Round)
			}
		})
	}
}

// slicesDeleteRecorded drops the calls of the recorded rounds (calls 1
// and 2 of each role), which a resumed legacy session does not make.
func slicesDeleteRecorded(calls []string) []string {
	var out []string
	for _, c := range calls {
		var role string
		var call, round, attempt int
		if _, err := fmt.Sscanf(c, "%s call %d round %d attempt %d", &role, &call, &round, &attempt); err == nil && call <= 2 {
			continue
		}
		out = append(out, c)
	}
	return out
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
