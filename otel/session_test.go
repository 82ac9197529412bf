package refineotel_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	refineotel "github.com/refine-spec/refine/otel"
	"github.com/refine-spec/refine/refinetest"
)

const testGap gap.ID = "GAP-TEST-001"

// named makes a scripted Role name its model, as every backend does.
func named(r refine.Role, model string) refine.Role {
	return refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		resp, err := r.Respond(ctx, req)
		resp.Model, resp.FinishReason = model, "stop"
		return resp, err
	})
}

// instrument puts the Observer and the wrapped roles into cfg.
func instrument(t *testing.T, cfg *refine.Config, opts refineotel.Options) *refineotel.Observer {
	t.Helper()
	return instrumentRoles(t, cfg, cfg.Engineer, cfg.Reviewer, opts)
}

// instrumentRoles puts the Observer and the roles, wrapped, into cfg.
func instrumentRoles(t *testing.T, cfg *refine.Config, eng, rev refine.Role, opts refineotel.Options) *refineotel.Observer {
	t.Helper()
	obs, err := refineotel.NewObserver(opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Observer = obs
	cfg.Engineer = refineotel.WrapRole(eng, opts)
	cfg.Reviewer = refineotel.WrapRole(rev, opts)
	return obs
}

// twoRounds scripts a session that needs a validation retry in round 1
// and a revision in round 2.
func twoRounds() refine.Config {
	eng := refinetest.Script(
		"SECRET-PROMPT-ANSWER: thoughts on the gap, without headers.",
		refinetest.EngineerOutput(testGap),
		refinetest.Revision(testGap, refinetest.IssueID(1, 1), "specify the retry bound explicitly"),
	)
	rev := refinetest.Script(
		refinetest.ReviewerOutput(1, []gap.ID{testGap}, refinetest.Issue{Severity: gap.High, Summary: "retry bound unspecified"}),
		refinetest.ReviewerOutput(2, []gap.ID{testGap}),
	)
	cfg := refinetest.Config(named(eng, "model-e"), named(rev, "model-r"), refinetest.Answers())
	cfg.Spec = "# Test Spec\n\nSECRET-SPEC-TEXT under refinement.\n"
	return cfg
}

func TestSessionSpanTree(t *testing.T) {
	ctx := context.Background()
	tm := newTelemetry(t)
	cfg := twoRounds()
	instrument(t, &cfg, tm.options(false))
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("Run = %+v, %v; want COMPLETE in round 2", out, err)
	}
	spans := tm.spans.GetSpans()
	chat := func(role, model string, attempt, round int) string {
		return "      chat " + model + " round=" + itoa(round) + " role=" + role + " attempt=" + itoa(attempt) +
			" gen_ai.operation.name=chat gen_ai.request.model=" + model + " gen_ai.response.model=" + model +
			" gen_ai.usage.input_tokens=100 gen_ai.usage.output_tokens=50 gen_ai.response.finish_reasons=[\"stop\"]"
	}
	want := []string{
		"refine.run session.id=session-1 round=2 outcome=COMPLETE <refine.session.finished>",
		"  refine.round round=1 <refine.phase engineer> <refine.validation_failed> <refine.retry> <refine.phase disagreement> <refine.phase reviewer> <refine.phase synthesize> <refine.phase converge>",
		"    refine.attempt round=1 role=engineer attempt=1 retry=0 example.tier=3 validation.success=false failure_type=WRONG_FORMAT [error: WRONG_FORMAT]",
		chat("engineer", "model-e", 1, 1),
		"    refine.attempt round=1 role=engineer attempt=2 retry=1 example.tier=3 validation.success=true",
		chat("engineer", "model-e", 2, 1),
		"    refine.attempt round=1 role=reviewer attempt=1 retry=0 example.tier=3 validation.success=true",
		chat("reviewer", "model-r", 1, 1),
		"  refine.round round=2 <refine.phase engineer> <refine.phase disagreement> <refine.phase reviewer> <refine.phase synthesize> <refine.phase converge>",
		"    refine.attempt round=2 role=engineer attempt=1 retry=0 example.tier=3 validation.success=true",
		chat("engineer", "model-e", 1, 2),
		"    refine.attempt round=2 role=reviewer attempt=1 retry=0 example.tier=3 validation.success=true",
		chat("reviewer", "model-r", 1, 2),
	}
	if diff := cmp.Diff(want, tree(spans)); diff != "" {
		t.Errorf("span tree (-want +got):\n%s", diff)
	}
	if text := allText(spans); strings.Contains(text, "SECRET") {
		t.Errorf("prompt or response text recorded without IncludeContent")
	}

	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obs := cfg.Observer.(*refineotel.Observer)
	obs.RecordStatus(st)
	got := tm.sums(t)
	for k, v := range map[string]int64{
		"refine.validation.failures{refine.failure_type=WRONG_FORMAT,refine.role=engineer}":                                                                  1,
		"refine.retries{refine.failure_type=WRONG_FORMAT,refine.role=engineer}":                                                                              1,
		"refine.tokens{gen_ai.operation.name=chat,gen_ai.request.model=model-e,gen_ai.response.model=model-e,gen_ai.token.type=input,refine.role=engineer}":  300,
		"refine.tokens{gen_ai.operation.name=chat,gen_ai.request.model=model-r,gen_ai.response.model=model-r,gen_ai.token.type=output,refine.role=reviewer}": 100,
		"gen_ai.client.operation.duration{gen_ai.operation.name=chat,gen_ai.request.model=model-e,gen_ai.response.model=model-e,refine.role=engineer}#count": 3,
		"refine.gaps.open{refine.gap.severity=HIGH}": 0,
		"refine.rollbacks":                           0,
	} {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
		if _, ok := got[k]; !ok {
			t.Errorf("metric %s missing; have %v", k, got)
		}
	}
}

func TestSessionContentWhenOptedIn(t *testing.T) {
	ctx := context.Background()
	tm := newTelemetry(t)
	cfg := twoRounds()
	instrument(t, &cfg, tm.options(true))
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	text := allText(tm.spans.GetSpans())
	for _, want := range []string{"SECRET-SPEC-TEXT", "SECRET-PROMPT-ANSWER"} {
		if !strings.Contains(text, want) {
			t.Errorf("IncludeContent: %s not recorded", want)
		}
	}
}

func TestPausedAndResumedRunsAreLinked(t *testing.T) {
	ctx := context.Background()
	tm := newTelemetry(t)
	eng := refinetest.Script("bad 1", "bad 2", "bad 3", refinetest.EngineerOutput(testGap))
	rev := refinetest.Script(refinetest.ReviewerOutput(1, []gap.ID{testGap}))
	cfg := refinetest.Config(named(eng, "m"), named(rev, "m"), refine.DeferAsker{})
	opts := tm.options(false)
	instrument(t, &cfg, opts)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused {
		t.Fatalf("first run = %+v, %v; want PAUSED", out, err)
	}
	first := tm.spans.GetSpans()
	tm.spans.Reset()

	// Resume in a "new process": Open on the same store, new Observer.
	cfg.Asker = refinetest.Answers()
	instrumentRoles(t, &cfg, named(eng, "m"), named(rev, "m"), opts)
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Answer(ctx, out.Pending[0].ID, refine.Answer{Key: "3", Text: "use headers"}); err != nil {
		t.Fatal(err)
	}
	if out, err := s2.Run(ctx); err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resumed run = %+v, %v", out, err)
	}
	second := tm.spans.GetSpans()

	run1, run2 := runSpan(t, first), runSpan(t, second)
	if got := attr(run1.Attributes, refineotel.KeyOutcome); got != "PAUSED" {
		t.Errorf("first run outcome %q", got)
	}
	if run1.SpanContext.TraceID() == run2.SpanContext.TraceID() {
		t.Errorf("runs share trace %s", run1.SpanContext.TraceID())
	}
	if len(run2.Links) != 1 || run2.Links[0].SpanContext.TraceID() != run1.SpanContext.TraceID() ||
		run2.Links[0].SpanContext.SpanID() != run1.SpanContext.SpanID() {
		t.Errorf("resumed run links %+v, want the paused run %v", run2.Links, run1.SpanContext)
	}
	want := []string{
		"refine.run session.id=session-1 round=1 outcome=PAUSED",
		"  refine.round round=1 <refine.phase engineer> <refine.validation_failed> <refine.retry> <refine.validation_failed> <refine.retry> <refine.validation_failed> <refine.escalation> <refine.question.asked>",
	}
	if got := tree(first); len(got) < 2 || !cmp.Equal(got[:2], want) {
		t.Errorf("first run tree starts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := tree(second); !strings.Contains(got[1], "<refine.question.answered>") {
		t.Errorf("resumed run tree lacks the answer:\n%s", strings.Join(got, "\n"))
	}
}

func runSpan(t *testing.T, spans []tracetest.SpanStub) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.Name == refineotel.SpanRun {
			return s
		}
	}
	t.Fatalf("no run span among %d", len(spans))
	return tracetest.SpanStub{}
}

func itoa(n int) string { return strconv.Itoa(n) }
