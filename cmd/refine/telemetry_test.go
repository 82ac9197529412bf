package main

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is a loopback OTLP/HTTP receiver keeping what it was sent.
type collector struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []string // metric names
}

func newCollector(t *testing.T) (*collector, string) {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var resp proto.Message
		switch r.URL.Path {
		case "/v1/traces":
			var req coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(data, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			c.mu.Lock()
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					c.spans = append(c.spans, ss.Spans...)
				}
			}
			c.mu.Unlock()
			resp = &coltracepb.ExportTraceServiceResponse{}
		case "/v1/metrics":
			var req colmetricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(data, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			c.mu.Lock()
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						c.metrics = append(c.metrics, m.Name)
					}
				}
			}
			c.mu.Unlock()
			resp = &colmetricpb.ExportMetricsServiceResponse{}
		default:
			http.NotFound(w, r)
			return
		}
		out, _ := proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

func TestRunExportsOneSpanPerRoleCall(t *testing.T) {
	col, endpoint := newCollector(t)
	dir := filepath.Join(t.TempDir(), "session")
	c, out, errb := newTestCLI()
	code := c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto", "--quiet", "--otlp-endpoint", endpoint, "--no-integrate"})
	if code != exitOK {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	calls := map[string]int{}
	traces := map[string]bool{}
	names := map[string]int{}
	for _, s := range col.spans {
		names[s.Name]++
		traces[string(s.TraceId)] = true
		if spanAttr(s, "gen_ai.operation.name") != "chat" {
			continue
		}
		calls[spanAttr(s, "refine.role")]++
		if m := spanAttr(s, "gen_ai.response.model"); m != "replay" {
			t.Errorf("LLM span %q names model %q, want replay", s.Name, m)
		}
	}
	// testdata/basic/replay holds 3 Engineer and 2 Reviewer responses, all used.
	if calls["engineer"] != 3 || calls["reviewer"] != 2 {
		t.Errorf("LLM-call spans by role %v, want engineer 3 reviewer 2; spans %v", calls, names)
	}
	if names["refine.run"] != 1 || names["refine.round"] != 2 || names["refine.attempt"] != 5 {
		t.Errorf("spans %v, want 1 run, 2 rounds, 5 attempts", names)
	}
	if len(traces) != 1 {
		t.Errorf("spans in %d traces, want one per run", len(traces))
	}
	for _, want := range []string{"gen_ai.client.operation.duration", "refine.validation.failures", "refine.retries", "refine.gaps.open", "refine.rollbacks"} {
		if !strings.Contains(strings.Join(col.metrics, " "), want) {
			t.Errorf("metrics %v lack %s", col.metrics, want)
		}
	}
}

func TestOTLPEndpointMustBeAURL(t *testing.T) {
	for _, endpoint := range []string{"127.0.0.1:4318", "ftp://x", "http://"} {
		c, _, errb := newTestCLI()
		code := c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md",
			"--dir", filepath.Join(t.TempDir(), "s"), "--llm", "replay", "--replay", "testdata/basic/replay", "--otlp-endpoint", endpoint})
		if code != exitUsage || !strings.Contains(errb.String(), "--otlp-endpoint") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error naming the flag", endpoint, code, errb)
		}
	}
}

func TestOTLPURLs(t *testing.T) {
	tests := []struct{ in, traces, metrics string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces", "http://127.0.0.1:4318/v1/metrics"},
		{"https://otel.example/otlp/", "https://otel.example/otlp/v1/traces", "https://otel.example/otlp/v1/metrics"},
	}
	for _, tt := range tests {
		tr, m, err := otlpURLs(tt.in)
		if err != nil || tr != tt.traces || m != tt.metrics {
			t.Errorf("otlpURLs(%q) = %q, %q, %v; want %q, %q", tt.in, tr, m, err, tt.traces, tt.metrics)
		}
	}
}
