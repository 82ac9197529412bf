package refineotel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/refine-spec/refine"
	refineotel "github.com/refine-spec/refine/otel"
)

// receiver is a loopback OTLP/HTTP trace collector.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to /v1/traces", http.StatusBadRequest)
		return
	}
	data, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(data, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func TestOTLPHTTPRoundTrip(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	opts := refineotel.Options{TracerProvider: tp}
	obs, err := refineotel.NewObserver(opts)
	if err != nil {
		t.Fatal(err)
	}
	role := refineotel.WrapRole(fixedRole(), opts)
	link := handRun(t, obs, role, "")
	handRun(t, obs, role, link)
	if err := tp.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	var runs, chats []*tracepb.Span
	for _, s := range rc.spans {
		switch s.Name {
		case refineotel.SpanRun:
			runs = append(runs, s)
		case "chat model-x":
			chats = append(chats, s)
		}
	}
	if len(runs) != 2 || len(chats) != 6 {
		t.Fatalf("received %d run and %d chat spans of %d, want 2 and 6", len(runs), len(chats), len(rc.spans))
	}
	if len(runs[1].Links) != 1 || string(runs[1].Links[0].TraceId) != string(runs[0].TraceId) || string(runs[1].Links[0].SpanId) != string(runs[0].SpanId) {
		t.Errorf("second run's links %v do not name the first run", runs[1].Links)
	}
	c := chats[0]
	if c.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("chat span kind %v", c.Kind)
	}
	got := map[string]string{}
	for _, kv := range c.Attributes {
		if _, ok := kv.Value.Value.(*commonpb.AnyValue_IntValue); ok {
			got[kv.Key] = strconv.FormatInt(kv.Value.GetIntValue(), 10)
			continue
		}
		got[kv.Key] = kv.Value.GetStringValue()
	}
	for k, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "model-x", "gen_ai.response.model": "model-x",
		"gen_ai.usage.input_tokens": "100", "gen_ai.usage.output_tokens": "50", "refine.role": string(refine.Engineer)} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q (attributes %v)", k, got[k], want, got)
		}
	}
}
