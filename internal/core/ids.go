package core

import (
	"github.com/refine-spec/refine/exemplar"
)

// IDSource makes identifiers for sessions.
type IDSource interface {
	NewID() string
}

// Tokenizer counts tokens for prompt budgets and example truncation. It is
// exemplar.Tokenizer: one interface for the whole library.
type Tokenizer = exemplar.Tokenizer

// CharTokenizer is the spec's estimate of four characters (runes) per
// token, rounded up: the default, with no network access.
type CharTokenizer = exemplar.CharTokenizer
