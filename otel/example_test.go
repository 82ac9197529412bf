package refineotel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	refineotel "github.com/refine-spec/refine/otel"
	"github.com/refine-spec/refine/refinetest"
)

// A host instruments a session by setting the Observer and wrapping both
// roles with the same Options. Here the spans go to an in-memory exporter;
// a real host passes an SDK TracerProvider exporting over OTLP.
func Example() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())

	opts := refineotel.Options{TracerProvider: tp} // IncludeContent: false keeps prompts out
	obs, err := refineotel.NewObserver(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	id := gap.ID("GAP-TEST-001")
	cfg := refinetest.Config(
		refinetest.Script(refinetest.EngineerOutput(id)),
		refinetest.Script(refinetest.ReviewerOutput(1, []gap.ID{id})),
		refinetest.Answers())
	cfg.Observer = obs
	cfg.Engineer = refineotel.WrapRole(cfg.Engineer, opts)
	cfg.Reviewer = refineotel.WrapRole(cfg.Reviewer, opts)

	ctx := context.Background()
	s, err := refine.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := s.Run(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Status)
	for _, sp := range spans.GetSpans() {
		fmt.Println(sp.Name)
	}
	// Output:
	// COMPLETE
	// chat unknown
	// refine.attempt
	// chat unknown
	// refine.attempt
	// refine.round
	// refine.run
}
