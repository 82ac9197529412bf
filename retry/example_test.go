package retry_test

import (
	"fmt"
	"time"

	"github.com/refine-spec/refine/retry"
)

// The prompt modification for a failure type, and the backoff between
// transport retries: full jitter under an exponential ceiling, raised to
// a server's Retry-After hint, never above Max.
func Example() {
	fmt.Println(retry.Label("WRONG_FORMAT"))
	b := retry.Backoff{Base: time.Second, Max: 60 * time.Second}
	half := func() float64 { return 0.5 }
	fmt.Println(b.Delay(1, 0, half), b.Delay(3, 0, half), b.Delay(3, 10*time.Second, half))
	// Output:
	// FORMAT CORRECTION REQUIRED (structural headers)
	// 500ms 2s 10s
}
