package question

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidAnswer is returned (wrapped) for an answer that picks an option
// not offered, omits text an option needs, or carries text where none is
// allowed. Match it with errors.Is.
var ErrInvalidAnswer = errors.New("invalid answer")

// Check returns an error wrapping ErrInvalidAnswer when a does not fit q:
// a key that was not offered (keys match exactly, as offered), text where
// none is allowed, or no text for an option listed in TextRequired.
func (q Question) Check(a Answer) error {
	if len(q.Options) > 0 {
		if _, ok := q.Option(a.Key); !ok {
			return fmt.Errorf("%w: question %s offers %s, not %q", ErrInvalidAnswer, q.ID, strings.Join(q.Keys(), ", "), a.Key)
		}
	}
	if a.Text != "" && !q.AllowText {
		return fmt.Errorf("%w: question %s takes no free text (answer with just the option key)", ErrInvalidAnswer, q.ID)
	}
	for _, k := range q.TextRequired {
		if k == a.Key && strings.TrimSpace(a.Text) == "" {
			return fmt.Errorf("%w: option %s of question %s needs text (answer \"%s: your text\")", ErrInvalidAnswer, k, q.ID, k)
		}
	}
	return nil
}

// Option returns the offered option whose key is key, exactly: an answer
// is matched as offered wherever it comes from, so one a check accepts is
// one every later step acts on. A user interface that lets a person type
// "a" for "A" canonicalizes it where the answer enters (CanonicalKey).
func (q Question) Option(key string) (Option, bool) {
	for _, o := range q.Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// Keys returns the offered option keys in order.
func (q Question) Keys() []string {
	keys := make([]string, len(q.Options))
	for i, o := range q.Options {
		keys[i] = o.Key
	}
	return keys
}

// CanonicalKey returns the offered key that key names when case is
// ignored, or key unchanged when none (or several) do: for a terminal or a
// form where a person types the key.
func (q Question) CanonicalKey(key string) string {
	found := ""
	for _, o := range q.Options {
		if o.Key == key {
			return key
		}
		if strings.EqualFold(o.Key, key) {
			if found != "" {
				return key
			}
			found = o.Key
		}
	}
	if found == "" {
		return key
	}
	return found
}
