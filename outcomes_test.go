package refine_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// stallingRoles: the Engineer proposes every assigned gap, the Reviewer
// always raises a HIGH issue, so no round makes progress and the
// divergence question comes after round 2.
func stallingRoles() (refine.Role, refine.Role) {
	eng := refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: strings.Replace(engineerDoc(req.Gaps...), "### Proposed Solution", "### Proposed Solution\n\nRound "+itoa(req.Round)+" revision.", 1)}, nil
	})
	rev := refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: reviewerDoc(req.Round, req.Gaps[0], "HIGH: still unclear")}, nil
	})
	return eng, rev
}

func itoa(n int) string { return strconv.Itoa(n) }

// answerKind answers questions of one kind with a key and text, and
// everything else with its default.
// The first question of that kind gets key; later ones "stop", so a
// session that keeps stalling ends.
func answerKind(kind refine.QuestionKind, key, text string, asked *[]refine.Question) refine.Asker {
	return refine.AskerFunc(func(ctx context.Context, q refine.Question) (refine.Answer, error) {
		*asked = append(*asked, q)
		if q.Kind == kind {
			for _, p := range (*asked)[:len(*asked)-1] {
				if p.Kind == kind {
					return refine.Answer{Key: "stop"}, nil
				}
			}
			return refine.Answer{Key: key, Text: text}, nil
		}
		return refine.DefaultAsker{}.Ask(ctx, q)
	})
}

func TestDivergenceAnswers(t *testing.T) {
	gaps := []gap.Gap{{ID: "GAP-DV-001", Severity: gap.High}, {ID: "GAP-DV-002", Severity: gap.Medium}, {ID: "GAP-DV-003", Severity: gap.Low}}
	tests := []struct {
		key, text   string
		wantOutcome refine.OutcomeStatus
		check       func(t *testing.T, st refine.Status, cfg refine.Config)
	}{
		{key: "narrow_scope", wantOutcome: refine.StatusStallExit, check: func(t *testing.T, st refine.Status, _ refine.Config) {
			for _, g := range st.Gaps {
				if g.Severity != gap.High && g.State != gap.Deferred {
					t.Errorf("%s (%s) is %s, want DEFERRED", g.ID, g.Severity, g.State)
				}
			}
		}},
		{key: "accept_complexity", wantOutcome: refine.StatusMaxRounds, check: func(t *testing.T, st refine.Status, _ refine.Config) {
			if st.ConvergenceState == "DIVERGENCE_WARNING" {
				t.Errorf("warning right after accepting complexity")
			}
		}},
		{key: "pause_for_input", text: "Prefer cursors everywhere.", wantOutcome: refine.StatusStallExit, check: func(t *testing.T, _ refine.Status, cfg refine.Config) {
			if !strings.Contains(get(t, cfg, "decisions.md"), "Prefer cursors everywhere.") {
				t.Errorf("the input did not become a standing adjustment")
			}
		}},
		{key: "force_complete", wantOutcome: refine.StatusUserApproved},
		{key: "stop", wantOutcome: refine.StatusStallExit},
		{key: "rollback", text: "Try smaller proposals.", wantOutcome: refine.StatusStallExit, check: func(t *testing.T, st refine.Status, _ refine.Config) {
			if len(st.Rollbacks) == 0 {
				t.Errorf("no rollback recorded")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			eng, rev := stallingRoles()
			var asked []refine.Question
			cfg := refinetest.Config(eng, rev, answerKind(refine.KindDivergence, tt.key, tt.text, &asked), gaps...)
			cfg.GapsPerRound = 1
			cfg.MaxRounds = 4
			s, out := run(t, cfg)
			if out.Status != tt.wantOutcome {
				t.Fatalf("outcome %s (%s), want %s", out.Status, out.Reason, tt.wantOutcome)
			}
			var div *refine.Question
			for i := range asked {
				if asked[i].Kind == refine.KindDivergence {
					div = &asked[i]
					break
				}
			}
			if div == nil || div.Round != 2 {
				t.Fatalf("divergence question not asked after round 2: %+v", kindsOf(asked))
			}
			var keys []string
			for _, o := range div.Options {
				keys = append(keys, o.Key)
			}
			if strings.Join(keys, ",") != "narrow_scope,accept_complexity,pause_for_input,force_complete,rollback,stop" {
				t.Errorf("divergence options = %v", keys)
			}
			st, _ := s.Status(context.Background())
			if tt.check != nil {
				tt.check(t, st, cfg)
			}
			if out.Status.Terminal() && !strings.Contains(get(t, cfg, "final_summary.md"), string(out.Status)) {
				t.Errorf("final_summary.md does not name %s", out.Status)
			}
		})
	}
}

func TestEveryOutcome(t *testing.T) {
	ctx := context.Background()
	high := []gap.Gap{{ID: "GAP-OC-001", Severity: gap.High}}
	twoLevels := []gap.Gap{{ID: "GAP-OC-001", Severity: gap.High}, {ID: "GAP-OC-002", Severity: gap.Low}}
	tests := []struct {
		name  string
		setup func() refine.Config
		want  refine.OutcomeStatus
	}{
		{"COMPLETE", func() refine.Config {
			return refinetest.Config(refinetest.Script(engineerDoc("GAP-OC-001")), refinetest.Script(reviewerDoc(1, "GAP-OC-001")), auto(), high...)
		}, refine.StatusComplete},
		{"GOOD_ENOUGH", func() refine.Config {
			// Round 1 resolves the HIGH gap; round 2 makes no progress on the
			// LOW one, so the automated policy accepts.
			eng := refinetest.Script(engineerDoc("GAP-OC-001"), engineerDoc("GAP-OC-002"))
			rev := refinetest.Script(reviewerDoc(1, "GAP-OC-001"), reviewerDoc(2, "GAP-OC-002", "HIGH: unclear"))
			cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, twoLevels...)
			cfg.GapsPerRound = 1
			return cfg
		}, refine.StatusGoodEnough},
		{"USER_APPROVED", func() refine.Config {
			eng, rev := stallingRoles()
			var asked []refine.Question
			return refinetest.Config(eng, rev, answerKind(refine.KindDivergence, "force_complete", "", &asked), high...)
		}, refine.StatusUserApproved},
		{"MAX_ROUNDS", func() refine.Config {
			eng, rev := stallingRoles()
			cfg := refinetest.Config(eng, rev, auto(), high...)
			cfg.MaxRounds = 1
			return cfg
		}, refine.StatusMaxRounds},
		{"STALL_EXIT", func() refine.Config {
			eng, rev := stallingRoles()
			var asked []refine.Question
			return refinetest.Config(eng, rev, answerKind(refine.KindDivergence, "stop", "", &asked), high...)
		}, refine.StatusStallExit},
		{"ABANDONED", func() refine.Config {
			// Round 1: the Reviewer fails and is skipped. Round 2: the
			// Engineer fails and is skipped, the Reviewer fails again on the
			// unreviewed proposal: both failed, and the user abandons.
			bad := refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
				return refine.Response{Content: "nothing useful"}, nil
			})
			eng := refinetest.Script(engineerDoc("GAP-OC-001"), "x", "y", "z")
			ask := then(refinetest.Keys("1", "1", "1", "3"))
			cfg := refinetest.Config(eng, bad, ask, twoLevels...)
			cfg.GapsPerRound = 1
			return cfg
		}, refine.StatusAbandoned},
		{"PAUSED", func() refine.Config {
			return refinetest.Config(refinetest.Script("bad", "bad", "bad"), refinetest.Script(), refine.DeferAsker{}, high...)
		}, refine.StatusPaused},
		{"FAILED", func() refine.Config {
			boom := refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
				return refine.Response{}, errors.New("backend down")
			})
			return refinetest.Config(boom, boom, auto(), high...)
		}, refine.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.setup()
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := s.Run(ctx)
			if out.Status != tt.want {
				t.Fatalf("outcome %s (%s), want %s", out.Status, out.Reason, tt.want)
			}
		})
	}
}
