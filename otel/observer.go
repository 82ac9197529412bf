package refineotel

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
)

// Span names. They are fixed (the round, role and attempt are attributes)
// so that backends can group spans by name.
const (
	SpanRun     = "refine.run"
	SpanRound   = "refine.round"
	SpanAttempt = "refine.attempt"
)

// Observer turns a session's events into spans and metrics. It implements
// refine.SpanObserver and refine.RunLinker; set it as Config.Observer. It
// keeps no per-run state of its own (each span travels in the context the
// session hands back), so one Observer may serve any number of sessions,
// concurrently. Create it with NewObserver.
type Observer struct {
	opts   Options
	tracer trace.Tracer
	inst   sessionInstruments
	reg    metric.Registration

	mu       sync.Mutex
	statuses map[string]statusSummary // by session ID, from RecordStatus
}

// statusSummary is what the gauges need from a refine.Status.
type statusSummary struct {
	open      map[string]int64 // open gaps by severity name
	rollbacks int64
}

// NewObserver returns an Observer reporting to the providers in opts.
func NewObserver(opts Options) (*Observer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	m := opts.meterProvider().Meter(ScopeName)
	inst, err := newSessionInstruments(m)
	if err != nil {
		return nil, fmt.Errorf("refineotel: create metrics: %w", err)
	}
	o := &Observer{
		opts:     opts,
		tracer:   opts.tracerProvider().Tracer(ScopeName),
		inst:     inst,
		statuses: map[string]statusSummary{},
	}
	o.reg, err = m.RegisterCallback(o.observeStatus, inst.rollbacks, inst.openGaps)
	if err != nil {
		return nil, fmt.Errorf("refineotel: register gauges: %w", err)
	}
	return o, nil
}

// Close stops reporting the gauges fed by RecordStatus; spans and counters
// keep working. Call it when the Observer is dropped before its
// MeterProvider is shut down.
func (o *Observer) Close() error {
	if o.reg == nil {
		return nil
	}
	return o.reg.Unregister()
}

// scopeKind says which span a context returned by Begin holds.
type scopeKind int

const (
	scopeRun scopeKind = iota + 1
	scopeRound
	scopeAttempt
)

type scopeKey struct{}

// scope is the span Begin started, kept in the context so that End ends
// exactly that span and nothing a host put in the context before.
type scope struct {
	kind scopeKind
	span trace.Span
}

// Begin starts the span of a run, a round or an attempt and returns the
// context holding it. A run span starts a new trace: one trace per session
// run, linked to the previous run (Event.PreviousRun) and to the span of
// the caller's context, if any. Other events return ctx unchanged.
func (o *Observer) Begin(ctx context.Context, e refine.Event) context.Context {
	var (
		kind  scopeKind
		name  string
		attrs []attribute.KeyValue
		opts  []trace.SpanStartOption
	)
	switch e.Kind {
	case refine.EventRunStarted:
		kind, name = scopeRun, SpanRun
		if id := o.sessionID(e); id != "" {
			attrs = append(attrs, KeySessionID.String(id))
		}
		if e.Round > 0 {
			attrs = append(attrs, KeyRound.Int(e.Round))
		}
		opts = append(opts, trace.WithNewRoot())
		if e.PreviousRun != "" {
			if sc, err := ParseRunLink(e.PreviousRun); err == nil {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{KeyLinkRelation.String("previous_run")}}))
			} else {
				attrs = append(attrs, KeyPreviousRunLink.String(truncate(e.PreviousRun, 80)))
			}
		}
		if caller := trace.SpanContextFromContext(ctx); caller.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: caller, Attributes: []attribute.KeyValue{KeyLinkRelation.String("caller")}}))
		}
	case refine.EventRoundStarted:
		kind, name = scopeRound, SpanRound
		attrs = append(attrs, KeyRound.Int(e.Round))
	case refine.EventAttemptStarted:
		kind, name = scopeAttempt, SpanAttempt
		attrs = append(attrs, KeyRound.Int(e.Round), KeyRole.String(string(e.Role)), KeyAttempt.Int(e.Attempt), KeyRetry.Int(max(e.Attempt-1, 0)))
		if e.Gap != "" {
			attrs = append(attrs, KeyGap.String(e.Gap))
		}
		if e.ExampleTier > 0 {
			attrs = append(attrs, KeyExampleTier.Int(e.ExampleTier))
		}
	default:
		return ctx
	}
	opts = append(opts, trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindInternal))
	ctx, span := o.tracer.Start(ctx, name, opts...)
	return context.WithValue(ctx, scopeKey{}, &scope{kind: kind, span: span})
}

// End ends the span Begin put in ctx, with the finished event's results:
// the outcome of a run, the validation result, failure type and model of
// an attempt. Errors set the span's status to Error. A context that holds
// no span of the matching kind is ignored.
func (o *Observer) End(ctx context.Context, e refine.Event) {
	var want scopeKind
	switch e.Kind {
	case refine.EventRunFinished:
		want = scopeRun
	case refine.EventRoundFinished:
		want = scopeRound
	case refine.EventAttemptFinished:
		want = scopeAttempt
	default:
		return
	}
	sc, _ := ctx.Value(scopeKey{}).(*scope)
	if sc == nil || sc.kind != want {
		return
	}
	span := sc.span
	if span.IsRecording() {
		switch want {
		case scopeRun:
			o.endRun(span, e)
		case scopeRound:
			if e.Message != "" {
				span.SetAttributes(KeyMessage.String(e.Message))
			}
		case scopeAttempt:
			o.endAttempt(span, e)
		}
	}
	span.End()
}

func (o *Observer) endRun(span trace.Span, e refine.Event) {
	if e.Outcome != "" {
		span.SetAttributes(KeyOutcome.String(string(e.Outcome)))
	}
	if e.Round > 0 {
		span.SetAttributes(KeyRound.Int(e.Round))
	}
	switch {
	case e.Err != nil:
		span.RecordError(e.Err)
		span.SetStatus(codes.Error, e.Err.Error())
	case e.Outcome == refine.StatusFailed:
		span.SetStatus(codes.Error, e.Message)
	}
}

func (o *Observer) endAttempt(span trace.Span, e refine.Event) {
	span.SetAttributes(KeyValidation.Bool(e.Success))
	if e.Model != "" {
		span.SetAttributes(KeyModel.String(e.Model))
	}
	if e.FailureType != "" {
		span.SetAttributes(KeyFailureType.String(string(e.FailureType)))
	}
	switch {
	case e.Err != nil:
		// The role call failed: its error comes from the backend or the
		// network, not from the prompt or response, so it is recorded.
		span.RecordError(e.Err, trace.WithAttributes(KeyErrorType.String(errorType(e.Err))))
		span.SetStatus(codes.Error, e.Err.Error())
	case !e.Success:
		// The output failed validation; the message quotes the response.
		if o.opts.IncludeContent && e.Message != "" {
			span.SetAttributes(KeyMessage.String(e.Message))
		}
		span.SetStatus(codes.Error, string(e.FailureType))
	}
}

// Observe records counters for failures, retries and escalations, adds
// span events (questions asked and answered, retries, escalations, phase
// starts) to the span of the event's scope, and passes the event on to
// Options.Next.
func (o *Observer) Observe(e refine.Event) {
	o.count(e)
	if e.Context != nil {
		if span := trace.SpanFromContext(e.Context); span.IsRecording() {
			o.spanEvent(span, e)
		}
	}
	if o.opts.Next != nil {
		o.opts.Next.Observe(e)
	}
}

func (o *Observer) count(e refine.Event) {
	ctx := e.Context
	if ctx == nil {
		ctx = context.Background()
	}
	switch e.Kind {
	case refine.EventValidationFailed:
		o.inst.validationFailures.Add(ctx, 1, metric.WithAttributes(KeyRole.String(string(e.Role)), KeyFailureType.String(string(e.FailureType))))
	case refine.EventRetry:
		o.inst.retries.Add(ctx, 1, metric.WithAttributes(KeyRole.String(string(e.Role)), KeyFailureType.String(string(e.FailureType))))
	case refine.EventTransportRetry:
		o.inst.transportRetries.Add(ctx, 1, metric.WithAttributes(KeyRole.String(string(e.Role))))
	case refine.EventEscalation:
		o.inst.escalations.Add(ctx, 1, metric.WithAttributes(KeyRole.String(string(e.Role)), KeyFailureType.String(string(e.FailureType))))
	}
}

// Span event names.
const (
	EventNameQuestionAsked    = "refine.question.asked"
	EventNameQuestionAnswered = "refine.question.answered"
	EventNameValidationFailed = "refine.validation_failed"
	EventNameRetry            = "refine.retry"
	EventNameTransportRetry   = "refine.transport_retry"
	EventNameEscalation       = "refine.escalation"
	EventNamePhase            = "refine.phase"
	EventNameSessionFinished  = "refine.session.finished"
)

func (o *Observer) spanEvent(span trace.Span, e refine.Event) {
	role := KeyRole.String(string(e.Role))
	var name string
	var attrs []attribute.KeyValue
	switch e.Kind {
	case refine.EventQuestionAsked, refine.EventQuestionAnswered:
		name = EventNameQuestionAsked
		if e.Kind == refine.EventQuestionAnswered {
			name = EventNameQuestionAnswered
		}
		if q := e.Question; q != nil {
			attrs = append(attrs, KeyQuestionID.String(q.ID), KeyQuestionKind.String(string(q.Kind)))
			if o.opts.IncludeContent {
				attrs = append(attrs, KeyQuestionTitle.String(q.Title), KeyQuestionBody.String(q.Body))
			}
		}
		if a := e.Answer; a != nil {
			attrs = append(attrs, KeyAnswerKey.String(a.Key))
			if o.opts.IncludeContent && a.Text != "" {
				attrs = append(attrs, KeyAnswerText.String(a.Text))
			}
		}
	case refine.EventValidationFailed:
		name = EventNameValidationFailed
		attrs = append(attrs, role, KeyAttempt.Int(e.Attempt), KeyFailureType.String(string(e.FailureType)))
		if o.opts.IncludeContent && e.Message != "" {
			attrs = append(attrs, KeyMessage.String(e.Message))
		}
	case refine.EventRetry:
		name = EventNameRetry
		attrs = append(attrs, role, KeyAttempt.Int(e.Attempt), KeyRetry.Int(max(e.Attempt-1, 0)), KeyFailureType.String(string(e.FailureType)))
	case refine.EventTransportRetry:
		name = EventNameTransportRetry
		attrs = append(attrs, role, KeyAttempt.Int(e.Attempt), KeyMessage.String(e.Message), attribute.Float64("refine.delay_seconds", e.Elapsed.Seconds()))
	case refine.EventEscalation:
		name = EventNameEscalation
		attrs = append(attrs, role, KeyFailureType.String(string(e.FailureType)))
		if o.opts.IncludeContent && e.Message != "" {
			attrs = append(attrs, KeyMessage.String(e.Message))
		}
	case refine.EventPhaseStarted:
		// A phase ends where the next starts: one event per phase is enough.
		name = EventNamePhase
		attrs = append(attrs, KeyPhase.String(string(e.Phase)))
	case refine.EventSessionFinished:
		name = EventNameSessionFinished
		attrs = append(attrs, KeyOutcome.String(string(e.Outcome)), KeyMessage.String(e.Message))
	default:
		return
	}
	if e.Round > 0 {
		attrs = append(attrs, KeyRound.Int(e.Round))
	}
	span.AddEvent(name, trace.WithAttributes(attrs...))
}

// RunLink returns the W3C traceparent of the run span in ctx (the context
// Begin returned for EventRunStarted), for the session to store and hand
// back as Event.PreviousRun on its next run. It implements
// refine.RunLinker.
func (o *Observer) RunLink(ctx context.Context) string {
	return FormatRunLink(trace.SpanContextFromContext(ctx))
}

// sessionID names the session of a run event: the event's, else the
// one in Options.
func (o *Observer) sessionID(e refine.Event) string {
	if e.SessionID != "" {
		return e.SessionID
	}
	return o.opts.SessionID
}

// RecordStatus feeds the refine.gaps.open gauge (open gaps by severity)
// and the refine.rollbacks counter from a session's status; events do not
// carry them. Call it after each Run (the CLI does); the values are those
// of the latest status per session ID, summed over sessions.
func (o *Observer) RecordStatus(st refine.Status) {
	s := statusSummary{open: map[string]int64{}, rollbacks: int64(len(st.Rollbacks))}
	for _, g := range st.Gaps {
		if g.State.IsOpen() {
			s.open[g.Severity.String()]++
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.statuses[st.SessionID] = s
}

// observeStatus reports the gauges at collection time.
func (o *Observer) observeStatus(_ context.Context, obs metric.Observer) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.statuses) == 0 {
		return nil
	}
	open := map[string]int64{}
	var rollbacks int64
	for _, s := range o.statuses {
		for sev, n := range s.open {
			open[sev] += n
		}
		rollbacks += s.rollbacks
	}
	// Every severity is reported, 0 included, so a severity whose last
	// gap closed drops to 0 instead of vanishing.
	for _, sev := range gap.All() {
		obs.ObserveInt64(o.inst.openGaps, open[sev.String()], metric.WithAttributes(KeySeverity.String(sev.String())))
	}
	obs.ObserveInt64(o.inst.rollbacks, rollbacks)
	return nil
}

var (
	_ refine.SpanObserver = (*Observer)(nil)
	_ refine.RunLinker    = (*Observer)(nil)
)
