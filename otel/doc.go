// Package refineotel reports refine sessions to OpenTelemetry: one trace
// per session run, metrics for tokens, latency, validation failures,
// retries, escalations, rollbacks and open gaps.
//
// Two pieces work together. [NewObserver] returns a [refine.SpanObserver]
// (set it as Config.Observer): it opens a span for the run, one per round
// and one per role attempt, records questions, retries and escalations as
// span events, and links a resumed run to the run before it. [WrapRole]
// wraps each Role (Config.Engineer, Config.Reviewer) so that every LLM call
// is a span, a child of its attempt's span, carrying the OpenTelemetry
// GenAI attributes (gen_ai.operation.name "chat", gen_ai.request.model,
// gen_ai.response.model, gen_ai.usage.input_tokens and output_tokens,
// gen_ai.response.finish_reasons).
//
// The span tree of a run that needed a retry:
//
//	refine.run                  refine.session.id, link to the previous run
//	└── refine.round            refine.round=1
//	    ├── refine.attempt      refine.role=engineer, refine.attempt=1, refine.validation.success=false, refine.failure_type=WRONG_FORMAT
//	    │   └── chat replay     gen_ai.operation.name=chat, gen_ai.usage.input_tokens=…
//	    ├── refine.attempt      refine.role=engineer, refine.attempt=2, refine.retry=1, refine.example.tier=1
//	    │   └── chat replay
//	    └── refine.attempt      refine.role=reviewer, …
//	        └── chat replay
//
// Metrics: WrapRole counts tokens (refine.tokens, by role, model and
// gen_ai.token.type) and times calls (gen_ai.client.operation.duration);
// the Observer counts validation failures, retries, transport retries and
// escalations from events, and reports open gaps by severity and rollbacks
// from the statuses a host hands to Observer.RecordStatus.
//
// Prompts, responses, validation messages and answer texts may be
// confidential: they are recorded only when Options.IncludeContent is set.
//
// The package uses the OpenTelemetry API only. Spans and metrics go to the
// TracerProvider and MeterProvider in [Options] (the global ones when
// unset, which discard everything until a host installs an SDK), so a host
// that installs nothing pays next to nothing.
//
// The package is named refineotel so that it can be imported next to
// go.opentelemetry.io/otel without renaming.
package refineotel
