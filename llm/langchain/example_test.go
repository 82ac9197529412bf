package langchain_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/tmc/langchaingo/llms"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/langchain"
)

// A Role over any langchaingo model, here a stand-in.
func ExampleNew() {
	model := langchain.GeneratorFunc(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			Content:        fmt.Sprintf("%d messages received", len(msgs)),
			GenerationInfo: map[string]any{"PromptTokens": 12, "CompletionTokens": 3},
		}}}, nil
	})
	role := langchain.New(model, langchain.WithProvider("fake"), langchain.WithModel("m"))

	resp, err := role.Respond(context.Background(), llm.Request{
		Role: llm.Engineer, Round: 1, Attempt: 1,
		Messages: []llm.Message{{Role: "system", Content: "…"}, {Role: "user", Content: "…"}},
	})
	fmt.Println(resp.Content, resp.Usage, err)
	// Output: 2 messages received {12 3 0 0} <nil>
}

// An OpenAI-compatible server (a local one here: no API key needed) and
// how a rate limit comes back to the engine.
func ExampleNewOpenAI() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down"}}`)
	}))
	defer srv.Close()

	cfg := langchain.OpenAIConfigFromEnv(langchain.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "local-model"},
		func(string) string { return "" }) // the CLI passes os.Getenv
	role, err := langchain.NewOpenAI(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = role.Respond(context.Background(), llm.Request{
		Role: llm.Reviewer, Round: 2, Attempt: 1,
		Messages: []llm.Message{{Role: "user", Content: "Review."}},
	})
	transient, after := llm.IsTransient(err)
	fmt.Println(transient, after)
	fmt.Println(err)
	// Output:
	// true 3s
	// openai: status 429: rate limited (the server asks to wait 3s): API returned unexpected status code: 429: slow down
}
