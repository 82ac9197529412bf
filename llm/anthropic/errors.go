package anthropic

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/refine-spec/refine/llm"
)

// Sentinel errors, matched with errors.Is. Transient ones come wrapped in a
// *llm.TransientError.
var (
	// ErrTimeout: the call exceeded its own timeout ([WithTimeout]) or a
	// network timeout while the caller's context was still alive.
	// Transient. It does not match context.DeadlineExceeded, which is
	// reserved for the caller's own deadline.
	ErrTimeout = errors.New("call timed out")
	// ErrUnreachable: the connection to the API failed or dropped before
	// an answer's headers arrived. Transient.
	ErrUnreachable = errors.New("API unreachable")
	// ErrResponseBody: a success status arrived, but its body did not make
	// an answer: it was not a Messages API response (malformed JSON, a
	// proxy's page), it was cut short, or it stalled past the idle
	// timeout ([WithIdleTimeout]). Transient.
	ErrResponseBody = errors.New("bad response body")
)

// StatusOverloaded is the status the Messages API answers when it is
// overloaded (error type overloaded_error). Transient.
const StatusOverloaded = 529

// maxRetryAfter caps the hint passed to the engine, which waits at most its
// own backoff cap anyway.
const maxRetryAfter = 24 * time.Hour

// StatusError is an HTTP error status of the Messages API. Role returns it
// wrapped in a *llm.TransientError for 408, 429 and 5xx other than 501
// (529 overloaded included), bare otherwise.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// Type is the API's error type ("rate_limit_error",
	// "overloaded_error", "authentication_error", …), "" when absent.
	Type string
	// RequestID is the API's request-id, for support requests.
	RequestID string
	// RetryAfter is the server's hint (retry-after-ms or Retry-After), 0
	// when absent.
	RetryAfter time.Duration
	// Hint says what the status means and what to do.
	Hint string
	// Err is the SDK's error, with the server's message.
	Err error
}

// Error returns "anthropic: status CODE TYPE: HINT: ERR".
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "anthropic: status %d", e.Code)
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Hint != "" {
		b.WriteString(": " + e.Hint)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the SDK's error.
func (e *StatusError) Unwrap() error { return e.Err }

// Transient reports whether the status is worth retrying: 408, 429 and 5xx
// other than 501.
func (e *StatusError) Transient() bool {
	switch {
	case e.Code == http.StatusRequestTimeout, e.Code == http.StatusTooManyRequests:
		return true
	case e.Code == http.StatusNotImplemented:
		return false
	}
	return e.Code >= 500 && e.Code <= 599
}

// classify maps the SDK's error to Respond's. parent is the caller's
// context, call the per-call one, body what the response's body did.
func (r *Role) classify(parent, call context.Context, err error, body *bodyLimit) error {
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("anthropic: call abandoned: %w", perr)
	}
	if r.timeout > 0 && call.Err() != nil {
		return transient(fmt.Errorf("anthropic: %w: no answer within the per-call timeout of %s; the engine retries, or raise the timeout", ErrTimeout, r.timeout), 0)
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		se := &StatusError{Code: apiErr.StatusCode, Type: string(apiErr.Type()), RequestID: apiErr.RequestID, Err: err}
		se.RetryAfter = retryAfter(apiErr.Response.Header, time.Now())
		se.Hint = r.hint(se)
		if se.Transient() {
			return transient(se, min(se.RetryAfter, maxRetryAfter))
		}
		return se
	}
	if berr := body.bodyError(r.baseURL, err); berr != nil {
		return berr
	}
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	switch {
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return transient(fmt.Errorf("anthropic: %w: talking to %s: %v", ErrTimeout, r.baseURL, err), 0)
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Errorf("anthropic: cannot resolve host %q of %s: check the base URL: %w", dnsErr.Name, r.baseURL, err)
	case errors.As(err, &certErr), errors.As(err, &unknownAuth):
		return fmt.Errorf("anthropic: TLS certificate of %s rejected: check the base URL and the system's CA certificates: %w", r.baseURL, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return transient(fmt.Errorf("anthropic: %w: connection to %s refused: is the server running and the base URL right? %w", ErrUnreachable, r.baseURL, err), 0)
	case isConnectionDrop(err):
		return transient(fmt.Errorf("anthropic: %w: connection to %s failed: %w", ErrUnreachable, r.baseURL, err), 0)
	}
	return fmt.Errorf("anthropic: %w", err)
}

// hint says what a status means.
func (r *Role) hint(e *StatusError) string {
	wait := ""
	if e.RetryAfter > 0 {
		wait = fmt.Sprintf(" (the server asks to wait %s)", e.RetryAfter)
	}
	switch {
	case e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden:
		return fmt.Sprintf("the API rejected the credentials: check ANTHROPIC_API_KEY and that it may use model %q", r.model)
	case e.Code == http.StatusNotFound:
		return fmt.Sprintf("not found: check the model name %q and the base URL", r.model)
	case e.Code == http.StatusTooManyRequests:
		return "rate limited" + wait
	case e.Code == StatusOverloaded:
		return "the API is overloaded; a later attempt may succeed" + wait
	case e.Code == http.StatusRequestEntityTooLarge:
		return "request too large: shorten the prompt (a smaller PromptBudget)"
	case e.Code >= 500:
		return "server error; a later attempt may succeed" + wait
	}
	return "request rejected: check the model name, the prompt size and the options"
}

// retryAfter reads the server's retry hint: retry-after-ms, else
// Retry-After in seconds or as an HTTP date; 0 when absent or unusable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 && v < 1e12 {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs > 0 && secs <= 1e9) { // NaN too
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if ref, err := http.ParseTime(h.Get("Date")); err == nil {
		now = ref
	}
	return max(at.Sub(now), 0)
}

func transient(err error, after time.Duration) error {
	return &llm.TransientError{Err: err, After: after}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isConnectionDrop(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &opErr)
}
