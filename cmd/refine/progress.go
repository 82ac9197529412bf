package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/refine-spec/refine"
)

// progress prints one line per phase and attempt on stderr. On a terminal
// it also keeps a spinner with the elapsed time on the last line while a
// role call is in flight; elsewhere (CI, pipes) it prints plain lines only.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	started  time.Time

	// spinner state, terminal only
	inFlight string // what is running, "" when idle
	since    time.Time
	frame    int
	stop     chan struct{}
	done     chan struct{}
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func newProgress(w io.Writer, terminal bool) *progress {
	return &progress{w: w, terminal: terminal, started: time.Now()}
}

func (p *progress) Observe(e refine.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearSpinner()
	elapsed := time.Since(p.started).Round(100 * time.Millisecond)
	tokens := e.Usage.PromptTokens + e.Usage.CompletionTokens
	// Messages carry LLM and server text: shown, never obeyed by the terminal.
	msg := safeText(e.Message)
	prefix := fmt.Sprintf("[%6s] round %d", elapsed, e.Round)
	switch {
	case e.Phase == refine.PhaseIntegration:
		prefix = fmt.Sprintf("[%6s] final spec", elapsed)
	case e.Round == 0:
		// Round 0 is discovery (DESIGN §19): the Reviewer reads the draft.
		prefix = fmt.Sprintf("[%6s] discovery", elapsed)
	}
	switch e.Kind {
	case refine.EventIntegrated:
		fmt.Fprintf(p.w, "%s: %s\n", prefix, msg)
	case refine.EventRoundStarted:
		fmt.Fprintf(p.w, "%s: started (%s)\n", prefix, msg)
	case refine.EventAttemptStarted:
		who := string(e.Role)
		if e.Gap != "" {
			who += " " + safeLine(e.Gap)
		}
		fmt.Fprintf(p.w, "%s: %s attempt %d… (tokens so far %d)\n", prefix, who, e.Attempt, tokens)
		p.startSpinner(fmt.Sprintf("%s %s attempt %d", prefix[9:], who, e.Attempt))
	case refine.EventAttemptFinished:
		p.stopSpinner()
		verdict := "valid"
		if e.FailureType != "" {
			verdict = safeLine(string(e.FailureType)) + ": " + msg
		}
		fmt.Fprintf(p.w, "%s: %s attempt %d %s (%s)\n", prefix, e.Role, e.Attempt, verdict, e.Elapsed.Round(time.Millisecond))
	case refine.EventTransportRetry:
		fmt.Fprintf(p.w, "%s: %s transport error, retrying in %s: %s\n", prefix, e.Role, e.Elapsed.Round(time.Millisecond), msg)
	case refine.EventQuestionAsked:
		p.stopSpinner()
	case refine.EventRoundFinished:
		fmt.Fprintf(p.w, "%s: finished (%s)\n", prefix, msg)
	case refine.EventRolledBack:
		// The event's round is the one restored; the message names the undone rounds.
		fmt.Fprintf(p.w, "[%6s] rollback: %s\n", elapsed, msg)
	case refine.EventSessionFinished:
		p.stopSpinner()
		fmt.Fprintf(p.w, "[%6s] session %s: %s\n", elapsed, e.Outcome, msg)
	}
	p.drawSpinner()
}

// startSpinner begins animating (terminal only). Callers hold mu.
func (p *progress) startSpinner(what string) {
	if !p.terminal {
		return
	}
	p.inFlight, p.since = what, time.Now()
	if p.stop != nil {
		return
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.spin(p.stop, p.done)
}

// stopSpinner ends the animation and waits for it. Callers hold mu, so the
// goroutine is told to stop without taking mu again.
func (p *progress) stopSpinner() {
	p.inFlight = ""
	if p.stop == nil {
		return
	}
	close(p.stop)
	stopped := p.done
	p.stop, p.done = nil, nil
	p.mu.Unlock()
	<-stopped
	p.mu.Lock()
	p.clearSpinner()
}

func (p *progress) spin(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.clearSpinner()
			p.frame++
			p.drawSpinner()
			p.mu.Unlock()
		}
	}
}

func (p *progress) drawSpinner() {
	if !p.terminal || p.inFlight == "" {
		return
	}
	fmt.Fprintf(p.w, "%s %s (%s)", spinnerFrames[p.frame%len(spinnerFrames)], p.inFlight, time.Since(p.since).Round(time.Second))
}

func (p *progress) clearSpinner() {
	if p.terminal && p.inFlight != "" {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
