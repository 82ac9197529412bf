package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/refine-spec/refine"
	refineotel "github.com/refine-spec/refine/otel"
)

// telemetryFlushTimeout bounds the export at exit, so an unreachable
// collector delays the command by at most this much.
const telemetryFlushTimeout = 5 * time.Second

// telemetry exports a session's traces and metrics over OTLP/HTTP
// (--otlp-endpoint). A nil *telemetry exports nothing and wraps nothing.
type telemetry struct {
	tp    *sdktrace.TracerProvider
	mp    *sdkmetric.MeterProvider
	obs   *refineotel.Observer
	opts  refineotel.Options
	store refine.Store
}

// otlpURLs turns the --otlp-endpoint base URL into the traces and metrics
// URLs, the way OTEL_EXPORTER_OTLP_ENDPOINT is read: BASE/v1/traces and
// BASE/v1/metrics.
func otlpURLs(endpoint string) (traces, metrics string, err error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL of an OTLP/HTTP collector, such as http://127.0.0.1:4318", endpoint)
	}
	base := strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/")
	return base + "/v1/traces", base + "/v1/metrics", nil
}

// newTelemetry starts exporting to endpoint; "" returns nil. Headers and
// other exporter settings come from the OTEL_EXPORTER_OTLP_* environment
// variables, as in any OpenTelemetry program.
func newTelemetry(ctx context.Context, endpoint string, content bool, st refine.Store) (*telemetry, error) {
	if endpoint == "" {
		return nil, nil
	}
	tracesURL, metricsURL, err := otlpURLs(endpoint)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "refine")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint: resource: %w", err)
	}
	spans, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(tracesURL))
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint: trace exporter: %w", err)
	}
	metrics, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(metricsURL))
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint: metric exporter: %w", err)
	}
	t := &telemetry{
		tp:    sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res)),
		mp:    sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)), sdkmetric.WithResource(res)),
		store: st,
	}
	t.opts = refineotel.Options{TracerProvider: t.tp, MeterProvider: t.mp, IncludeContent: content}
	return t, nil
}

// instrument wraps cfg's roles in LLM-call spans and puts the telemetry
// Observer in front of cfg's Observer. The providers name each role's
// backend (gen_ai.provider.name); the models are the requested ones, ""
// when the backend picks.
func (t *telemetry) instrument(cfg *refine.Config, engineerProvider, engineerModel, reviewerProvider, reviewerModel string) error {
	if t == nil {
		return nil
	}
	o := t.opts
	o.Next = cfg.Observer
	obs, err := refineotel.NewObserver(o)
	if err != nil {
		return err
	}
	t.obs = obs
	cfg.Observer = obs
	o.Provider, o.Model = engineerProvider, engineerModel
	cfg.Engineer = refineotel.WrapRole(cfg.Engineer, o)
	o.Provider, o.Model = reviewerProvider, reviewerModel
	cfg.Reviewer = refineotel.WrapRole(cfg.Reviewer, o)
	return nil
}

// close reports the session's open gaps and rollbacks, then flushes and
// stops the exporters, waiting at most telemetryFlushTimeout even when ctx
// was cancelled (an interrupted run still exports what it did).
func (t *telemetry) close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryFlushTimeout)
	defer cancel()
	if t.obs != nil && t.store != nil {
		if st, err := refine.Inspect(ctx, t.store); err == nil {
			t.obs.RecordStatus(st)
		}
	}
	// Shutting the providers down flushes them, the gauges included.
	if err := errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx)); err != nil {
		return fmt.Errorf("telemetry export: %w", err)
	}
	return nil
}

// setupTelemetry starts the export --otlp-endpoint asks for and
// instruments cfg; sessionConfig calls it last. The caller closes
// f.telemetry when the session is done.
func (c *cli) setupTelemetry(ctx context.Context, f *sessionFlags, cfg *refine.Config) int {
	t, err := newTelemetry(ctx, f.otlpEndpoint, f.otlpContent, cfg.Store)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine: %v\n", err)
		return exitUsage
	}
	ep, em := f.roleTelemetry(refine.Engineer)
	rp, rm := f.roleTelemetry(refine.Reviewer)
	if err := t.instrument(cfg, ep, em, rp, rm); err != nil {
		fmt.Fprintf(c.stderr, "refine: %v\n", err)
		return exitUsage
	}
	f.telemetry = t
	return exitOK
}

// closeTelemetry flushes what --otlp-endpoint set up; a failed export is
// reported and does not change the exit code.
func (c *cli) closeTelemetry(ctx context.Context, f *sessionFlags) {
	if err := f.telemetry.close(ctx); err != nil {
		fmt.Fprintf(c.stderr, "refine: %v\n", err)
	}
}
