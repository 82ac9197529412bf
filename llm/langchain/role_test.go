package langchain_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/langchain"
)

// answer is a one-choice response with the given GenerationInfo.
func answer(content string, info map[string]any) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: content, GenerationInfo: info}}}
}

func TestRespondMapsMessagesAndOptions(t *testing.T) {
	var gotMsgs []llms.MessageContent
	var gotOpts llms.CallOptions
	gen := langchain.GeneratorFunc(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		gotMsgs = msgs
		gotOpts = llms.CallOptions{}
		for _, o := range opts {
			o(&gotOpts)
		}
		return answer("ok", nil), nil
	})
	role := langchain.New(gen, langchain.WithModel("m1"), langchain.WithTemperature(0.7),
		langchain.WithCallOptions(llms.WithSeed(42)))

	tests := []struct {
		name      string
		maxTokens int
		want      llms.CallOptions
	}{
		{name: "with cap", maxTokens: 256, want: llms.CallOptions{Model: "m1", Temperature: 0.7, Seed: 42, MaxTokens: 256}},
		{name: "backend default", maxTokens: 0, want: llms.CallOptions{Model: "m1", Temperature: 0.7, Seed: 42}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := request()
			req.Messages = append(req.Messages, llm.Message{Role: "assistant", Content: "earlier"})
			req.MaxTokens = tc.maxTokens
			if _, err := role.Respond(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			wantMsgs := []llms.MessageContent{
				llms.TextParts(llms.ChatMessageTypeSystem, "You are an engineer."),
				llms.TextParts(llms.ChatMessageTypeHuman, "Close GAP-FLOW-001."),
				llms.TextParts(llms.ChatMessageTypeAI, "earlier"),
			}
			if diff := cmp.Diff(wantMsgs, gotMsgs); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, gotOpts); diff != "" {
				t.Errorf("call options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRespondRejectsBadMessages(t *testing.T) {
	gen := langchain.GeneratorFunc(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		t.Error("model called for an invalid request")
		return nil, nil
	})
	role := langchain.New(gen, langchain.WithProvider("test"))
	for _, msgs := range [][]llm.Message{nil, {{Role: "tool", Content: "x"}}} {
		req := request()
		req.Messages = msgs
		_, err := role.Respond(context.Background(), req)
		if err == nil || !strings.HasPrefix(err.Error(), "test: engineer round 3 attempt 2: ") {
			t.Errorf("messages %v: err = %v; want a test-prefixed error", msgs, err)
		}
	}
}

func TestUsageFromGenerationInfo(t *testing.T) {
	tests := []struct {
		name string
		info map[string]any
		want llm.Usage
	}{
		{name: "int (openai, ollama)", info: map[string]any{"PromptTokens": 10, "CompletionTokens": 5}, want: llm.Usage{PromptTokens: 10, CompletionTokens: 5}},
		{name: "int32 (googleai)", info: map[string]any{"PromptTokens": int32(7), "CompletionTokens": int32(3)}, want: llm.Usage{PromptTokens: 7, CompletionTokens: 3}},
		{name: "int64", info: map[string]any{"PromptTokens": int64(8), "CompletionTokens": int64(2)}, want: llm.Usage{PromptTokens: 8, CompletionTokens: 2}},
		{name: "float64 (JSON)", info: map[string]any{"PromptTokens": 12.0, "CompletionTokens": float64(4)}, want: llm.Usage{PromptTokens: 12, CompletionTokens: 4}},
		{name: "anthropic keys", info: map[string]any{"InputTokens": 9, "OutputTokens": 1}, want: llm.Usage{PromptTokens: 9, CompletionTokens: 1}},
		{name: "missing", info: map[string]any{"TotalTokens": 99}, want: llm.Usage{}},
		{name: "nil map", want: llm.Usage{}},
		{name: "unusable", info: map[string]any{"PromptTokens": "ten", "CompletionTokens": -3}, want: llm.Usage{}},
		{name: "negative float", info: map[string]any{"PromptTokens": -1.0}, want: llm.Usage{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gen := langchain.GeneratorFunc(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
				return answer("x", tc.info), nil
			})
			resp, err := langchain.New(gen).Respond(context.Background(), request())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRespondNoChoices(t *testing.T) {
	for name, resp := range map[string]*llms.ContentResponse{
		"nil response": nil,
		"no choices":   {},
		"nil choice":   {Choices: []*llms.ContentChoice{nil}},
	} {
		t.Run(name, func(t *testing.T) {
			gen := langchain.GeneratorFunc(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
				return resp, nil
			})
			_, err := langchain.New(gen).Respond(context.Background(), request())
			if !errors.Is(err, langchain.ErrNoChoices) || !strings.Contains(err.Error(), "model returned no choices") {
				t.Fatalf("err = %v; want ErrNoChoices", err)
			}
			if transient, _ := llm.IsTransient(err); transient {
				t.Errorf("err %v is transient", err)
			}
		})
	}
}

// TestClassifyLibraryErrors covers models without a Transport, where only
// the error itself is known.
func TestClassifyLibraryErrors(t *testing.T) {
	var synErr error = json.Unmarshal([]byte("{"), new(any))
	tests := []struct {
		name      string
		err       error
		transient bool
		is        error
		contains  string
		noWrap    bool // the model's error is quoted, not wrapped
	}{
		{name: "status text 503", err: errors.New("API returned unexpected status code: 503: busy"), transient: true, contains: "llm: status 503"},
		{name: "status text 429", err: errors.New("API returned unexpected status code: 429"), transient: true, contains: "rate limited"},
		{name: "status text 401", err: errors.New("API returned unexpected status code: 401: bad key"), contains: "check the API key"},
		{name: "status text 400", err: errors.New("API returned unexpected status code: 400"), contains: "request rejected"},
		{name: "llms rate limit", err: llms.NewError(llms.ErrCodeRateLimit, "anthropic", "slow down"), transient: true, contains: "status 429"},
		{name: "llms unavailable", err: llms.NewError(llms.ErrCodeProviderUnavailable, "x", "down"), transient: true},
		{name: "llms auth", err: llms.NewError(llms.ErrCodeAuthentication, "x", "bad"), contains: "check the API key"},
		{name: "llms token limit", err: llms.NewError(llms.ErrCodeTokenLimit, "x", "too long"), contains: "token_limit"},
		{name: "inner deadline", err: context.DeadlineExceeded, transient: true, is: langchain.ErrTimeout, noWrap: true},
		{name: "sanitized timeout", err: errors.New("request timeout: API call exceeded deadline"), transient: true, is: langchain.ErrTimeout},
		{name: "sanitized network", err: errors.New("network error: failed to reach API server"), transient: true, is: langchain.ErrUnreachable},
		{name: "json syntax", err: synErr, is: langchain.ErrMalformedResponse},
		{name: "openai empty", err: openai.ErrEmptyResponse, is: langchain.ErrNoChoices},
		{name: "client empty", err: errors.New("empty response"), is: langchain.ErrNoChoices},
		{name: "other", err: errors.New("role x not supported"), contains: "llm: role x not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gen := langchain.GeneratorFunc(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
				return nil, tc.err
			})
			_, err := langchain.New(gen).Respond(context.Background(), request())
			if err == nil {
				t.Fatal("no error")
			}
			if transient, after := llm.IsTransient(err); transient != tc.transient || after != 0 {
				t.Errorf("IsTransient = %v, %v; want %v, 0 (err: %v)", transient, after, tc.transient, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err %v does not match %v", err, tc.is)
			}
			if errors.Is(err, tc.err) == tc.noWrap {
				t.Errorf("err %v: errors.Is(model's error) = %v, want %v", err, tc.noWrap, !tc.noWrap)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q lacks %q", err, tc.contains)
			}
		})
	}
}

func TestRespondCancelledByGenerator(t *testing.T) {
	started := make(chan struct{})
	gen := langchain.GeneratorFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		close(started)
		<-ctx.Done()
		return nil, errors.New("request cancelled") // what langchaingo's OpenAI client says
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := langchain.New(gen, langchain.WithTimeout(time.Hour)).Respond(ctx, request())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if transient, _ := llm.IsTransient(err); transient {
		t.Errorf("err %v is transient", err)
	}
}

func TestNewPanicsOnNilModel(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil) did not panic")
		}
	}()
	langchain.New(nil)
}
