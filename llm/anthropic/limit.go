package anthropic

import (
	"errors"
	"io"
	"net/http"
	"sync"
)

// errBodyTooLarge ends the read of a response body above its bound.
var errBodyTooLarge = errors.New("response body above the size limit")

// bodyLimit bounds the bytes read of one call's response body and keeps
// its first bytes: an answer of n bytes needs at most 4n bytes of JSON
// (escapes) plus room for the envelope, and nothing more is read.
type bodyLimit struct {
	mu       sync.Mutex
	limit    int64
	headSize int
	head     []byte
	read     int64
	tooLarge bool
}

func newBodyLimit(maxBytes int) *bodyLimit {
	return &bodyLimit{limit: 4*int64(maxBytes) + 64<<10, headSize: maxBytes + 1}
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

type limitTransport struct {
	base http.RoundTripper
	l    *bodyLimit
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		t.l.mu.Lock()
		t.l.head, t.l.read, t.l.tooLarge = nil, 0, false // the last response counts
		t.l.mu.Unlock()
		resp.Body = &limitedBody{ReadCloser: resp.Body, l: t.l}
	}
	return resp, err
}

type limitedBody struct {
	io.ReadCloser
	l *bodyLimit
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
	n, err := b.ReadCloser.Read(p)
	l.mu.Lock()
	if keep := l.headSize - len(l.head); keep > 0 && n > 0 {
		l.head = append(l.head, p[:min(n, keep)]...)
	}
	l.read += int64(n)
	l.mu.Unlock()
	return n, err
}
