package exemplar

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// wordTokenizer counts white-space separated words: a Tokenizer that is not
// a PrefixCutter, so the generic search paths run.
type wordTokenizer struct{}

func (wordTokenizer) Count(text string) int { return len(strings.Fields(text)) }

func TestCharTokenizerCount(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"empty", "", 0},
		{"one char rounds up", "a", 1},
		{"four chars", "abcd", 1},
		{"five chars", "abcde", 2},
		{"runes not bytes", "éééé", 1}, // 8 bytes, 4 characters
		{"emoji", "😀😀😀😀😀", 2},
		{"invalid UTF-8 byte counts as a character", "\xff\xfe\xfd\xfc\xfb", 2},
		{"spec example 1,247 chars", strings.Repeat("x", 1247), 312},
		{"spec example 3,891 chars", strings.Repeat("x", 3891), 973},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (CharTokenizer{}).Count(tt.text); got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		budget int
		tok    Tokenizer
		want   string
	}{
		{"zero budget", "abcdef", 0, nil, ""},
		{"negative budget", "abcdef", -3, nil, ""},
		{"fits", "abcdef", 2, nil, "abcdef"},
		{"cut at 4 chars per token", "abcdefghij", 2, nil, "abcdefgh"},
		{"never splits a rune", "ééééé", 1, nil, "éééé"},
		{"huge budget", "abc", 1 << 62, nil, "abc"},
		{"invalid UTF-8 bytes are characters", "\xff\xff\xff\xff\xff", 1, nil, "\xff\xff\xff\xff"},
		{"generic tokenizer", "one two three four", 2, wordTokenizer{}, "one two "},
		{"generic tokenizer fits", "one two", 2, wordTokenizer{}, "one two"},
		{"generic tokenizer zero", "one two", 0, wordTokenizer{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Prefix(tt.text, tt.budget, tt.tok)); diff != "" {
				t.Errorf("Prefix(%q, %d) mismatch (-want +got):\n%s", tt.text, tt.budget, diff)
			}
		})
	}
}

// TestPrefixIsLongest checks, for both the one-pass and the search path,
// that the prefix fits and that one more character would not.
func TestPrefixIsLongest(t *testing.T) {
	text := strings.Repeat("word é 😀 x\n", 200)
	for _, tok := range []Tokenizer{CharTokenizer{}, wordTokenizer{}} {
		for budget := 1; budget < 700; budget += 37 {
			got := Prefix(text, budget, tok)
			if !strings.HasPrefix(text, got) || !utf8.ValidString(got) {
				t.Fatalf("%T budget %d: %q is not a rune-aligned prefix", tok, budget, got)
			}
			if n := tok.Count(got); n > budget {
				t.Fatalf("%T budget %d: prefix counts %d", tok, budget, n)
			}
			if len(got) < len(text) {
				_, w := utf8.DecodeRuneInString(text[len(got):])
				if longer := text[:len(got)+w]; tok.Count(longer) <= budget {
					t.Fatalf("%T budget %d: %d bytes kept but %d fit", tok, budget, len(got), len(longer))
				}
			}
		}
	}
}

func TestRuneBoundary(t *testing.T) {
	s := "aé😀\xffb" // a(0) é(1,2) 😀(3..6) \xff(7) b(8)
	want := []int{0, 1, 1, 3, 3, 3, 3, 7, 8, 9}
	var got []int
	for p := 0; p <= len(s); p++ {
		got = append(got, runeBoundary(s, p))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runeBoundary mismatch (-want +got):\n%s", diff)
	}
}

func TestLastFit(t *testing.T) {
	for n := 0; n < 40; n++ {
		for answer := -1; answer < n; answer++ {
			probes := 0
			got := lastFit(n, func(i int) bool { probes++; return i <= answer })
			want := answer
			if n == 0 {
				want = -1
			}
			if got != want {
				t.Fatalf("lastFit(n=%d) with answer %d = %d", n, answer, got)
			}
			if probes > 2*bitsLen(n)+2 {
				t.Fatalf("lastFit(n=%d) probed %d times", n, probes)
			}
		}
	}
}

func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}
