// Package anthropictest is a loopback fake of Anthropic's Messages API for
// tests, in the spirit of net/http/httptest: it answers POST /v1/messages
// with the JSON the API sends (usage block included), can refuse calls
// with 429 (with retry-after) or 529 overloaded first, and simulates prompt
// caching the way the API bills it: a prefix up to a cache_control
// breakpoint of at least MinCacheTokens tokens is written to the cache
// (billed at 1.25×) and read by later calls that start with it (0.1×).
// Tokens are counted as 4 characters each, like refine's CharTokenizer.
package anthropictest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// Prices of cached input relative to uncached input.
const (
	CacheReadPrice  = 0.1
	CacheWritePrice = 1.25
)

// Failure is a refusal, or a broken answer, the server sends before
// answering.
type Failure struct {
	// Status is the HTTP status (429, 529, 500, 401, …); with Body, 0
	// sends 200.
	Status int
	// Type is the error type in the body ("rate_limit_error", …).
	Type string
	// RetryAfter is the Retry-After header value, "" for none.
	RetryAfter string
	// Body, when set, is sent as the response body as it is, instead of
	// an error document: a malformed answer, or one of the API's own
	// shape the server does not otherwise send (tool_use blocks only).
	Body string
	// Cut, when above 0, sends only the first Cut bytes of Body while
	// Content-Length announces all of it, then holds the connection open
	// until the client gives up: a body that stalls.
	Cut int
}

// Call is one request the server answered or refused.
type Call struct {
	Model  string
	System []Block
	// Turns are the messages' blocks, in order, with their role.
	Turns []Turn
	// MaxTokens is the request's max_tokens.
	MaxTokens int
	// Temperature is the request's temperature; nil when it sets none.
	Temperature *float64
	// Usage is what the server billed (zero for a refused call).
	Usage Usage
}

// Block is a text block and whether it carries a cache breakpoint.
type Block struct {
	Text   string
	Cached bool
}

// Turn is one message of a request.
type Turn struct {
	Role   string
	Blocks []Block
}

// Usage is the usage block of an answer.
type Usage struct {
	InputTokens, CacheReadTokens, CacheWriteTokens, OutputTokens int
}

// Cost is the input cost in units of one uncached input token.
func (u Usage) Cost() float64 {
	return float64(u.InputTokens) + CacheReadPrice*float64(u.CacheReadTokens) + CacheWritePrice*float64(u.CacheWriteTokens)
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.InputTokens + v.InputTokens, u.CacheReadTokens + v.CacheReadTokens, u.CacheWriteTokens + v.CacheWriteTokens, u.OutputTokens + v.OutputTokens}
}

// Server is the fake API. Set its fields before the first call.
type Server struct {
	*httptest.Server
	// Key, when set, is the x-api-key every call must carry (else 401).
	Key string
	// Answer returns the text of the answer to a call; nil answers "ok".
	Answer func(Call) string
	// Failures are sent, in order, before any answer.
	Failures []Failure
	// NoCache turns caching off: breakpoints are ignored.
	NoCache bool
	// MinCacheTokens is the shortest cacheable prefix (1024 by default).
	MinCacheTokens int

	mu    sync.Mutex
	calls []Call
	cache map[string]bool
}

// NewServer starts a fake API; close it with Close.
func NewServer() *Server {
	s := &Server{MinCacheTokens: 1024, cache: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Calls returns the calls so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Total returns the usage billed so far.
func (s *Server) Total() Usage {
	var t Usage
	for _, c := range s.Calls() {
		t = t.Add(c.Usage)
	}
	return t
}

// Tokens counts text as the server does: 4 characters a token, rounded up.
func Tokens(text string) int { return (len([]rune(text)) + 3) / 4 }

type textBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type request struct {
	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	Temperature *float64        `json:"temperature"`
	System      json.RawMessage `json:"system"`
	Messages    []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// blocks decodes a string or an array of text blocks.
func blocks(raw json.RawMessage) ([]Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []Block{{Text: text}}, nil
	}
	var tb []textBlock
	if err := json.Unmarshal(raw, &tb); err != nil {
		return nil, err
	}
	out := make([]Block, len(tb))
	for i, b := range tb {
		if b.Type != "text" {
			return nil, fmt.Errorf("block %d has type %q", i, b.Type)
		}
		out[i] = Block{Text: b.Text, Cached: len(b.CacheControl) > 0 && string(b.CacheControl) != "null"}
	}
	return out, nil
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_test")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

// writeRaw sends f.Body, or its first f.Cut bytes and then nothing more
// until the client goes away.
func writeRaw(w http.ResponseWriter, r *http.Request, f Failure) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_test")
	w.Header().Set("Content-Length", strconv.Itoa(len(f.Body)))
	w.WriteHeader(cmp.Or(f.Status, http.StatusOK))
	if f.Cut <= 0 || f.Cut >= len(f.Body) {
		io.WriteString(w, f.Body)
		return
	}
	io.WriteString(w, f.Body[:f.Cut])
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeError(w, http.StatusNotFound, "not_found_error", "no route "+r.URL.Path)
		return
	}
	if s.Key != "" && r.Header.Get("X-Api-Key") != s.Key {
		writeError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	call := Call{Model: req.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	var err error
	if call.System, err = blocks(req.System); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "system: "+err.Error())
		return
	}
	for _, m := range req.Messages {
		b, err := blocks(m.Content)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "messages: "+err.Error())
			return
		}
		call.Turns = append(call.Turns, Turn{Role: m.Role, Blocks: b})
	}
	if req.Model == "" || req.MaxTokens <= 0 || len(call.Turns) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "model, max_tokens and messages are required")
		return
	}

	s.mu.Lock()
	if len(s.Failures) > 0 {
		f := s.Failures[0]
		s.Failures = s.Failures[1:]
		s.calls = append(s.calls, call)
		s.mu.Unlock()
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		if f.Body == "" {
			writeError(w, f.Status, f.Type, "refused by the test server")
			return
		}
		writeRaw(w, r, f)
		return
	}
	call.Usage = s.bill(call)
	s.calls = append(s.calls, call)
	answer := s.Answer
	s.mu.Unlock()

	text := "ok"
	if answer != nil {
		text = answer(call)
	}
	call.Usage.OutputTokens = Tokens(text)
	resp := map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": req.Model,
		"content":     []map[string]any{{"type": "text", "text": text}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": call.Usage.InputTokens, "output_tokens": call.Usage.OutputTokens,
			"cache_read_input_tokens": call.Usage.CacheReadTokens, "cache_creation_input_tokens": call.Usage.CacheWriteTokens,
		},
	}
	s.mu.Lock()
	s.calls[len(s.calls)-1].Usage.OutputTokens = call.Usage.OutputTokens
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// bill computes a call's usage and updates the cache; s.mu is held. The
// prefix up to each breakpoint is a cache entry: the longest one already
// cached is read, the longer cacheable ones are written.
func (s *Server) bill(c Call) Usage {
	var all []Block
	all = append(all, c.System...)
	for _, t := range c.Turns {
		all = append(all, t.Blocks...)
	}
	var prefix strings.Builder
	total := 0
	type point struct {
		key    string
		tokens int
	}
	var points []point
	for i, b := range all {
		fmt.Fprintf(&prefix, "%d\x00%s\x00", i, b.Text)
		total += Tokens(b.Text)
		if b.Cached && !s.NoCache {
			points = append(points, point{c.Model + "\x00" + prefix.String(), total})
		}
	}
	read := 0
	for i := len(points) - 1; i >= 0; i-- {
		if s.cache[points[i].key] {
			read = points[i].tokens
			break
		}
	}
	written := read
	for _, p := range points {
		if p.tokens > read && p.tokens >= s.MinCacheTokens {
			s.cache[p.key] = true
			written = p.tokens
		}
	}
	return Usage{InputTokens: total - written, CacheReadTokens: read, CacheWriteTokens: written - read}
}
