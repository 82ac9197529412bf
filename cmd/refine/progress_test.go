package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/refine-spec/refine"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestProgressPlainWithoutTerminal(t *testing.T) {
	var buf lockedBuffer
	p := newProgress(&buf, false)
	p.Observe(refine.Event{Kind: refine.EventAttemptStarted, Round: 1, Role: refine.Engineer, Attempt: 1})
	p.Observe(refine.Event{Kind: refine.EventAttemptFinished, Round: 1, Role: refine.Engineer, Attempt: 1, Elapsed: 20 * time.Millisecond})
	out := buf.String()
	if strings.ContainsAny(out, "\r\033") {
		t.Errorf("control characters without a terminal: %q", out)
	}
	if !strings.Contains(out, "round 1: engineer attempt 1…") || !strings.Contains(out, "engineer attempt 1 valid") {
		t.Errorf("progress lines:\n%s", out)
	}
}

func TestProgressSpinnerOnTerminal(t *testing.T) {
	var buf lockedBuffer
	p := newProgress(&buf, true)
	p.Observe(refine.Event{Kind: refine.EventAttemptStarted, Round: 2, Role: refine.Reviewer, Attempt: 1})
	p.Observe(refine.Event{Kind: refine.EventAttemptFinished, Round: 2, Role: refine.Reviewer, Attempt: 1})
	out := buf.String()
	if !strings.Contains(out, "round 2 reviewer attempt 1") || !strings.Contains(out, "\r\033[K") {
		t.Errorf("spinner not drawn and cleared: %q", out)
	}
	if p.stop != nil {
		t.Errorf("spinner goroutine still running after the attempt finished")
	}
}
