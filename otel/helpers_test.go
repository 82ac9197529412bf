package refineotel_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	refineotel "github.com/refine-spec/refine/otel"
)

// telemetry is an SDK set up to record everything in memory.
type telemetry struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t testing.TB) *telemetry {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return &telemetry{spans: spans, tp: tp, reader: reader, mp: mp}
}

func (tm *telemetry) options(content bool) refineotel.Options {
	return refineotel.Options{TracerProvider: tm.tp, MeterProvider: tm.mp, IncludeContent: content}
}

// treeAttrs are the attributes the span tree shows, in this order.
var treeAttrs = []attribute.Key{
	refineotel.KeySessionID, refineotel.KeyRound, refineotel.KeyRole, refineotel.KeyAttempt, refineotel.KeyRetry,
	refineotel.KeyExampleTier, refineotel.KeyValidation, refineotel.KeyFailureType, refineotel.KeyOutcome,
	refineotel.KeyGenAIOperationName, refineotel.KeyGenAIRequestModel, refineotel.KeyGenAIResponseModel,
	refineotel.KeyGenAIInputTokens, refineotel.KeyGenAIOutputTokens, refineotel.KeyGenAIFinishReasons,
}

// tree renders the spans of one trace, children in start order, one line
// per span: indentation, name, the treeAttrs it has, the status and the
// names of its events.
func tree(spans tracetest.SpanStubs) []string {
	children := map[string][]tracetest.SpanStub{}
	var roots []tracetest.SpanStub
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID().String()] = true
	}
	for _, s := range spans {
		if p := s.Parent.SpanID(); s.Parent.IsValid() && ids[p.String()] {
			children[p.String()] = append(children[p.String()], s)
		} else {
			roots = append(roots, s)
		}
	}
	var out []string
	var walk func(s tracetest.SpanStub, depth int)
	walk = func(s tracetest.SpanStub, depth int) {
		line := strings.Repeat("  ", depth) + s.Name
		for _, k := range treeAttrs {
			for _, a := range s.Attributes {
				if a.Key == k {
					line += fmt.Sprintf(" %s=%s", strings.TrimPrefix(string(k), "refine."), a.Value.Emit())
				}
			}
		}
		if s.Status.Code.String() == "Error" {
			line += " [error: " + s.Status.Description + "]"
		}
		for _, e := range s.Events {
			if p := attr(e.Attributes, refineotel.KeyPhase); p != "" {
				line += " <" + e.Name + " " + p + ">"
				continue
			}
			line += " <" + e.Name + ">"
		}
		out = append(out, line)
		kids := children[s.SpanContext.SpanID().String()]
		slices.SortStableFunc(kids, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	slices.SortStableFunc(roots, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	for _, r := range roots {
		walk(r, 0)
	}
	return out
}

// attr returns the value of key on s, emitted as a string, or "".
func attr(attrs []attribute.KeyValue, key attribute.Key) string {
	for _, a := range attrs {
		if a.Key == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// allText returns every attribute value of the spans and their events.
func allText(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Name + "\n")
		for _, a := range s.Attributes {
			b.WriteString(a.Value.Emit() + "\n")
		}
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				b.WriteString(a.Value.Emit() + "\n")
			}
		}
		b.WriteString(s.Status.Description + "\n")
	}
	return b.String()
}

// sums collects the reader's int64 sums and gauges as "name{attrs}" →
// value, and histogram counts as "name{attrs}#count".
func (tm *telemetry) sums(t testing.TB) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tm.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name+setString(p.Attributes)] = p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[m.Name+setString(p.Attributes)] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[m.Name+setString(p.Attributes)+"#count"] = int64(p.Count)
				}
			}
		}
	}
	return out
}

func setString(s attribute.Set) string {
	if s.Len() == 0 {
		return ""
	}
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, fmt.Sprintf("%s=%s", kv.Key, kv.Value.Emit()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
