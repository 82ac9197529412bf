package refineotel

import (
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
)

// ScopeName is the instrumentation scope of every tracer and meter this
// package creates.
const ScopeName = "github.com/refine-spec/refine/otel"

// Options configures an Observer and the Roles wrapped by WrapRole. The
// zero value is usable: global providers, no content recorded.
type Options struct {
	// TracerProvider receives the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider receives the metrics; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// IncludeContent records prompts, responses, validation messages,
	// question texts and answer texts. They may be confidential, so the
	// default leaves them out and keeps only IDs, counts and types.
	IncludeContent bool
	// SessionID is put on the run span (refine.session.id) when the run's
	// event does not name its session; sessions always do, so only hosts
	// replaying events of their own need it.
	SessionID string
	// Next, if set, receives every event after the Observer recorded it, so
	// that progress output and telemetry share Config.Observer. Only its
	// Observe method is called.
	Next refine.Observer

	// Model is, for WrapRole, the model the wrapped Role requests
	// (gen_ai.request.model); when empty the model the Response names is
	// used, and "unknown" when it names none.
	Model string
	// Provider is, for WrapRole, the GenAI provider name
	// (gen_ai.provider.name: "openai", "ollama"); omitted when empty.
	Provider string
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if len(o.SessionID) > store.MaxSessionIDLen {
		return errors.New("refineotel: Options.SessionID is longer than a session ID can be")
	}
	return nil
}

func (o Options) tracerProvider() trace.TracerProvider {
	if o.TracerProvider != nil {
		return o.TracerProvider
	}
	return otel.GetTracerProvider()
}

func (o Options) meterProvider() metric.MeterProvider {
	if o.MeterProvider != nil {
		return o.MeterProvider
	}
	return otel.GetMeterProvider()
}
