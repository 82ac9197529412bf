package langchain

import (
	"context"
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
}

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
}

func (ex *exchange) snapshot() snapshot {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return snapshot{url: ex.url, status: ex.status, retryAfter: ex.retryAfter, err: ex.err, bodyErr: ex.bodyErr}
}

// recordingBody records read errors other than io.EOF: a connection dropped
// in the middle of the body shows up here, while the client library only
// sees a JSON syntax error or a truncated stream.
type recordingBody struct {
	io.ReadCloser
	ex *exchange
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.ex.setBodyErr(err)
	}
	return n, err
}

// retryAfter returns the server's retry hint: Retry-After in seconds or as
// an HTTP date (relative to the response's Date header when present, so the
// result does not depend on the local clock's skew), or OpenAI's
// retry-after-ms. It returns 0 when there is no usable hint.
func retryAfter(h http.Header) time.Duration {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 && v < float64(maxRetryAfter/time.Millisecond) {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	return parseRetryAfter(h.Get("Retry-After"), h.Get("Date"), time.Now())
}

// maxRetryAfter caps absurd hints; the engine applies its own bounds too.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter parses a Retry-After value (RFC 9110 §10.2.3): a number of
// seconds or an HTTP date. A date is taken relative to date (the response's
// Date header) when that parses, else to now.
func parseRetryAfter(v, date string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if d := time.Duration(secs) * time.Second; secs < int64(maxRetryAfter/time.Second) {
			return d
		}
		return maxRetryAfter
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
	return min(d, maxRetryAfter)
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
