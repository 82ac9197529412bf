package refineotel

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceparent is the W3C Trace Context header a run link is written as.
const traceparent = "traceparent"

// FormatRunLink writes sc as a W3C traceparent
// ("00-<trace id>-<span id>-<flags>"), the form a session stores to link
// its next run to this one. It returns "" for an invalid span context.
func FormatRunLink(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	return carrier[traceparent]
}

// ParseRunLink reads a link written by FormatRunLink (any valid W3C
// traceparent). The span context it returns is marked remote.
func ParseRunLink(s string) (trace.SpanContext, error) {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{traceparent: s})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return trace.SpanContext{}, fmt.Errorf("refineotel: run link %q is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)", truncate(s, 80))
	}
	return sc, nil
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
