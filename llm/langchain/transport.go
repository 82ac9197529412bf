package langchain

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Transport is an [http.RoundTripper] that lets [Role] see what langchaingo
// hides: the HTTP status of the backend's answer, its Retry-After header,
// the exact transport error (langchaingo's OpenAI client replaces "connection
// refused" with "network error: failed to reach API server"), and errors
// while reading the response body.
//
// It records only requests made on behalf of a Role.Respond call: Respond
// puts a fresh per-call record into the context it passes to the model, the
// client library builds its request with that context, and Transport writes
// into the record it finds there. Requests without one pass through
// untouched, so one Transport can serve several Roles and other traffic at
// once; there is no shared mutable state between calls.
//
// [NewOpenAI] and [NewOllama] install it. A host that builds its own
// langchaingo model can install it too, through the model's HTTP client
// option, to get the same error classification:
//
//	hc := &http.Client{Transport: langchain.NewTransport(nil)}
//	model, err := anthropic.New(anthropic.WithHTTPClient(hc))
//
// Without it, Role classifies errors from their text alone (and cannot
// honour Retry-After, which langchaingo discards).
type Transport struct {
	base http.RoundTripper
}

// NewTransport returns a Transport that sends requests through base, or
// through langchaingo's default transport (which sets its User-Agent) if
// base is nil.
func NewTransport(base http.RoundTripper) *Transport {
	if base == nil {
		base = defaultTransport()
	}
	return &Transport{base: base}
}

// RoundTrip sends req through the base transport and records the outcome in
// the per-call record of req's context, if any.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	resp, err := t.base.RoundTrip(req)
	if ex == nil {
		return resp, err
	}
	ex.record(req, resp, err)
	if resp != nil && resp.Body != nil {
		resp.Body = &recordingBody{ReadCloser: resp.Body, ex: ex}
	}
	return resp, err
}

// exchangeKey is the context key of the per-call *exchange.
type exchangeKey struct{}

// exchange is what Transport learnt about the HTTP exchanges of one Respond
// call. A call may make several requests (Ollama can pull a model first);
// the last one wins.
type exchange struct {
	mu         sync.Mutex
	url        string        // redacted URL of the last request
	status     int           // 0 when no response arrived
	retryAfter time.Duration // server's hint, 0 when none
	err        error         // transport error of the last request
	bodyErr    error         // error while reading the last response body

	// bodyLimit bounds the bytes read of a response body (0: no bound);
	// head keeps its first headSize bytes, tooLarge says the bound was hit.
	bodyLimit int64
	headSize  int
	head      []byte
	read      int64
	tooLarge  bool
}

// errBodyTooLarge ends the read of a response body above its bound.
var errBodyTooLarge = errors.New("response body above the size limit")

func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

func (ex *exchange) record(req *http.Request, resp *http.Response, err error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.url = redactURL(req.URL)
	ex.err = err
	ex.bodyErr = nil
	ex.status = 0
	ex.retryAfter = 0
	ex.head, ex.read, ex.tooLarge = nil, 0, false
	if resp != nil {
		ex.status = resp.StatusCode
		ex.retryAfter = retryAfter(resp.Header)
	}
}

func (ex *exchange) setBodyErr(err error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.bodyErr == nil {
		ex.bodyErr = err
	}
}

// snapshot is a copy of an exchange, read once the call has returned.
type snapshot struct {
	url        string
	status     int
	retryAfter time.Duration
	err        error
	bodyErr    error
	tooLarge   bool   // the body went past the bound and was not read further
	head       []byte // the body's first bytes, when bounded
}

func (ex *exchange) snapshot() snapshot {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return snapshot{url: ex.url, status: ex.status, retryAfter: ex.retryAfter, err: ex.err, bodyErr: ex.bodyErr, tooLarge: ex.tooLarge, head: ex.head}
}

// recordingBody records read errors other than io.EOF: a connection dropped
// in the middle of the body shows up here, while the client library only
// sees a JSON syntax error or a truncated stream.
type recordingBody struct {
	io.ReadCloser
	ex *exchange
}

func (b *recordingBody) Read(p []byte) (int, error) {
	ex := b.ex
	ex.mu.Lock()
	limit, read := ex.bodyLimit, ex.read
	ex.mu.Unlock()
	if limit > 0 {
		if read >= limit {
			ex.mu.Lock()
			ex.tooLarge = true
			ex.mu.Unlock()
			return 0, errBodyTooLarge
		}
		p = p[:min(int64(len(p)), limit-read)]
	}
	n, err := b.ReadCloser.Read(p)
	if limit > 0 && n > 0 {
		ex.mu.Lock()
		if keep := ex.headSize - len(ex.head); keep > 0 {
			ex.head = append(ex.head, p[:min(n, keep)]...)
		}
		ex.read += int64(n)
		ex.mu.Unlock()
	}
	if err != nil && err != io.EOF {
		ex.setBodyErr(err)
	}
	return n, err
}

// retryAfter returns the server's retry hint: Retry-After in seconds or as
// an HTTP date (relative to the response's Date header when present, so the
// result does not depend on the local clock's skew), or OpenAI's
// retry-after-ms. It returns 0 when there is no usable hint.
func retryAfter(h http.Header) time.Duration {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 && v < float64(maxAsked/time.Millisecond) {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	return parseRetryAfter(h.Get("Retry-After"), h.Get("Date"), time.Now())
}

// maxRetryAfter caps the hint passed to the engine (which applies its own,
// smaller backoff cap too); a longer wait asked for is still reported as
// the server gave it. maxAsked only keeps absurd values from overflowing.
const (
	maxRetryAfter = 24 * time.Hour
	maxAsked      = 100 * 365 * 24 * time.Hour
)

// parseRetryAfter parses a Retry-After value (RFC 9110 §10.2.3): a number of
// seconds or an HTTP date. A date is taken relative to date (the response's
// Date header) when that parses, else to now. The result is what the
// server asked for, up to maxAsked; the engine's hint is capped apart.
func parseRetryAfter(v, date string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if d := time.Duration(secs) * time.Second; secs < int64(maxAsked/time.Second) {
			return d
		}
		return maxAsked
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if ref, err := http.ParseTime(date); err == nil {
		now = ref
	}
	d := at.Sub(now)
	if d <= 0 {
		return 0
	}
	return min(d, maxAsked)
}

// redactURLString is redactURL for a URL in text form.
func redactURLString(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the server"
	}
	return redactURL(u)
}

// redactURL drops credentials, query and fragment, which may carry keys.
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return c.String()
}
