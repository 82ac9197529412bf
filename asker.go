package refine

import (
	"context"
	"fmt"
	"strings"
)

// Asker asks the user a question and returns the chosen option. An Asker
// that cannot answer now (no terminal, a web UI waiting for a click) returns
// an error wrapping ErrDeferred: the Mediator persists the question and Run
// returns an Outcome with Status Paused and the question in Pending. The host
// later calls Mediator.Answer and Run again, in the same process or after Open.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// AskerFunc adapts a function to an Asker.
type AskerFunc func(ctx context.Context, q Question) (Answer, error)

// Ask calls f.
func (f AskerFunc) Ask(ctx context.Context, q Question) (Answer, error) { return f(ctx, q) }

// QuestionKind says which decision a Question is about.
type QuestionKind string

// The kinds of question the Mediator asks.
const (
	KindEscalation       QuestionKind = "escalation"        // a role exhausted its retries (FLOW-001 §5)
	KindRoundFailed      QuestionKind = "round_failed"      // both roles failed in one round
	KindDivergence       QuestionKind = "divergence"        // DIVERGENCE_WARNING (FLOW-002)
	KindEarlyTermination QuestionKind = "early_termination" // good-enough criteria met (FLOW-005)
	KindConflict         QuestionKind = "conflict"          // an explicit or converted disagreement (FLOW-006)
	KindImplicit         QuestionKind = "implicit"          // feedback apparently ignored (FLOW-013)
	KindDisagreeRate     QuestionKind = "disagree_rate"     // DISAGREE rate limit (FLOW-006 §3)
	KindRollback         QuestionKind = "rollback"          // rollback limit / recovery (FLOW-007)
)

// Option is one choice of a Question.
type Option struct {
	Key         string `json:"key"`
	Label       string `json:"label"`
	Effect      string `json:"effect,omitempty"`
	Recommended bool   `json:"recommended,omitempty"`
}

// Question is a decision the Mediator needs from the user.
type Question struct {
	// ID is stable across processes: answering it after Open works.
	ID    string       `json:"id"`
	Kind  QuestionKind `json:"kind"`
	Round int          `json:"round"`
	Title string       `json:"title"`
	// Body is markdown, worded as the spec's AskUserQuestion blocks.
	Body    string   `json:"body"`
	Options []Option `json:"options"`
	// AllowText says whether free text may accompany (or, with no options,
	// form) the answer.
	AllowText bool `json:"allow_text,omitempty"`
	// Default is the option automated mode picks.
	Default string `json:"default,omitempty"`
	// TextRequired lists the option keys that need free text (a
	// user-specified alternative, a justification).
	TextRequired []string `json:"text_required,omitempty"`
}

// Answer is the user's choice.
type Answer struct {
	Key  string `json:"key"`
	Text string `json:"text,omitempty"`
}

// Check returns an error wrapping ErrInvalidAnswer when a does not fit q:
// a key that was not offered, or text where none is allowed.
func (q Question) Check(a Answer) error {
	if len(q.Options) > 0 {
		keys := make([]string, len(q.Options))
		found := false
		for i, o := range q.Options {
			keys[i] = o.Key
			if strings.EqualFold(o.Key, a.Key) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%w: question %s offers %s, not %q", ErrInvalidAnswer, q.ID, strings.Join(keys, ", "), a.Key)
		}
	}
	if a.Text != "" && !q.AllowText {
		return fmt.Errorf("%w: question %s takes no free text (answer with just the option key)", ErrInvalidAnswer, q.ID)
	}
	for _, k := range q.TextRequired {
		if strings.EqualFold(k, a.Key) && strings.TrimSpace(a.Text) == "" {
			return fmt.Errorf("%w: option %s of question %s needs text (answer \"%s: your text\")", ErrInvalidAnswer, k, q.ID, k)
		}
	}
	return nil
}

// option returns the offered option matching key (case-insensitively).
func (q Question) option(key string) (Option, bool) {
	for _, o := range q.Options {
		if strings.EqualFold(o.Key, key) {
			return o, true
		}
	}
	return Option{}, false
}

// Immediate is implemented by Askers that answer at once, with no person
// in the loop (automated policies). The Mediator then does not make its
// staged progress durable before asking, which saves a Store commit.
type Immediate interface {
	Immediate() bool
}

// DefaultAsker answers every question with its Default option: the
// documented policy of automated mode (refine run --auto).
type DefaultAsker struct{}

// Immediate reports true: DefaultAsker never waits.
func (DefaultAsker) Immediate() bool { return true }

// Ask returns q's default.
func (DefaultAsker) Ask(_ context.Context, q Question) (Answer, error) {
	if q.Default == "" && len(q.Options) > 0 {
		return Answer{Key: q.Options[0].Key}, nil
	}
	return Answer{Key: q.Default}, nil
}

// DeferAsker defers every question, so Run pauses at the first one. Use it
// for hosts that collect answers out of band.
type DeferAsker struct{}

// Ask returns ErrDeferred.
func (DeferAsker) Ask(context.Context, Question) (Answer, error) { return Answer{}, ErrDeferred }
