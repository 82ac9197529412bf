package langchain

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/refine-spec/refine/llm"
)

// Sentinel errors, matched with errors.Is. Transient ones come wrapped in a
// *llm.TransientError.
var (
	// ErrNoChoices: the backend answered without any completion. Permanent.
	ErrNoChoices = errors.New("model returned no choices")
	// ErrMalformedResponse: the backend's answer could not be decoded.
	// Permanent: the endpoint is probably not the API the client speaks.
	ErrMalformedResponse = errors.New("malformed response body")
	// ErrTimeout: the call exceeded its own timeout ([WithTimeout]) or a
	// network timeout while the caller's context was still alive.
	// Transient. It deliberately does not match context.DeadlineExceeded,
	// which is reserved for the caller's own deadline.
	ErrTimeout = errors.New("call timed out")
	// ErrUnreachable: the connection to the backend failed or dropped.
	// Transient; the engine bounds the retries.
	ErrUnreachable = errors.New("backend unreachable")
)

// StatusError is an HTTP error status returned by the backend. Role returns
// it wrapped in a *llm.TransientError for 408, 429 and 5xx (except 501),
// bare otherwise.
type StatusError struct {
	// Provider is the Role's provider label ("openai", "ollama").
	Provider string
	// Code is the HTTP status code.
	Code int
	// RetryAfter is the server's Retry-After hint as given, 0 when absent.
	// The hint the engine gets (llm.TransientError.After) is capped at
	// 24 hours, and the engine waits at most its backoff cap (BackoffMax).
	RetryAfter time.Duration
	// Hint says what the status means and what to do about it.
	Hint string
	// Err is the client library's error, usually with the server's message.
	Err error
}

// Error returns "PROVIDER: status CODE: HINT: ERR".
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: status %d", e.Provider, e.Code)
	if e.Hint != "" {
		b.WriteString(": ")
		b.WriteString(e.Hint)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the client library's error.
func (e *StatusError) Unwrap() error { return e.Err }

// Transient reports whether the status is worth retrying: 408, 429 and 5xx
// other than 501 Not Implemented.
func (e *StatusError) Transient() bool { return transientStatus(e.Code) }

func transientStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code == http.StatusNotImplemented:
		return false
	default:
		return code >= 500 && code <= 599
	}
}

// classifier turns the outcome of one GenerateContent call into the error
// Respond returns.
type classifier struct {
	provider string
	model    string
	keyHint  string        // how to fix credentials, e.g. "OPENAI_API_KEY"
	baseURL  string        // endpoint for messages when Transport saw none
	timeout  time.Duration // per-call timeout, 0 for none
}

// classify maps err (from GenerateContent, possibly nil when the client
// library swallowed an HTTP error) to Respond's error. parent is the
// caller's context, call the per-call one; ex is what Transport recorded.
func (c *classifier) classify(parent, call context.Context, ex snapshot, err error) error {
	// 1. The caller gave up: its error, never transient.
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("%s: call abandoned: %w", c.provider, perr)
	}
	// 2. Our own per-call timeout fired while the caller is still waiting.
	if c.timeout > 0 && call.Err() != nil {
		return transient(fmt.Errorf("%s: %w: no answer within the per-call timeout of %s; the engine retries, or raise the timeout",
			c.provider, ErrTimeout, c.timeout), 0)
	}
	// 3. What Transport saw on the wire beats what the library says.
	if ex.err != nil {
		return c.networkError(ex.url, ex.err)
	}
	if ex.status >= 400 {
		return c.statusError(ex.status, ex.retryAfter, err)
	}
	if ex.bodyErr != nil {
		return transient(fmt.Errorf("%s: status %d: %w: the connection dropped while reading the answer from %s: %w",
			c.provider, ex.status, ErrUnreachable, ex.url, ex.bodyErr), 0)
	}
	if err == nil {
		return nil
	}
	// 4. Only the library's error is left: classify its type and text.
	return c.libraryError(ex, err)
}

// networkError classifies a failed HTTP round trip or connection; url names
// the endpoint.
func (c *classifier) networkError(url string, terr error) error {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(terr, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Errorf("%s: cannot resolve host %q of %s: check the base URL: %w", c.provider, dnsErr.Name, url, terr)
	case errors.As(terr, &certErr), errors.As(terr, &unknownAuth), errors.As(terr, &hostErr):
		return fmt.Errorf("%s: TLS certificate of %s rejected: check the base URL (http or https?) and the system's CA certificates: %w", c.provider, url, terr)
	case isTimeout(terr):
		return transient(fmt.Errorf("%s: %w: network timeout talking to %s: %v", c.provider, ErrTimeout, url, terr), 0)
	case errors.Is(terr, syscall.ECONNREFUSED):
		return transient(fmt.Errorf("%s: %w: connection to %s refused: is the server running and the base URL right? %w", c.provider, ErrUnreachable, url, terr), 0)
	case isConnectionDrop(terr):
		return transient(fmt.Errorf("%s: %w: connection to %s failed: %w", c.provider, ErrUnreachable, url, terr), 0)
	}
	return fmt.Errorf("%s: request to %s failed: %w", c.provider, url, terr)
}

// statusError classifies an HTTP error status.
func (c *classifier) statusError(code int, after time.Duration, libErr error) error {
	se := &StatusError{Provider: c.provider, Code: code, RetryAfter: after, Err: libErr, Hint: c.statusHint(code, after)}
	if se.Err == nil {
		se.Err = errors.New("the server sent no error message")
	}
	if se.Transient() {
		return transient(se, min(after, maxRetryAfter))
	}
	return se
}

func (c *classifier) statusHint(code int, after time.Duration) string {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		h := "the server rejected the credentials: check the API key"
		if c.keyHint != "" {
			h += " (" + c.keyHint + ")"
		}
		if c.model != "" {
			h += fmt.Sprintf(" and that it may use model %q", c.model)
		}
		return h
	case code == http.StatusNotFound:
		if c.model != "" {
			return fmt.Sprintf("not found: check the model name %q and the base URL", c.model)
		}
		return "not found: check the model name and the base URL"
	case code == http.StatusTooManyRequests:
		if after > 0 {
			return "rate limited " + askedWait(after)
		}
		return "rate limited"
	case code == http.StatusRequestTimeout:
		return "the server timed out waiting for the request"
	case code == http.StatusNotImplemented:
		return "the server does not implement this API: check the base URL"
	case code >= 500:
		if after > 0 {
			return "server error " + askedWait(after)
		}
		return "server error; a later attempt may succeed"
	case code == http.StatusRequestEntityTooLarge:
		return "request too large: shorten the prompt"
	default:
		return "request rejected: check the model name, the prompt size and the options"
	}
}

// statusInText finds the status code langchaingo's OpenAI client puts in
// its messages ("API returned unexpected status code: 429").
var statusInText = regexp.MustCompile(`status code:? (\d{3})\b`)

// libraryError classifies an error from its type and text when Transport
// recorded nothing conclusive (a host-built model without Transport, or an
// error raised after a 2xx answer).
func (c *classifier) libraryError(ex snapshot, err error) error {
	var synErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var lerr *llms.Error
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		// An inner deadline, not the caller's: keep it from matching
		// context.DeadlineExceeded, which would read as the caller's.
		return transient(fmt.Errorf("%s: %w: %v", c.provider, ErrTimeout, err), 0)
	case isTimeout(err), strings.HasPrefix(msg, "request timeout"):
		return transient(fmt.Errorf("%s: %w: %w", c.provider, ErrTimeout, err), 0)
	case errors.Is(err, openai.ErrEmptyResponse), errors.Is(err, ollama.ErrEmptyResponse), msg == "empty response":
		return c.withStatus(ex.status, ErrNoChoices, err)
	case errors.As(err, &synErr), errors.As(err, &typeErr), errors.Is(err, io.ErrUnexpectedEOF) && ex.status != 0:
		return c.withStatus(ex.status, ErrMalformedResponse, err)
	case errors.As(err, &lerr):
		return c.llmsError(lerr)
	}
	if m := statusInText.FindStringSubmatch(msg); m != nil {
		code, _ := strconv.Atoi(m[1])
		if code >= 400 {
			return c.statusError(code, 0, err)
		}
	}
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case errors.As(err, &urlErr):
		return c.networkError(redactURLString(urlErr.URL), urlErr.Err)
	case errors.As(err, &netErr), errors.Is(err, syscall.ECONNREFUSED), isConnectionDrop(err):
		return c.networkError(c.endpoint(ex), err)
	case strings.HasPrefix(msg, "network error"):
		// langchaingo's OpenAI client hides the cause of every network
		// failure behind this text.
		return transient(fmt.Errorf("%s: %w: cannot reach %s: %w", c.provider, ErrUnreachable, c.endpoint(ex), err), 0)
	}
	return c.withStatus(ex.status, nil, err)
}

// endpoint names the server in messages.
func (c *classifier) endpoint(ex snapshot) string {
	if ex.url != "" {
		return ex.url
	}
	if c.baseURL != "" {
		return c.baseURL
	}
	return "the server"
}

// llmsError classifies langchaingo's standardized errors.
func (c *classifier) llmsError(e *llms.Error) error {
	switch e.Code {
	case llms.ErrCodeRateLimit:
		return c.statusError(http.StatusTooManyRequests, 0, e)
	case llms.ErrCodeProviderUnavailable:
		return c.statusError(http.StatusServiceUnavailable, 0, e)
	case llms.ErrCodeAuthentication:
		return c.statusError(http.StatusUnauthorized, 0, e)
	case llms.ErrCodeTimeout:
		return transient(fmt.Errorf("%s: %w: %v", c.provider, ErrTimeout, e), 0)
	}
	return fmt.Errorf("%s: %w", c.provider, e)
}

// withStatus wraps err with the provider, the status when known and an
// optional sentinel.
func (c *classifier) withStatus(status int, sentinel, err error) error {
	prefix := c.provider
	if status != 0 {
		prefix += ": status " + strconv.Itoa(status)
	}
	if sentinel != nil {
		return fmt.Errorf("%s: %w: %w", prefix, sentinel, err)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

func transient(err error, after time.Duration) error {
	return &llm.TransientError{Err: err, After: after}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isConnectionDrop reports connection-level failures worth a retry: resets,
// broken pipes, the server closing the connection, other dial/read/write
// errors.
func isConnectionDrop(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &opErr)
}

// askedWait says how long the server asks to wait, as it asked; a wait
// longer than refine ever waits is reported as such, not as the cap.
func askedWait(after time.Duration) string {
	if after > maxRetryAfter {
		return fmt.Sprintf("(the server asks to wait %s, longer than refine waits: retries are spaced by the backoff cap instead)", after)
	}
	return fmt.Sprintf("(the server asks to wait %s)", after)
}
