package langchain_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/refine-spec/refine/llm/langchain"
)

// BenchmarkAdapterOverhead compares Role.Respond with a bare GenerateContent
// call of the same langchaingo client against the same httptest server.
// "ratio" interleaves the two and reports adapter time / bare time as "x";
// "in-memory" measures the adapter alone over a model that does no I/O.
func BenchmarkAdapterOverhead(b *testing.B) {
	body := completion("## Proposal\nDone.", 11, 7)
	base := openAIServer(b, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	})
	bare, err := openai.New(openai.WithToken("sk-test"), openai.WithBaseURL(base), openai.WithModel("test-model"))
	if err != nil {
		b.Fatal(err)
	}
	role := newOpenAI(b, base)
	req := request()
	req.MaxTokens = 500
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, req.Messages[0].Content),
		llms.TextParts(llms.ChatMessageTypeHuman, req.Messages[1].Content),
	}
	ctx := context.Background()
	bareCall := func(b *testing.B) {
		resp, err := bare.GenerateContent(ctx, msgs, llms.WithModel("test-model"), llms.WithMaxTokens(500))
		if err != nil || len(resp.Choices) == 0 {
			b.Fatal(err)
		}
	}
	adapterCall := func(b *testing.B) {
		if _, err := role.Respond(ctx, req); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bareCall(b)
		}
	})
	b.Run("adapter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			adapterCall(b)
		}
	})
	b.Run("ratio", func(b *testing.B) {
		var tBare, tAdapter time.Duration
		for b.Loop() {
			t0 := time.Now()
			bareCall(b)
			t1 := time.Now()
			adapterCall(b)
			tAdapter += time.Since(t1)
			tBare += t1.Sub(t0)
		}
		b.ReportMetric(float64(tAdapter)/float64(tBare), "x")
		b.ReportMetric(float64(tBare.Nanoseconds())/float64(b.N), "bare-ns/call")
		b.ReportMetric(float64(tAdapter.Nanoseconds())/float64(b.N), "adapter-ns/call")
	})
	b.Run("in-memory", func(b *testing.B) {
		resp := &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			Content: "x", GenerationInfo: map[string]any{"PromptTokens": 11, "CompletionTokens": 7},
		}}}
		gen := langchain.GeneratorFunc(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
			return resp, nil
		})
		r := langchain.New(gen, langchain.WithModel("test-model"), langchain.WithTimeout(time.Minute))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Respond(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
