package refineotel

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Metric names. Token and latency metrics come from WrapRole (one per LLM
// call); the others from the Observer.
const (
	MetricTokens             = "refine.tokens"
	MetricCallDuration       = "gen_ai.client.operation.duration"
	MetricValidationFailures = "refine.validation.failures"
	MetricRetries            = "refine.retries"
	MetricTransportRetries   = "refine.transport.retries"
	MetricEscalations        = "refine.escalations"
	MetricRollbacks          = "refine.rollbacks"
	MetricOpenGaps           = "refine.gaps.open"
)

// callBuckets are latency bucket bounds in seconds fitting LLM calls, which
// take from a fraction of a second to minutes.
var callBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320}

// roleInstruments are the metrics of LLM calls.
type roleInstruments struct {
	tokens   metric.Int64Counter
	duration metric.Float64Histogram
}

func newRoleInstruments(mp metric.MeterProvider) roleInstruments {
	m := mp.Meter(ScopeName)
	noopM := noop.Meter{}
	tokens, err := m.Int64Counter(MetricTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens spent by LLM calls, by role, model and gen_ai.token.type (input or output)."))
	if err != nil {
		otel.Handle(err)
		tokens, _ = noopM.Int64Counter(MetricTokens)
	}
	duration, err := m.Float64Histogram(MetricCallDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of LLM calls (role calls), by role and model."),
		metric.WithExplicitBucketBoundaries(callBuckets...))
	if err != nil {
		otel.Handle(err)
		duration, _ = noopM.Float64Histogram(MetricCallDuration)
	}
	return roleInstruments{tokens: tokens, duration: duration}
}

// sessionInstruments are the metrics the Observer records from events.
type sessionInstruments struct {
	validationFailures metric.Int64Counter
	retries            metric.Int64Counter
	transportRetries   metric.Int64Counter
	escalations        metric.Int64Counter
	rollbacks          metric.Int64ObservableCounter
	openGaps           metric.Int64ObservableGauge
}

func newSessionInstruments(m metric.Meter) (sessionInstruments, error) {
	var s sessionInstruments
	var err error
	counter := func(name, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = m.Int64Counter(name, metric.WithUnit("1"), metric.WithDescription(desc))
		return c
	}
	s.validationFailures = counter(MetricValidationFailures, "Role outputs that failed validation, by role and failure type.")
	s.retries = counter(MetricRetries, "Validation retries started, by role and failure type.")
	s.transportRetries = counter(MetricTransportRetries, "Role calls retried after a transient error (rate limit, timeout, server error), by role.")
	s.escalations = counter(MetricEscalations, "Escalations to the user after the retry budget was spent, by role and failure type.")
	if err != nil {
		return s, err
	}
	if s.rollbacks, err = m.Int64ObservableCounter(MetricRollbacks, metric.WithUnit("1"),
		metric.WithDescription("Rollbacks of the sessions reported with Observer.RecordStatus.")); err != nil {
		return s, err
	}
	s.openGaps, err = m.Int64ObservableGauge(MetricOpenGaps, metric.WithUnit("{gap}"),
		metric.WithDescription("Open gaps of the sessions reported with Observer.RecordStatus, by severity."))
	return s, err
}
