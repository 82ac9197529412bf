package refineotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	refineotel "github.com/refine-spec/refine/otel"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/validate"
)

// handRun plays, with hand-made events, what the engine reports for one
// run of one round: an Engineer attempt failing validation, a retry that
// passes with a tier-1 example, a Reviewer attempt, a question asked and
// answered. Roles are called with each attempt's context, as the engine
// does. It returns the run's link.
func handRun(t *testing.T, obs *refineotel.Observer, role refine.Role, previous string) string {
	t.Helper()
	ctx := context.Background()
	runCtx := obs.Begin(ctx, refine.Event{Kind: refine.EventRunStarted, PreviousRun: previous})
	link := obs.RunLink(runCtx)
	roundCtx := obs.Begin(runCtx, refine.Event{Kind: refine.EventRoundStarted, Round: 1})
	attempt := func(r refine.RoleName, k, tier int, failure validate.FailureType) {
		e := refine.Event{Kind: refine.EventAttemptStarted, Round: 1, Role: r, Attempt: k, ExampleTier: tier}
		actx := obs.Begin(roundCtx, e)
		obs.Observe(withCtx(e, actx))
		resp, err := role.Respond(actx, refine.Request{Role: r, Round: 1, Attempt: k, Messages: []refine.Message{{Role: "user", Content: "SECRET-PROMPT"}}})
		fin := refine.Event{Kind: refine.EventAttemptFinished, Round: 1, Role: r, Attempt: k, FailureType: failure, Model: resp.Model, ExampleTier: tier, Success: failure == ""}
		if err != nil {
			fin.FailureType, fin.Message, fin.Err, fin.Success = "EXECUTION_ERROR", err.Error(), err, false
		} else if failure != "" {
			fin.Message = "line 1 has 'SECRET-RESPONSE'"
		}
		obs.End(actx, fin)
		obs.Observe(withCtx(fin, roundCtx))
	}
	attempt(refine.Engineer, 1, 0, "WRONG_FORMAT")
	obs.Observe(refine.Event{Kind: refine.EventValidationFailed, Context: roundCtx, Round: 1, Role: refine.Engineer, Attempt: 1, FailureType: "WRONG_FORMAT", Message: "line 1 has 'SECRET-RESPONSE'"})
	obs.Observe(refine.Event{Kind: refine.EventRetry, Context: roundCtx, Round: 1, Role: refine.Engineer, Attempt: 2, FailureType: "WRONG_FORMAT"})
	attempt(refine.Engineer, 2, 1, "")
	attempt(refine.Reviewer, 1, 0, "")
	q := &refine.Question{ID: "Q-001", Kind: "conflict", Title: "SECRET-TITLE", Body: "SECRET-BODY"}
	obs.Observe(refine.Event{Kind: refine.EventQuestionAsked, Context: roundCtx, Round: 1, Question: q})
	obs.Observe(refine.Event{Kind: refine.EventQuestionAnswered, Context: roundCtx, Round: 1, Question: q, Answer: &refine.Answer{Key: "3", Text: "SECRET-ANSWER"}})
	obs.End(roundCtx, refine.Event{Kind: refine.EventRoundFinished, Round: 1})
	obs.End(runCtx, refine.Event{Kind: refine.EventRunFinished, Round: 1, Outcome: refine.StatusComplete})
	return link
}

func withCtx(e refine.Event, ctx context.Context) refine.Event { e.Context = ctx; return e }

// fixedRole answers with a fixed model, usage and finish reason.
func fixedRole() refine.Role {
	return refine.RoleFunc(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: "SECRET-RESPONSE", Model: "model-x", FinishReason: "stop", Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 50}}, nil
	})
}

func TestObserverSpanTree(t *testing.T) {
	tm := newTelemetry(t)
	opts := tm.options(false)
	opts.SessionID = "session-1"
	obs, err := refineotel.NewObserver(opts)
	if err != nil {
		t.Fatal(err)
	}
	handRun(t, obs, refineotel.WrapRole(fixedRole(), opts), "")
	got := tree(tm.spans.GetSpans())
	want := []string{
		"refine.run session.id=session-1 round=1 outcome=COMPLETE",
		"  refine.round round=1 <refine.validation_failed> <refine.retry> <refine.question.asked> <refine.question.answered>",
		"    refine.attempt round=1 role=engineer attempt=1 retry=0 validation.success=false failure_type=WRONG_FORMAT [error: WRONG_FORMAT]",
		"      chat model-x round=1 role=engineer attempt=1 gen_ai.operation.name=chat gen_ai.request.model=model-x gen_ai.response.model=model-x gen_ai.usage.input_tokens=100 gen_ai.usage.output_tokens=50 gen_ai.response.finish_reasons=[\"stop\"]",
		"    refine.attempt round=1 role=engineer attempt=2 retry=1 example.tier=1 validation.success=true",
		"      chat model-x round=1 role=engineer attempt=2 gen_ai.operation.name=chat gen_ai.request.model=model-x gen_ai.response.model=model-x gen_ai.usage.input_tokens=100 gen_ai.usage.output_tokens=50 gen_ai.response.finish_reasons=[\"stop\"]",
		"    refine.attempt round=1 role=reviewer attempt=1 retry=0 validation.success=true",
		"      chat model-x round=1 role=reviewer attempt=1 gen_ai.operation.name=chat gen_ai.request.model=model-x gen_ai.response.model=model-x gen_ai.usage.input_tokens=100 gen_ai.usage.output_tokens=50 gen_ai.response.finish_reasons=[\"stop\"]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span tree (-want +got):\n%s", diff)
	}
	for _, s := range tm.spans.GetSpans() {
		if s.Name == "chat model-x" && s.SpanKind != trace.SpanKindClient {
			t.Errorf("LLM span kind %v, want client", s.SpanKind)
		}
	}
}

func TestContentOnlyWhenOptedIn(t *testing.T) {
	secrets := []string{"SECRET-PROMPT", "SECRET-RESPONSE", "SECRET-TITLE", "SECRET-BODY", "SECRET-ANSWER"}
	for _, content := range []bool{false, true} {
		tm := newTelemetry(t)
		opts := tm.options(content)
		obs, err := refineotel.NewObserver(opts)
		if err != nil {
			t.Fatal(err)
		}
		handRun(t, obs, refineotel.WrapRole(fixedRole(), opts), "")
		text := allText(tm.spans.GetSpans())
		for _, s := range secrets {
			if got := strings.Contains(text, s); got != content {
				t.Errorf("IncludeContent=%v: %s recorded = %v", content, s, got)
			}
		}
	}
}

func TestRunsLinkThroughRunLink(t *testing.T) {
	tm := newTelemetry(t)
	obs, err := refineotel.NewObserver(tm.options(false))
	if err != nil {
		t.Fatal(err)
	}
	role := refineotel.WrapRole(fixedRole(), tm.options(false))
	link1 := handRun(t, obs, role, "")
	first := tm.spans.GetSpans()
	tm.spans.Reset()
	handRun(t, obs, role, link1)
	second := tm.spans.GetSpans()

	run1, run2 := first[len(first)-1], second[len(second)-1]
	if run1.Name != refineotel.SpanRun || run2.Name != refineotel.SpanRun {
		t.Fatalf("last spans %q, %q; want the run spans", run1.Name, run2.Name)
	}
	if link1 != refineotel.FormatRunLink(run1.SpanContext) {
		t.Errorf("RunLink = %q, want the run span's traceparent %q", link1, refineotel.FormatRunLink(run1.SpanContext))
	}
	if run1.SpanContext.TraceID() == run2.SpanContext.TraceID() {
		t.Errorf("both runs in trace %s: want one trace per run", run1.SpanContext.TraceID())
	}
	if len(run1.Links) != 0 {
		t.Errorf("first run has links %v", run1.Links)
	}
	if len(run2.Links) != 1 || !run2.Links[0].SpanContext.Equal(run1.SpanContext.WithRemote(true)) {
		t.Fatalf("second run links %+v, want one to %v", run2.Links, run1.SpanContext)
	}
	if got := attr(run2.Links[0].Attributes, refineotel.KeyLinkRelation); got != "previous_run" {
		t.Errorf("link relation %q", got)
	}
	for _, s := range second {
		if s.SpanContext.TraceID() != run2.SpanContext.TraceID() {
			t.Errorf("span %s is outside the run's trace", s.Name)
		}
	}
}

func TestRunSpanIsANewTraceLinkedToCaller(t *testing.T) {
	tm := newTelemetry(t)
	obs, err := refineotel.NewObserver(tm.options(false))
	if err != nil {
		t.Fatal(err)
	}
	ctx, caller := tm.tp.Tracer("host").Start(context.Background(), "http request")
	runCtx := obs.Begin(ctx, refine.Event{Kind: refine.EventRunStarted, PreviousRun: "not a traceparent"})
	obs.End(runCtx, refine.Event{Kind: refine.EventRunFinished, Outcome: refine.StatusFailed, Message: "round 1: engineer: boom", Err: errors.New("round 1: engineer: boom")})
	caller.End()
	spans := tm.spans.GetSpans()
	run := spans[0]
	if run.Parent.IsValid() {
		t.Errorf("run span has parent %v, want a new root", run.Parent)
	}
	if len(run.Links) != 1 || run.Links[0].SpanContext.SpanID() != caller.SpanContext().SpanID() {
		t.Errorf("links %+v, want the caller's span", run.Links)
	}
	if got := attr(run.Attributes, refineotel.KeyPreviousRunLink); got != "not a traceparent" {
		t.Errorf("unparsable previous run kept as %q", got)
	}
	if run.Status.Code.String() != "Error" || run.Status.Description != "round 1: engineer: boom" {
		t.Errorf("failed run status %+v", run.Status)
	}
}

func TestEndIgnoresForeignContexts(t *testing.T) {
	tm := newTelemetry(t)
	obs, err := refineotel.NewObserver(tm.options(false))
	if err != nil {
		t.Fatal(err)
	}
	ctx, host := tm.tp.Tracer("host").Start(context.Background(), "host")
	// Events that open no scope return the context unchanged.
	if got := obs.Begin(ctx, refine.Event{Kind: refine.EventCommitted}); got != ctx {
		t.Errorf("Begin(committed) changed the context")
	}
	// End with a context Begin did not return, or of the wrong kind, ends nothing.
	obs.End(ctx, refine.Event{Kind: refine.EventRunFinished})
	roundCtx := obs.Begin(ctx, refine.Event{Kind: refine.EventRoundStarted, Round: 1})
	obs.End(roundCtx, refine.Event{Kind: refine.EventAttemptFinished})
	obs.End(roundCtx, refine.Event{Kind: refine.EventCommitted})
	if n := len(tm.spans.GetSpans()); n != 0 {
		t.Fatalf("%d spans ended, want none", n)
	}
	obs.End(roundCtx, refine.Event{Kind: refine.EventRoundFinished, Round: 1})
	host.End()
	if got := tree(tm.spans.GetSpans()); !cmp.Equal(got, []string{"host", "  refine.round round=1"}) {
		t.Errorf("spans %q", got)
	}
}

func TestRoleErrorIsRecorded(t *testing.T) {
	tm := newTelemetry(t)
	opts := tm.options(false)
	opts.Model, opts.Provider = "gpt-test", "openai"
	boom := &refine.TransientError{Err: errors.New("status 429: slow down")}
	r := refineotel.WrapRole(refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) { return refine.Response{}, boom }), opts)
	if _, err := r.Respond(context.Background(), refine.Request{Role: refine.Engineer, Round: 2, Attempt: 1}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the role's error unchanged", err)
	}
	s := tm.spans.GetSpans()[0]
	if s.Name != "chat gpt-test" || s.Status.Code.String() != "Error" || s.Status.Description != "status 429: slow down" {
		t.Errorf("span %q status %+v", s.Name, s.Status)
	}
	for k, want := range map[string]string{"error.type": "transient", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test"} {
		if got := attr(s.Attributes, attribute.Key(k)); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if len(s.Events) != 1 || s.Events[0].Name != "exception" {
		t.Errorf("events %+v, want the recorded error", s.Events)
	}
	got := tm.sums(t)
	if n := got["gen_ai.client.operation.duration{error.type=transient,gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-test,refine.role=engineer}#count"]; n != 1 {
		t.Errorf("failed-call duration count %d in %v", n, got)
	}
}

func TestModelNeverEmpty(t *testing.T) {
	tm := newTelemetry(t)
	r := refineotel.WrapRole(refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
		return refine.Response{Content: "x"}, nil
	}), tm.options(false))
	if _, err := r.Respond(context.Background(), refine.Request{Role: refine.Reviewer}); err != nil {
		t.Fatal(err)
	}
	s := tm.spans.GetSpans()[0]
	if s.Name != "chat unknown" || attr(s.Attributes, "gen_ai.request.model") != "unknown" || attr(s.Attributes, "gen_ai.response.model") != "unknown" {
		t.Errorf("span %q attrs %v", s.Name, s.Attributes)
	}
}

func TestRecordStatusFeedsGauges(t *testing.T) {
	tm := newTelemetry(t)
	obs, err := refineotel.NewObserver(tm.options(false))
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.sums(t); len(got) != 0 {
		t.Errorf("metrics before any status: %v", got)
	}
	obs.RecordStatus(refine.Status{SessionID: "a", Gaps: []refine.GapStatus{
		{ID: "GAP-A-001", Severity: gap.High, State: gap.Open},
		{ID: "GAP-A-002", Severity: gap.High, State: gap.Accepted},
		{ID: "GAP-A-003", Severity: gap.Low, State: gap.Open},
	}, Rollbacks: make([]rollback.Record, 2)})
	obs.RecordStatus(refine.Status{SessionID: "b", Gaps: []refine.GapStatus{{ID: "GAP-B-001", Severity: gap.High, State: gap.Open}}})
	// A later status of a session replaces its earlier one.
	obs.RecordStatus(refine.Status{SessionID: "b", Gaps: []refine.GapStatus{{ID: "GAP-B-001", Severity: gap.Critical, State: gap.Open}}})
	want := map[string]int64{
		"refine.gaps.open{refine.gap.severity=CRITICAL}": 1,
		"refine.gaps.open{refine.gap.severity=HIGH}":     1,
		"refine.gaps.open{refine.gap.severity=MEDIUM}":   0,
		"refine.gaps.open{refine.gap.severity=LOW}":      1,
		"refine.rollbacks": 2,
	}
	if diff := cmp.Diff(want, tm.sums(t)); diff != "" {
		t.Errorf("gauges (-want +got):\n%s", diff)
	}
	if err := obs.Close(); err != nil {
		t.Fatal(err)
	}
	if got := tm.sums(t); len(got) != 0 {
		t.Errorf("metrics after Close: %v", got)
	}
}

func TestCacheUsageOnTheCallSpan(t *testing.T) {
	tm := newTelemetry(t)
	opts := tm.options(false)
	opts.Model, opts.Provider = "claude-test", "anthropic"
	usage := refine.Usage{PromptTokens: 3000, CompletionTokens: 40, CachedPromptTokens: 2500, CacheWriteTokens: 300}
	r := refineotel.WrapRole(refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
		return refine.Response{Content: "x", Usage: usage}, nil
	}), opts)
	plain := refineotel.WrapRole(refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
		return refine.Response{Content: "x", Usage: refine.Usage{PromptTokens: 10}}, nil
	}), opts)
	for _, role := range []refine.Role{r, plain} {
		if _, err := role.Respond(context.Background(), refine.Request{Role: refine.Engineer, Stable: 2}); err != nil {
			t.Fatal(err)
		}
	}
	spans := tm.spans.GetSpans()
	want := map[string]string{"gen_ai.usage.input_tokens": "3000", "gen_ai.usage.cache_read.input_tokens": "2500", "gen_ai.usage.cache_creation.input_tokens": "300"}
	for k, w := range want {
		if got := attr(spans[0].Attributes, attribute.Key(k)); got != w {
			t.Errorf("%s = %q, want %q", k, got, w)
		}
	}
	if got := attr(spans[1].Attributes, "gen_ai.usage.cache_read.input_tokens"); got != "" {
		t.Errorf("a call without cache usage has cache_read %q", got)
	}
}
