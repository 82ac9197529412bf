package core

import (
	"time"

	"github.com/refine-spec/refine/llm"
)

// Transient is [llm.Transient]: a Role error worth retrying after a pause.
type Transient = llm.Transient

// TransientError is [llm.TransientError]: Err wrapped as a transient
// failure with an optional retry-after hint.
type TransientError = llm.TransientError

// IsTransient reports whether err (or an error it wraps) is Transient, and
// returns its retry-after hint ([llm.IsTransient]).
func IsTransient(err error) (bool, time.Duration) { return llm.IsTransient(err) }
