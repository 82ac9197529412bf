package question

import (
	"fmt"
	"strconv"
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
// "Choose an option (1-5): ___" (keys that are not consecutive numbers
// are named: "1-5 or cancel", "appendix, retry or pause"). A body built with Menu
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
	if len(opts) == 0 {
		b.WriteString("Answer in your own words: ___")
	} else {
		fmt.Fprintf(&b, "Choose an option (%s): ___", keyList(opts))
	}
	return b.String()
}

// keyList names the keys a menu accepts: runs of consecutive numbers as
// a range ("1-5"), every other key by name ("1-5 or cancel", "appendix,
// retry or pause"), so no key reads as a range it is not (#40).
func keyList(opts []Option) string {
	var parts []string
	for i := 0; i < len(opts); {
		j := i
		if n, err := strconv.Atoi(opts[i].Key); err == nil {
			for j+1 < len(opts) {
				m, err := strconv.Atoi(opts[j+1].Key)
				if err != nil || m != n+(j+1-i) {
					break
				}
				j++
			}
		}
		if j > i {
			parts = append(parts, opts[i].Key+"-"+opts[j].Key)
		} else {
			parts = append(parts, opts[i].Key)
		}
		i = j + 1
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
