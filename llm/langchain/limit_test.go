package langchain_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/refine-spec/refine/llm/langchain"
	"github.com/refine-spec/refine/validate"
)

// countingTransport counts the response body bytes the client reads.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if resp != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// A backend answer above the limit is cut at the limit plus one byte (so
// the engine fails the attempt as WRONG_FORMAT, naming the limit), and an
// endless or huge body is not read much past a few times the limit.
func TestOversizeResponseIsBounded(t *testing.T) {
	const limit = validate.DefaultMaxOutputBytes
	for _, size := range []int{limit + limit/2, 40 * limit} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"test-model","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`)
				chunk := strings.Repeat("x", 64<<10)
				for sent := 0; sent < size; sent += len(chunk) {
					if _, err := io.WriteString(w, chunk); err != nil {
						return // the client stopped reading
					}
				}
				fmt.Fprint(w, `"}}]}`)
			})
			ct := &countingTransport{}
			r, err := langchain.NewOpenAI(langchain.OpenAIConfig{BaseURL: base, Model: "test-model", APIKey: "sk-test", HTTPClient: &http.Client{Transport: ct}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := r.Respond(context.Background(), request())
			if err != nil {
				t.Fatalf("Respond: %v", err)
			}
			if len(resp.Content) != limit+1 {
				t.Errorf("content is %d bytes, want the limit plus one (%d)", len(resp.Content), limit+1)
			}
			if got, most := ct.n.Load(), int64(8*limit); got > most {
				t.Errorf("read %d bytes of the body, want at most %d", got, most)
			}
		})
	}
}
