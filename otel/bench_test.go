package refineotel_test

import (
	"context"
	"slices"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	refineotel "github.com/refine-spec/refine/otel"
	"github.com/refine-spec/refine/refinetest"
)

// roleLatency is how long each benchmarked role call takes: a fast LLM.
const roleLatency = 20 * time.Millisecond

// slowRole answers with content after roleLatency.
func slowRole(content string) refine.Role {
	return refine.RoleFunc(func(ctx context.Context, _ refine.Request) (refine.Response, error) {
		t := time.NewTimer(roleLatency)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return refine.Response{}, ctx.Err()
		case <-t.C:
		}
		return refine.Response{Content: content, Model: "bench", Usage: refine.Usage{PromptTokens: 1000, CompletionTokens: 500}}, nil
	})
}

// benchSession runs a one-round session (one Engineer and one Reviewer
// call) and returns how long Run took.
func benchSession(b *testing.B, cfg refine.Config) time.Duration {
	ctx := context.Background()
	s, err := refine.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	out, err := s.Run(ctx)
	d := time.Since(start)
	if err != nil || out.Status != refine.StatusComplete {
		b.Fatalf("Run = %+v, %v", out, err)
	}
	return d
}

// BenchmarkOverhead compares sessions with 20 ms roles run bare and with
// the Observer and WrapRole recording into an SDK (batched spans, a manual
// metric reader), interleaved so drift affects both alike. It reports
// the median instrumented/bare ratio as overhead-ratio (target ≤ 1.01).
func BenchmarkOverhead(b *testing.B) {
	exp := tracetest.NewNoopExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts := refineotel.Options{TracerProvider: tp, MeterProvider: mp}
	obs, err := refineotel.NewObserver(opts)
	if err != nil {
		b.Fatal(err)
	}
	eng := slowRole(refinetest.EngineerOutput(testGap))
	rev := slowRole(refinetest.ReviewerOutput(1, []gap.ID{testGap}))
	bare := func() refine.Config { return refinetest.Config(eng, rev, refinetest.Answers()) }
	instrumented := func() refine.Config {
		cfg := refinetest.Config(refineotel.WrapRole(eng, opts), refineotel.WrapRole(rev, opts), refinetest.Answers())
		cfg.Observer = obs
		return cfg
	}
	// The machine is shared, so a single slow session would swing a ratio
	// of sums: report the median of the per-pair ratios instead.
	ratios := make([]float64, 0, b.N)
	var extra time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var bt, it time.Duration
		if i%2 == 0 {
			bt = benchSession(b, bare())
			it = benchSession(b, instrumented())
		} else {
			it = benchSession(b, instrumented())
			bt = benchSession(b, bare())
		}
		ratios = append(ratios, float64(it)/float64(bt))
		extra += it - bt
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "overhead-ratio")
	b.ReportMetric(float64(extra)/float64(b.N)/1e3, "overhead-µs/session")
}

// BenchmarkRespond measures the wrapper alone around an instant role: the
// absolute cost of one LLM-call span and its metrics.
func BenchmarkRespond(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	r := refineotel.WrapRole(refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
		return refine.Response{Content: "x", Model: "m", Usage: refine.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
	}), refineotel.Options{TracerProvider: tp, MeterProvider: mp})
	req := refine.Request{Role: refine.Engineer, Round: 1, Attempt: 1}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := r.Respond(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
