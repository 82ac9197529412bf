package refineotel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/refine-spec/refine"
)

// role wraps a refine.Role with an LLM-call span and call metrics.
type role struct {
	next   refine.Role
	opts   Options
	tracer trace.Tracer
	inst   roleInstruments
}

// WrapRole returns a Role that calls r inside a client span following the
// OpenTelemetry GenAI conventions ("chat MODEL", gen_ai.operation.name
// "chat", request and response model, token usage with the prompt-cache
// reads and writes when the backend reports them, finish reasons), a
// child of the span in the call's context (the attempt span the Observer
// started). It records the call's tokens (refine.tokens) and duration
// (gen_ai.client.operation.duration) by role and model. A failed call sets
// the span's status to Error and error.type to the error's Go type (or
// "transient" for a refine transient error). Prompt and response text are
// recorded (gen_ai.input.messages, gen_ai.output.messages) only with
// opts.IncludeContent. It panics if r is nil.
//
// The wrapper passes through the Resume method of a Role that has one (a
// replay or recording resumed past the calls a session already made).
func WrapRole(r refine.Role, opts Options) refine.Role {
	if r == nil {
		panic("refineotel.WrapRole: nil Role")
	}
	w := &role{next: r, opts: opts, tracer: opts.tracerProvider().Tracer(ScopeName), inst: newRoleInstruments(opts.meterProvider())}
	if _, ok := r.(resumer); ok {
		return &resumingRole{w}
	}
	return w
}

// resumer is the optional method the engine's hosts call on a Role before
// a resumed session's first call.
type resumer interface {
	Resume(refine.RoleName, int)
}

// resumingRole is a wrapped Role whose inner Role can be resumed.
type resumingRole struct{ *role }

// Resume passes the call counts on to the wrapped Role.
func (r *resumingRole) Resume(name refine.RoleName, calls int) { r.next.(resumer).Resume(name, calls) }

// Respond calls the wrapped Role inside an LLM-call span.
func (r *role) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	reqModel := r.opts.Model
	name := operationChat
	if reqModel != "" {
		name += " " + reqModel
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, KeyGenAIOperationName.String(operationChat), KeyRole.String(string(req.Role)),
		KeyRound.Int(req.Round), KeyAttempt.Int(req.Attempt))
	if reqModel != "" {
		attrs = append(attrs, KeyGenAIRequestModel.String(reqModel))
	}
	if r.opts.Provider != "" {
		attrs = append(attrs, KeyGenAIProviderName.String(r.opts.Provider))
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, KeyGenAIRequestMaxToks.Int(req.MaxTokens))
	}
	if len(req.Gaps) > 0 {
		ids := make([]string, len(req.Gaps))
		for i, g := range req.Gaps {
			ids[i] = string(g)
		}
		attrs = append(attrs, KeyGaps.StringSlice(ids))
	}
	ctx, span := r.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	if r.opts.IncludeContent && span.IsRecording() {
		span.SetAttributes(KeyGenAIInputMessages.String(inputMessages(req.Messages)))
	}

	start := time.Now()
	resp, err := r.next.Respond(ctx, req)
	elapsed := time.Since(start)

	// The model attribute is never empty: the requested one, else the one
	// that answered, else "unknown".
	respModel := resp.Model
	if reqModel == "" {
		reqModel = respModel
	}
	if reqModel == "" {
		reqModel = unknownModel
	}
	if respModel == "" {
		respModel = reqModel
	}
	metricAttrs := []attribute.KeyValue{KeyRole.String(string(req.Role)), KeyGenAIRequestModel.String(reqModel), KeyGenAIOperationName.String(operationChat)}
	if r.opts.Provider != "" {
		metricAttrs = append(metricAttrs, KeyGenAIProviderName.String(r.opts.Provider))
	}
	if err != nil {
		et := errorType(err)
		span.SetAttributes(KeyGenAIRequestModel.String(reqModel), KeyErrorType.String(et))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		r.inst.duration.Record(ctx, elapsed.Seconds(), metric.WithAttributes(append(metricAttrs, KeyErrorType.String(et))...))
		return resp, err
	}
	if r.opts.Model == "" {
		span.SetName(operationChat + " " + reqModel)
	}
	span.SetAttributes(
		KeyGenAIRequestModel.String(reqModel),
		KeyGenAIResponseModel.String(respModel),
		KeyGenAIInputTokens.Int(resp.Usage.PromptTokens),
		KeyGenAIOutputTokens.Int(resp.Usage.CompletionTokens),
	)
	if u := resp.Usage; u.CachedPromptTokens > 0 || u.CacheWriteTokens > 0 {
		span.SetAttributes(KeyGenAICacheReadTokens.Int(u.CachedPromptTokens), KeyGenAICacheWriteTokens.Int(u.CacheWriteTokens))
	}
	if resp.FinishReason != "" {
		span.SetAttributes(KeyGenAIFinishReasons.StringSlice([]string{resp.FinishReason}))
	}
	if r.opts.IncludeContent && span.IsRecording() {
		span.SetAttributes(KeyGenAIOutputMessages.String(outputMessage(resp)))
	}
	metricAttrs = append(metricAttrs, KeyGenAIResponseModel.String(respModel))
	r.inst.duration.Record(ctx, elapsed.Seconds(), metric.WithAttributes(metricAttrs...))
	if resp.Usage.PromptTokens > 0 {
		r.inst.tokens.Add(ctx, int64(resp.Usage.PromptTokens), metric.WithAttributes(append(metricAttrs, KeyGenAITokenType.String("input"))...))
	}
	if resp.Usage.CompletionTokens > 0 {
		r.inst.tokens.Add(ctx, int64(resp.Usage.CompletionTokens), metric.WithAttributes(append(metricAttrs, KeyGenAITokenType.String("output"))...))
	}
	return resp, nil
}

// errorType names an error for error.type: low cardinality, no message.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	if ok, _ := refine.IsTransient(err); ok {
		return "transient"
	}
	return fmt.Sprintf("%T", err)
}

// chatPart and chatMessage are the JSON shape of gen_ai.input.messages and
// gen_ai.output.messages in the GenAI conventions.
type chatPart struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

type chatMessage struct {
	Role         string     `json:"role"`
	Parts        []chatPart `json:"parts"`
	FinishReason string     `json:"finish_reason,omitempty"`
}

func inputMessages(msgs []refine.Message) string {
	out := make([]chatMessage, len(msgs))
	for i, m := range msgs {
		out[i] = chatMessage{Role: m.Role, Parts: []chatPart{{Type: "text", Content: m.Content}}}
	}
	b, _ := json.Marshal(out) // strings only: cannot fail
	return string(b)
}

func outputMessage(resp refine.Response) string {
	b, _ := json.Marshal([]chatMessage{{Role: "assistant", Parts: []chatPart{{Type: "text", Content: resp.Content}}, FinishReason: resp.FinishReason}})
	return string(b)
}
