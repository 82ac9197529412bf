package llm

import (
	"errors"
	"time"
)

// Transient is implemented by Role errors worth retrying after a pause:
// timeouts, rate limits, server errors, dropped connections. Transport
// retries never spend the validation retry budget.
type Transient interface {
	error
	// Transient reports whether the error is worth retrying.
	Transient() bool
	// RetryAfter is the server's hint for how long to wait (0: none).
	RetryAfter() time.Duration
}

// TransientError wraps Err as a transient failure with an optional
// retry-after hint. Role adapters return it for 429, 5xx and timeouts.
type TransientError struct {
	Err   error
	After time.Duration
}

// Error returns the wrapped error's message.
func (e *TransientError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error, for errors.Is and errors.As.
func (e *TransientError) Unwrap() error { return e.Err }

// Transient reports true: the Mediator retries the call after a backoff.
func (e *TransientError) Transient() bool { return true }

// RetryAfter returns the server's hint (0: none).
func (e *TransientError) RetryAfter() time.Duration { return e.After }

// IsTransient reports whether err (or an error it wraps) is Transient, and
// returns its retry-after hint.
func IsTransient(err error) (bool, time.Duration) {
	var t Transient
	if errors.As(err, &t) && t.Transient() {
		return true, t.RetryAfter()
	}
	return false, 0
}
