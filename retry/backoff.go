package retry

import "time"

// Backoff is exponential backoff with full jitter for transient transport
// errors (timeouts, 429, 5xx).
type Backoff struct {
	Base time.Duration // first ceiling
	Max  time.Duration // no delay exceeds Max
}

// Delay returns how long to wait before transport retry n (1-based). The
// ceiling doubles each retry from Base up to Max; the delay is a uniformly
// random point below it (full jitter, so many clients hitting the same limit
// spread out). A server hint (Retry-After) raises the delay to at least the
// hint; every delay is bounded by Max. rnd returns a value in [0, 1).
func (b Backoff) Delay(n int, hint time.Duration, rnd func() float64) time.Duration {
	ceiling := b.Base
	for i := 1; i < n && ceiling < b.Max; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, b.Max)
	d := time.Duration(rnd() * float64(ceiling))
	if hint > d {
		d = hint
	}
	return min(d, b.Max)
}
