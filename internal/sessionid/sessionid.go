// Package sessionid makes the session IDs refine's Backends hand out when
// a session is created without a chosen ID.
//
// An ID is the creation time in UTC to the second followed by six random
// hex digits ("20250301-141502-3fa9c1"): it sorts by creation time, reads
// as a date in a folder listing, and two sessions created in the same
// second in different processes still differ.
package sessionid

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// Generator makes session IDs. The zero value uses the wall clock and
// crypto/rand; tests set Now and Rand for fixed IDs.
type Generator struct {
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Rand fills b with random bytes; nil means crypto/rand.Read.
	Rand func(b []byte)
}

// New returns a fresh ID that passes store.ValidSessionID.
func (g Generator) New() string {
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	var b [3]byte
	if g.Rand != nil {
		g.Rand(b[:])
	} else {
		_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	}
	return now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Sequence returns a Rand function for tests: each call fills b from a
// counter, so IDs made in the same second stay distinct and predictable.
// It is safe for concurrent use.
func Sequence() func(b []byte) {
	var mu sync.Mutex
	n := 0
	return func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		n++
		v := n
		for i := len(b) - 1; i >= 0; i-- {
			b[i] = byte(v)
			v >>= 8
		}
	}
}
