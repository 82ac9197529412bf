package rollbacktext

import (
	"fmt"
	"strings"
)

// Prompt is a question for the user, in a neutral shape the engine maps onto
// its Asker's Question. Body is markdown as the spec shows it, without the
// option list (an Asker renders Options itself; Text renders everything).
type Prompt struct {
	// ID is stable for the same situation (round, attempt), so a deferred
	// answer finds its question again after a restart.
	ID    string
	Title string
	Body  string
	// Options are the choices, keyed as the spec numbers them ("1", "2", …).
	Options []Option
	// AllowText reports whether the answer may carry free text (context for
	// a retry, sub-gap titles, a modified decision).
	AllowText bool
	// Default is the option key an automated run (no user) takes; each
	// prompt constructor documents its choice.
	Default string
}

// Option is one choice of a Prompt.
type Option struct {
	Key   string
	Label string
	// Effect is a stable machine token saying what choosing the option does
	// ("retry-same", "split", "reapply:DECISION-R6-001", …); the engine
	// dispatches on it rather than on Key, whose numbering follows the spec.
	Effect      string
	Recommended bool
}

// Option returns the option with the given key.
func (p Prompt) Option(key string) (Option, bool) {
	for _, o := range p.Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// Text renders the whole prompt as the spec's boxed questions read: title,
// body, numbered options with (RECOMMENDED) marks.
func (p Prompt) Text() string {
	var b strings.Builder
	if p.Title != "" {
		b.WriteString(p.Title + "\n\n")
	}
	if p.Body != "" {
		b.WriteString(strings.TrimRight(p.Body, "\n") + "\n\n")
	}
	if len(p.Options) > 0 {
		b.WriteString("Options:\n")
		for _, o := range p.Options {
			fmt.Fprintf(&b, "%s. %s", o.Key, o.Label)
			if o.Recommended {
				b.WriteString(" (RECOMMENDED)")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
