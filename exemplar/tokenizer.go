package exemplar

import "unicode/utf8"

// CharsPerToken is the spec's conservative estimate of characters per token
// (GAP-FLOW-008 §6: "1 token per 4 chars").
const CharsPerToken = 4

// Tokenizer counts the tokens of a text. Truncation relies on two
// properties every real tokenizer has: the empty text counts 0, and a
// prefix never counts more than the text it is a prefix of. A Tokenizer
// that breaks them still never gets a result over budget, only a shorter
// one.
type Tokenizer interface {
	Count(text string) int
}

// PrefixCutter is an optional Tokenizer capability: a tokenizer that can find
// the longest prefix within a budget directly, rather than by the binary
// search Prefix falls back to.
type PrefixCutter interface {
	Tokenizer
	// Prefix returns the longest prefix of text that ends on a rune
	// boundary and counts at most budget tokens; "" when budget <= 0.
	Prefix(text string, budget int) string
}

// CharTokenizer is the default Tokenizer: one token per CharsPerToken
// characters, rounded up. Characters are Unicode code points (runes), as in
// the spec's Python len(); counting bytes would charge non-ASCII text up to
// four times over. Each byte of invalid UTF-8 counts as one character. The
// zero value is ready to use.
type CharTokenizer struct{}

// Count returns ceil(runes / CharsPerToken).
func (CharTokenizer) Count(text string) int {
	return (utf8.RuneCountInString(text) + CharsPerToken - 1) / CharsPerToken
}

// Prefix returns the first budget*CharsPerToken runes of text, in one pass.
func (CharTokenizer) Prefix(text string, budget int) string {
	if budget <= 0 {
		return ""
	}
	// A text never has more runes than bytes, so this also keeps the
	// multiplication below from overflowing.
	if budget >= len(text) {
		return text
	}
	limit := budget * CharsPerToken
	if len(text) <= limit {
		return text
	}
	runes := 0
	for i := range text {
		if runes == limit {
			return text[:i]
		}
		runes++
	}
	return text
}

// Prefix returns the longest prefix of text, ending on a rune boundary, that
// tok counts at most budget tokens; "" when budget <= 0. A nil tok means
// CharTokenizer. It costs one pass for a PrefixCutter (CharTokenizer is
// one) and O(log n) counts otherwise.
func Prefix(text string, budget int, tok Tokenizer) string {
	tok = orDefault(tok)
	if budget <= 0 {
		return ""
	}
	if c, ok := tok.(PrefixCutter); ok {
		return c.Prefix(text, budget)
	}
	if tok.Count(text) <= budget {
		return text
	}
	end := lastFit(len(text)+1, func(p int) bool {
		return tok.Count(text[:runeBoundary(text, p)]) <= budget
	})
	if end < 0 {
		return ""
	}
	return text[:runeBoundary(text, end)]
}

func orDefault(tok Tokenizer) Tokenizer {
	if tok == nil {
		return CharTokenizer{}
	}
	return tok
}

// runeBoundary moves byte offset p back to the start of the rune that
// contains it, decoding as a range loop does (an invalid byte is a rune of
// its own), so cuts never split a character.
func runeBoundary(s string, p int) int {
	if p <= 0 {
		return 0
	}
	if p >= len(s) {
		return len(s)
	}
	if utf8.RuneStart(s[p]) {
		return p
	}
	for q := p - 1; q >= 0 && q > p-utf8.UTFMax; q-- {
		if utf8.RuneStart(s[q]) {
			if _, w := utf8.DecodeRuneInString(s[q:]); q+w > p {
				return q
			}
			return p
		}
	}
	return p // a stray continuation byte is a rune of its own
}

// lastFit returns the largest i in [0, n) with fits(i), assuming fits is
// true up to some index and false after it, or -1 when fits(0) is false.
// It gallops from 0 before bisecting, so when a probe costs in proportion to
// its index the total cost follows the answer, not n. Every index it
// returns was probed and fitted, whatever fits does.
func lastFit(n int, fits func(i int) bool) int {
	if n <= 0 || !fits(0) {
		return -1
	}
	lo, hi := 0, n // fits(lo) holds; hi is out of range or does not fit
	for step := 1; lo+step < n; step *= 2 {
		if !fits(lo + step) {
			hi = lo + step
			break
		}
		lo += step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
