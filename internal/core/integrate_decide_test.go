package core

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// The integration's decisions are functions of its state: these tests
// play them without a Session, store or role.

func TestNewIntegration(t *testing.T) {
	st := &state.State{Outcome: StatusComplete, Round: 4,
		Decisions:         []state.DecisionRecord{{ID: "DECISION-R3-001"}, {ID: "DECISION-R1-002"}},
		ConflictDecisions: []conflict.Ruling{{ID: "DECISION-R2-001"}}}
	in := NewIntegration(st, true, 2)
	want := &state.IntegrationState{Step: state.IntegEngineer, Round: 4, EngineerBudget: 3,
		Decisions: []string{"DECISION-R1-002", "DECISION-R2-001", "DECISION-R3-001"}}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("integration on (-want +got):\n%s", diff)
	}
	if in := NewIntegration(st, false, 2); in.Step != state.IntegDone || in.Form != state.FinalSpecAppendix || !strings.Contains(in.Reason, "--no-integrate") {
		t.Errorf("integration off = %+v, want done in the appendix form", in)
	}
	st.Outcome = StatusAbandoned
	if in := NewIntegration(st, true, 2); in != nil {
		t.Errorf("abandoned session = %+v, want no integration", in)
	}
}

func TestIntegrationStateDecisions(t *testing.T) {
	high := conflict.Issue{ID: "ISSUE-R2-001", Severity: gap.High, Summary: "two limits"}
	low := conflict.Issue{ID: "ISSUE-R2-002", Severity: gap.Low, Summary: "typo"}
	fail := state.AttemptRec{N: 1, FailureType: validate.IntegrationStructure, Message: "no Resolution Log"}
	tests := []struct {
		name string
		in   state.IntegrationState
		play func(in *state.IntegrationState) any
		want state.IntegrationState
		ret  any
	}{{
		name: "a valid attempt is accepted and reviewed",
		in:   state.IntegrationState{Step: state.IntegEngineer, Engineer: []state.AttemptRec{fail}, EngineerBudget: 3, Reviewer: []state.AttemptRec{{N: 1}}},
		play: func(in *state.IntegrationState) any {
			return engineerSettled(in, state.AttemptRec{N: 2, Success: true}, 2)
		},
		want: state.IntegrationState{Step: state.IntegReview, Engineer: []state.AttemptRec{fail, {N: 2, Success: true}}, EngineerBudget: 3, Accepted: 2,
			Reviewer: []state.AttemptRec{{N: 1}}, ReviewerFrom: 1, ReviewerBudget: 4},
		ret: true,
	}, {
		name: "a failed attempt is recorded only",
		in:   state.IntegrationState{Step: state.IntegEngineer, EngineerBudget: 3},
		play: func(in *state.IntegrationState) any { return engineerSettled(in, fail, 2) },
		want: state.IntegrationState{Step: state.IntegEngineer, Engineer: []state.AttemptRec{fail}, EngineerBudget: 3},
		ret:  false,
	}, {
		name: "only LOW issues: done",
		in:   state.IntegrationState{Step: state.IntegReview, Round: 1},
		play: func(in *state.IntegrationState) any {
			return integrationReviewed(in, []validate.Issue{{ID: low.ID, Severity: low.Severity, Summary: low.Summary}})
		},
		want: state.IntegrationState{Step: state.IntegReview, Round: 1, Reviews: 1, Issues: []conflict.Issue{{ID: low.ID, Round: 2, Severity: low.Severity, Summary: low.Summary}}},
		ret:  true,
	}, {
		name: "a HIGH issue gives one more attempt",
		in:   state.IntegrationState{Step: state.IntegReview, Round: 1, Engineer: []state.AttemptRec{fail, {N: 2, Success: true}}, EngineerBudget: 3},
		play: func(in *state.IntegrationState) any {
			return integrationReviewed(in, []validate.Issue{{ID: high.ID, Severity: high.Severity, Summary: high.Summary}})
		},
		want: state.IntegrationState{Step: state.IntegEngineer, Round: 1, Engineer: []state.AttemptRec{fail, {N: 2, Success: true}}, Reviews: 1, Retried: true,
			EngineerFrom: 2, EngineerBudget: 3, Issues: []conflict.Issue{{ID: high.ID, Round: 2, Severity: high.Severity, Summary: high.Summary}}},
		ret: false,
	}, {
		name: "a HIGH issue after the retry is asked",
		in:   state.IntegrationState{Step: state.IntegReview, Round: 1, Retried: true},
		play: func(in *state.IntegrationState) any {
			return integrationReviewed(in, []validate.Issue{{ID: high.ID, Severity: high.Severity, Summary: high.Summary}})
		},
		want: state.IntegrationState{Step: state.IntegAsk, Round: 1, Retried: true, Reviews: 1, Issues: []conflict.Issue{{ID: high.ID, Round: 2, Severity: high.Severity, Summary: high.Summary}}},
		ret:  false,
	}, {
		name: "accepting lists the HIGH issues as known",
		in:   state.IntegrationState{Step: state.IntegAsk, Accepted: 2, Issues: []conflict.Issue{high, low}},
		play: func(in *state.IntegrationState) any {
			f, w := integrationAnswered(in, IntegKeyAccept, 2)
			return f + "|" + w
		},
		want: state.IntegrationState{Step: state.IntegAsk, Accepted: 2, Asked: 1, Issues: []conflict.Issue{high, low}, KnownIssues: []conflict.Issue{high}},
		ret:  state.FinalSpecIntegrated + "|",
	}, {
		// The run takes the failed attempt in: the next one answers it.
		name: "a retry with nothing accepted gets the whole budget",
		in:   state.IntegrationState{Step: state.IntegAsk, Engineer: []state.AttemptRec{fail}},
		play: func(in *state.IntegrationState) any {
			f, w := integrationAnswered(in, IntegKeyRetry, 2)
			return f + "|" + w
		},
		want: state.IntegrationState{Step: state.IntegEngineer, Engineer: []state.AttemptRec{fail}, Asked: 1, EngineerFrom: 0, EngineerBudget: 4},
		ret:  "|",
	}, {
		name: "the appendix says why",
		in:   state.IntegrationState{Step: state.IntegAsk, Engineer: []state.AttemptRec{fail}},
		play: func(in *state.IntegrationState) any {
			f, w := integrationAnswered(in, IntegKeyAppendix, 2)
			return f + "|" + w
		},
		want: state.IntegrationState{Step: state.IntegAsk, Engineer: []state.AttemptRec{fail}, Asked: 1},
		ret:  state.FinalSpecAppendix + "|the integration failed validation 1 times (last: INTEGRATION_STRUCTURE: no Resolution Log) and the user kept the appendix form",
	}, {
		name: "stopped with nothing accepted: the appendix",
		in:   state.IntegrationState{Step: state.IntegEngineer, Engineer: []state.AttemptRec{fail}},
		play: func(in *state.IntegrationState) any { return integrationStopped(in, "no response") },
		want: state.IntegrationState{Step: state.IntegEngineer, Engineer: []state.AttemptRec{fail}},
		ret:  true,
	}, {
		name: "stopped retry after a review: the user decides",
		in:   state.IntegrationState{Step: state.IntegEngineer, Accepted: 1, Retried: true},
		play: func(in *state.IntegrationState) any { return integrationStopped(in, "no response") },
		want: state.IntegrationState{Step: state.IntegAsk, Accepted: 1, Retried: true, Notes: []string{"the integration retry after the consistency review was not made: no response"}},
		ret:  false,
	}, {
		name: "a failed part is named in its message",
		in:   state.IntegrationState{Step: state.IntegEngineer, PartsMode: true, Parts: []int{0}, EngineerBudget: 3},
		play: func(in *state.IntegrationState) any { partSettled(in, fail, 1, 3, 2); return nil },
		want: state.IntegrationState{Step: state.IntegEngineer, PartsMode: true, Parts: []int{0}, EngineerBudget: 3,
			Engineer: []state.AttemptRec{{N: 1, FailureType: fail.FailureType, Message: "part 2 of 3: no Resolution Log"}}},
	}, {
		name: "a valid part starts the next part's run",
		in:   state.IntegrationState{Step: state.IntegEngineer, PartsMode: true, Engineer: []state.AttemptRec{fail}, EngineerBudget: 3},
		play: func(in *state.IntegrationState) any {
			partSettled(in, state.AttemptRec{N: 2, Success: true}, 0, 3, 2)
			return nil
		},
		want: state.IntegrationState{Step: state.IntegEngineer, PartsMode: true, Engineer: []state.AttemptRec{fail, {N: 2, Success: true}}, Parts: []int{2},
			EngineerFrom: 2, EngineerBudget: 5},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			ret := tt.play(&in)
			if diff := cmp.Diff(tt.want, in, cmp.AllowUnexported(state.IntegrationState{})); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			if ret != tt.ret {
				t.Errorf("returned %v, want %v", ret, tt.ret)
			}
		})
	}
}

func TestJoinPartTexts(t *testing.T) {
	log := func(rows ...string) string {
		return "## Resolution Log\n\n| Item | Section(s) | Note |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	}
	texts := []string{
		"# Spec v1.0\n\n## 1. A\n\nA merged.\n\n" + log("| GAP-TE-001 | 1. A | merged |"),
		"## 2. B\n\nB as written.\n",
		"## 3. C\n\nC merged.\n\n## Known Limitations\n\nNone.\n\n" + log("| GAP-TE-002 | 3. C | merged |", "| DECISION-R1-001 | — | process |"),
	}
	want := "# Spec v1.0\n\n## 1. A\n\nA merged.\n\n## 2. B\n\nB as written.\n\n## 3. C\n\nC merged.\n\n## Known Limitations\n\nNone.\n\n" +
		log("| GAP-TE-001 | 1. A | merged |", "| GAP-TE-002 | 3. C | merged |", "| DECISION-R1-001 | — | process |")
	if diff := cmp.Diff(want, joinPartTexts(texts)); diff != "" {
		t.Errorf("joined (-want +got):\n%s", diff)
	}
}

func TestCleanupDeletes(t *testing.T) {
	safe := []rollback.ArchiveInfo{{Name: "round_001_rolled_back_1.tar.gz"}, {Name: "round_002_rolled_back_1.tar.gz"}}
	// Moved to cold storage (moveToCold refuses an unsafe archive): every
	// archive leaves the session.
	if got, want := CleanupDeletes(rollback.CleanupCold, safe, time.Time{}), []store.Op{store.Delete(safe[0].Name), store.Delete(safe[1].Name)}; !cmp.Equal(got, want) {
		t.Errorf("cold = %v, want %v", got, want)
	}
	// Deleted: an unsafe archive stays for a person to look at.
	mixed := []rollback.ArchiveInfo{safe[0], {Name: "round_003_rolled_back_1.tar.gz", Unsafe: "a link"}}
	if got, want := CleanupDeletes(rollback.CleanupDelete, mixed, time.Time{}), []store.Op{store.Delete(safe[0].Name)}; !cmp.Equal(got, want) {
		t.Errorf("delete = %v, want %v", got, want)
	}
	// Kept: none leaves.
	if got := CleanupDeletes(rollback.CleanupKeep, safe, time.Time{}); len(got) != 0 {
		t.Errorf("keep = %v, want nothing removed", got)
	}
}
