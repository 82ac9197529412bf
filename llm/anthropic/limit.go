package anthropic

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// errBodyTooLarge ends the read of a response body above its bound.
var errBodyTooLarge = errors.New("response body above the size limit")

// bodyLimit watches one call's response body: it bounds the bytes read
// and keeps the first ones (an answer of n bytes needs at most 4n bytes
// of JSON, for escapes, plus room for the envelope, and nothing more is
// read), closes a body that sends nothing for the idle timeout, and
// remembers how the read went, so a failed call can name the body as its
// cause instead of the connection.
type bodyLimit struct {
	mu       sync.Mutex
	limit    int64
	headSize int
	idle     time.Duration
	head     []byte
	read     int64
	tooLarge bool
	// Of the last response: its status, its announced length (-1 when
	// unknown), whether its body was read to the end, the first error
	// reading it, and whether the idle timeout closed it.
	status  int
	length  int64
	eof     bool
	readErr error
	stalled bool
}

func newBodyLimit(maxBytes int, idle time.Duration) *bodyLimit {
	return &bodyLimit{limit: 4*int64(maxBytes) + 64<<10, headSize: maxBytes + 1, idle: idle}
}

// client returns a copy of hc whose responses are read through l.
func (l *bodyLimit) client(hc *http.Client) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = limitTransport{base: base, l: l}
	return &c
}

// exceeded reports whether the bound was hit, with the body's first bytes.
func (l *bodyLimit) exceeded() (bool, []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tooLarge, l.head
}

// bodyError names what went wrong with a response whose headers arrived
// but whose body did not make an answer: it stalled, it was cut short, or
// it was whole but not a Messages API answer (cause is the SDK's error).
// It returns nil when no response arrived or it was not a success status
// (the SDK's own error says that better).
func (l *bodyLimit) bodyError(base string, cause error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.status < 200 || l.status > 299 {
		return nil
	}
	of := ""
	if l.length >= 0 {
		of = fmt.Sprintf(" of %d", l.length)
	}
	switch {
	case l.stalled:
		return transient(fmt.Errorf("anthropic: %w: the answer from %s (status %d) stalled: no byte for %s after %d%s bytes; the engine retries",
			ErrResponseBody, base, l.status, l.idle, l.read, of), 0)
	case l.readErr != nil:
		return transient(fmt.Errorf("anthropic: %w: the answer from %s (status %d) was cut short after %d%s bytes: %w; the engine retries",
			ErrResponseBody, base, l.status, l.read, of, l.readErr), 0)
	case l.eof:
		return transient(fmt.Errorf("anthropic: %w: the answer from %s (status %d, %d bytes) is not a Messages API response: %w; the engine retries (if it persists, check the base URL and any proxy)",
			ErrResponseBody, base, l.status, l.read, cause), 0)
	}
	return nil
}

type limitTransport struct {
	base http.RoundTripper
	l    *bodyLimit
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		l := t.l
		l.mu.Lock()
		// The last response counts.
		l.head, l.read, l.tooLarge = nil, 0, false
		l.status, l.length, l.eof, l.readErr, l.stalled = resp.StatusCode, resp.ContentLength, false, nil, false
		l.mu.Unlock()
		resp.Body = &limitedBody{ReadCloser: resp.Body, l: l}
	}
	return resp, err
}

type limitedBody struct {
	io.ReadCloser
	l     *bodyLimit
	timer *time.Timer // closes the body when a read waits longer than l.idle
}

func (b *limitedBody) Read(p []byte) (int, error) {
	l := b.l
	l.mu.Lock()
	if l.read >= l.limit {
		l.tooLarge = true
		l.mu.Unlock()
		return 0, errBodyTooLarge
	}
	p = p[:min(int64(len(p)), l.limit-l.read)]
	l.mu.Unlock()
	b.armIdle()
	n, err := b.ReadCloser.Read(p)
	if b.timer != nil {
		b.timer.Stop()
	}
	l.mu.Lock()
	if keep := l.headSize - len(l.head); keep > 0 && n > 0 {
		l.head = append(l.head, p[:min(n, keep)]...)
	}
	l.read += int64(n)
	switch {
	case errors.Is(err, io.EOF):
		l.eof = true
	case err != nil && l.readErr == nil:
		l.readErr = err
	}
	l.mu.Unlock()
	return n, err
}

// armIdle starts the idle timeout of the next read: closing the body
// ends a read that waits on it.
func (b *limitedBody) armIdle() {
	if b.l.idle <= 0 {
		return
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(b.l.idle, func() {
			b.l.mu.Lock()
			b.l.stalled = true
			b.l.mu.Unlock()
			b.ReadCloser.Close()
		})
		return
	}
	b.timer.Reset(b.l.idle)
}

func (b *limitedBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	return b.ReadCloser.Close()
}
