package langchain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine/llm"
)

// A Retry-After longer than refine waits is reported as the server gave
// it, saying that the cap applies, not as the cap.
func TestLongRetryAfterIsReportedAsGiven(t *testing.T) {
	c := &classifier{provider: "openai"}
	for _, code := range []int{429, 503} {
		err := c.statusError(code, parseRetryAfter("172800", "", time.Now()), errors.New("slow down"))
		msg := err.Error()
		if !strings.Contains(msg, "48h0m0s") || !strings.Contains(msg, "cap") {
			t.Errorf("status %d: %q does not report the 48h asked for and the cap", code, msg)
		}
		transient, hint := llm.IsTransient(err)
		if !transient || hint != maxRetryAfter {
			t.Errorf("status %d: transient %v, hint %v; want the hint capped at %v", code, transient, hint, maxRetryAfter)
		}
		var se *StatusError
		if !errors.As(err, &se) || se.RetryAfter != 48*time.Hour {
			t.Errorf("status %d: StatusError.RetryAfter = %v, want what the server asked (48h)", code, se)
		}
	}
}
