package question

import (
	"fmt"
	"strings"
)

// Text renders the whole question as plain text for terminals and logs,
// the way the specification's boxed questions read: the title (when set),
// the body, then "Options:" and one "{key}. {label}" line per option,
// marked " (RECOMMENDED)" where advised.
func (q Question) Text() string {
	var b strings.Builder
	if q.Title != "" {
		b.WriteString(q.Title + "\n\n")
	}
	if q.Body != "" {
		b.WriteString(strings.TrimRight(q.Body, "\n") + "\n\n")
	}
	if len(q.Options) > 0 {
		b.WriteString("Options:\n")
		for _, o := range q.Options {
			fmt.Fprintf(&b, "%s. %s", o.Key, o.Label)
			if o.Recommended {
				b.WriteString(" (RECOMMENDED)")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Menu renders options as a question body lists them when the options are
// part of the text the user reads (the escalation question's "=== Options
// ===" block): per option "{key}. {label}", an indented "Effect: {effect}"
// line when the option has one, and a blank line; then the prompt
// "Choose an option ({first key}-{last key}): ___". A body built with Menu
// lists exactly the options the question offers, so an option added to a
// question is never missing from its body.
func Menu(opts []Option) string {
	var b strings.Builder
	for _, o := range opts {
		fmt.Fprintf(&b, "%s. %s\n", o.Key, o.Label)
		if o.Effect != "" {
			fmt.Fprintf(&b, "   Effect: %s\n", o.Effect)
		}
		b.WriteString("\n")
	}
	switch len(opts) {
	case 0:
		b.WriteString("Answer in your own words: ___")
	case 1:
		fmt.Fprintf(&b, "Choose an option (%s): ___", opts[0].Key)
	default:
		fmt.Fprintf(&b, "Choose an option (%s-%s): ___", opts[0].Key, opts[len(opts)-1].Key)
	}
	return b.String()
}
