package conflict

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// keywords is the keyword extractor behind soft matching (§2) and the
// keyword share of heuristic H4: the distinct lower-cased words of s that
// have at least four letters and are not stopwords, sorted. A word is a
// maximal run of letters and digits, so "context-aware" gives "context" and
// "aware", "v2" and "1s" are not keywords and "http2" is. Stopwords are a
// small fixed list of common English function words (about, because, could,
// from, have, must, should, that, their, there, these, this, which, will,
// with, would, …) that carry no subject.
func keywords(s string) []string {
	set := keywordSet(s)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func keywordSet(s string) map[string]struct{} {
	set := map[string]struct{}{}
	forEachWord(s, func(w string, letters int) {
		if letters >= 4 && !isStopword(w) {
			set[w] = struct{}{}
		}
	})
	return set
}

// tokenSet is every lower-cased word of s: the tokens of H4's Jaccard
// similarity, where small words matter as much as long ones.
func tokenSet(s string) map[string]struct{} {
	set := map[string]struct{}{}
	forEachWord(s, func(w string, _ int) { set[w] = struct{}{} })
	return set
}

// forEachWord calls f with each lower-cased word of s and its letter count,
// in one pass.
func forEachWord(s string, f func(w string, letters int)) {
	start, letters := -1, 0
	flush := func(end int) {
		if start >= 0 {
			f(strings.ToLower(s[start:end]), letters)
		}
		start, letters = -1, 0
	}
	for i, r := range s {
		isL, isD := unicode.IsLetter(r), unicode.IsDigit(r)
		if !isL && !isD {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
		if isL {
			letters++
		}
	}
	flush(len(s))
}

// isStopword reports whether w (lower case) is on the stopword list. A
// switch, not a map, so the list cannot be changed at run time.
func isStopword(w string) bool {
	switch w {
	case "about", "above", "after", "again", "against", "also", "been",
		"before", "being", "below", "between", "both", "because", "could",
		"does", "doing", "down", "during", "each", "even", "from", "further",
		"have", "having", "here", "however", "into", "itself", "just",
		"like", "made", "make", "many", "more", "most", "must", "need",
		"only", "other", "over", "same", "shall", "should", "some", "such",
		"than", "that", "their", "theirs", "them", "then", "there", "these",
		"they", "this", "those", "through", "under", "until", "upon",
		"very", "what", "when", "where", "which", "while", "will", "with",
		"within", "without", "would", "your", "yours":
		return true
	}
	return false
}

// overlap is |want ∩ have| / |want|, 0 when want is empty.
func overlap(want, have map[string]struct{}) (shared int, share float64) {
	if len(want) == 0 {
		return 0, 0
	}
	for k := range want {
		if _, ok := have[k]; ok {
			shared++
		}
	}
	return shared, float64(shared) / float64(len(want))
}

// jaccard is |a ∩ b| / |a ∪ b|; two empty sets are identical (1).
func jaccard(a, b map[string]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for k := range a {
		if _, ok := b[k]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// normWords reduces s to its lower-cased words joined by single spaces,
// with a space at each end, so that phrase containment ignores case,
// punctuation, line wrapping and blockquote markers and respects word
// boundaries: " out of scope " is not found in " without of scopes ".
func normWords(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(' ')
	inWord := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
			inWord = true
			continue
		}
		if inWord {
			b.WriteByte(' ')
			inWord = false
		}
	}
	if inWord {
		b.WriteByte(' ')
	}
	return b.String()
}

// quotable reports whether a normalised phrase is specific enough that
// finding it in a text means it was quoted: at least three words, or one
// or two words of ten or more characters together.
func quotable(norm string) bool {
	words := strings.Count(norm, " ") - 1
	return words >= 3 || (words >= 1 && utf8.RuneCountInString(norm) >= 12)
}

// locatable is quotable's rule for locations, which are short by nature
// ("Section 3.2", "retry.go"): two words, or one of five characters.
func locatable(norm string) bool {
	words := strings.Count(norm, " ") - 1
	return words >= 2 || (words == 1 && utf8.RuneCountInString(norm) >= 7)
}

// isWordRune is the word-character rule of forEachWord and normWords.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
