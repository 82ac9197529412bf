package exemplar

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/internal/markdown"
)

// The parts of a realistic Engineer output, in the canonical order
// (Examples before Trade-offs), with a Problem Statement structural
// truncation does not keep.
const (
	engTitle    = "# Engineer Proposals - Round 3\n\nThis preamble is not part of the resolution.\n\n"
	engHeader   = "## Gap Resolution: GAP-FLOW-002\n\n**Confidence:** HIGH"
	engProblem  = "### Problem Statement\n\nThe spec never says how convergence is measured, which makes every stall a surprise to the user."
	engSolution = "### Proposed Solution\n\nImplement a convergence tracker that measures gap delta per round.\n\nIt warns after two flat rounds."
	engExamples = "### Examples\n\n```go\ntracker.Record(round)\n\nif tracker.Stalled() {\n```\n\nThe tracker is fed once per round."
	engTrade    = "### Trade-offs\n\n**Pros:**\n- Objective measurement\n- Early warning\n\n**Cons:**\n- Requires consistent counting"
	engNewGaps  = "### New Gaps Introduced\n\n- None"
)

func engineerDoc() string {
	return engTitle + strings.Join([]string{engHeader, engProblem, engSolution, engExamples, engTrade, engNewGaps}, "\n\n") + "\n"
}

func blocks(parts ...string) string { return strings.Join(parts, "\n\n") }

func TestTruncateStructural(t *testing.T) {
	doc := engineerDoc()
	tests := []struct {
		name string
		want string // the budget is exactly what want counts, so nothing more fits
	}{
		{
			name: "priority sections whole, in priority order, others dropped",
			want: blocks(engHeader, engSolution, engTrade, engExamples, engNewGaps, StructuralNotice),
		},
		{
			name: "section that does not fit is cut after its fenced block, never inside it",
			want: blocks(engHeader, engSolution, engTrade, "### Examples\n\n```go\ntracker.Record(round)\n\nif tracker.Stalled() {\n```", StructuralNotice),
		},
		{
			name: "fenced block does not fit: heading alone, as no cut inside the fence is safe",
			want: blocks(engHeader, engSolution, engTrade, "### Examples", StructuralNotice),
		},
		{
			name: "first paragraph of the core section",
			want: blocks(engHeader, "### Proposed Solution\n\nImplement a convergence tracker that measures gap delta per round.", StructuralNotice),
		},
		{
			name: "header alone",
			want: blocks(engHeader, StructuralNotice),
		},
		{
			name: "header abbreviated to its heading",
			want: blocks("## Gap Resolution: GAP-FLOW-002", StructuralNotice),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			budget := CharTokenizer{}.Count(tt.want)
			got := Truncate(doc, budget, nil)
			if diff := cmp.Diff(tt.want, got.Text); diff != "" {
				t.Errorf("Truncate(budget %d) mismatch (-want +got):\n%s", budget, diff)
			}
			orig := CharTokenizer{}.Count(doc)
			if got.Kind != TruncatedStructurally || got.Tokens != budget || got.OriginalTokens != orig {
				t.Errorf("got kind %v, tokens %d/%d; want structural, %d/%d", got.Kind, got.Tokens, got.OriginalTokens, budget, orig)
			}
		})
	}
}

func TestTruncateLinesOfFirstParagraph(t *testing.T) {
	// The only paragraph of High Priority is a list: when it does not fit,
	// its leading items do ("[First 2 issues only]" in spec example 3).
	review := blocks(
		"## Review: GAP-FLOW-001",
		"### Critical Issues\n\nNone found.",
		"### High Priority\n\n- **ISSUE-R3-001**: first issue\n- **ISSUE-R3-002**: second issue\n- **ISSUE-R3-003**: third issue with a much longer description than the others",
		"### Medium Priority\n\nNone found.",
	)
	want := blocks("## Review: GAP-FLOW-001", "### Critical Issues\n\nNone found.",
		"### High Priority\n\n- **ISSUE-R3-001**: first issue\n- **ISSUE-R3-002**: second issue", StructuralNotice)
	got := Truncate(review, CharTokenizer{}.Count(want), nil)
	if diff := cmp.Diff(want, got.Text); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestTruncateUnchangedAndEmpty(t *testing.T) {
	doc := engineerDoc()
	tests := []struct {
		name    string
		example string
		budget  int
		want    Truncation
	}{
		{"fits exactly", doc, CharTokenizer{}.Count(doc), Truncation{Text: doc, Kind: Untruncated, Tokens: CharTokenizer{}.Count(doc), OriginalTokens: CharTokenizer{}.Count(doc)}},
		{"zero budget", doc, 0, Truncation{Kind: TruncatedHard, OriginalTokens: CharTokenizer{}.Count(doc)}},
		{"negative budget", doc, -1, Truncation{Kind: TruncatedHard, OriginalTokens: CharTokenizer{}.Count(doc)}},
		{"empty example", "", 10, Truncation{}},
		{"empty example, zero budget", "", 0, Truncation{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Truncate(tt.example, tt.budget, nil)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTruncateHard(t *testing.T) {
	prose := strings.Repeat("Unstructured prose without any heading. ", 20) // 800 chars
	tests := []struct {
		name    string
		example string
		budget  int
		want    string
	}{
		{
			name:    "no structure: cut with the notice",
			example: prose,
			budget:  50,
			// 200 characters: 168 of prose, a blank line, 30 of notice.
			want: prose[:168] + "\n\n" + HardNotice,
		},
		{
			name:    "notice does not fit: bare cut",
			example: prose,
			budget:  5,
			want:    prose[:20],
		},
		{
			name:    "heading longer than the budget",
			example: "## Gap Resolution: " + strings.Repeat("X", 400) + "\n\n### Proposed Solution\n\nText.",
			budget:  60,
			want:    "## Gap Resolution: " + strings.Repeat("X", 189) + "\n\n" + HardNotice,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Truncate(tt.example, tt.budget, nil)
			if diff := cmp.Diff(tt.want, got.Text); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if got.Kind != TruncatedHard || got.Tokens > tt.budget {
				t.Errorf("kind %v, %d tokens; want hard within %d", got.Kind, got.Tokens, tt.budget)
			}
		})
	}
}

// TestTruncate100KB is the spec's size limit on a pathological example:
// 100 KB, structured or not, fitted into the retry budget with either
// tokenizer.
func TestTruncate100KB(t *testing.T) {
	var structured strings.Builder
	structured.WriteString("## Gap Resolution: GAP-FLOW-008\n\n**Confidence:** HIGH\n\n### Proposed Solution\n\n")
	for structured.Len() < 100_000 {
		structured.WriteString("A paragraph of solution text that goes on for a while, mentioning GAP-FLOW-001.\n\n```yaml\nkey: value\n\nother: value\n```\n\n")
	}
	structured.WriteString("### Trade-offs\n\n- Pro\n- Con\n")
	unstructured := strings.Repeat("Ünïcode prose, no headings at all. ", 3000)

	for _, tt := range []struct {
		name     string
		example  string
		tok      Tokenizer
		wantKind TruncationKind
	}{
		{"structured", structured.String(), CharTokenizer{}, TruncatedStructurally},
		{"unstructured", unstructured, CharTokenizer{}, TruncatedHard},
		{"structured, word tokenizer", structured.String(), wordTokenizer{}, TruncatedStructurally},
		{"unstructured, word tokenizer", unstructured, wordTokenizer{}, TruncatedHard},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.example) < 100_000 {
				t.Fatalf("example is %d bytes", len(tt.example))
			}
			got := Truncate(tt.example, RetryBudget, tt.tok)
			if n := tt.tok.Count(got.Text); n > RetryBudget || n != got.Tokens {
				t.Errorf("counts %d tokens (reported %d), budget %d", n, got.Tokens, RetryBudget)
			}
			if got.Kind != tt.wantKind {
				t.Errorf("kind %v, want %v", got.Kind, tt.wantKind)
			}
			// Using at least half the budget shows the cut is not wasteful.
			if got.Tokens < RetryBudget/2 {
				t.Errorf("only %d tokens used of %d", got.Tokens, RetryBudget)
			}
			if tt.wantKind == TruncatedStructurally && strings.Count(got.Text, "```")%2 != 0 {
				t.Errorf("structural cut left a fence open:\n%s", got.Text[len(got.Text)-300:])
			}
		})
	}
}

func TestTruncateFrame(t *testing.T) {
	// A head (provenance, gap list) and a tail (gap list) survive whole; the
	// notice goes right after the shortened example.
	f := framed{head: "HEAD LINE", body: engineerDoc(), tail: "- GAP-FLOW-001\n- GAP-FLOW-002"}
	want := blocks("HEAD LINE", engHeader, StructuralNotice, "- GAP-FLOW-001\n- GAP-FLOW-002")
	budget := CharTokenizer{}.Count(want)
	got := fit(f, budget, CharTokenizer{})
	if diff := cmp.Diff(want, got.Text); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	// Too small for the frame: a bare cut of everything.
	got = fit(f, 3, CharTokenizer{})
	if diff := cmp.Diff("HEAD LINE\n\n#", got.Text); diff != "" {
		t.Errorf("tiny budget mismatch (-want +got):\n%s", diff)
	}
}

func TestTrimEnd(t *testing.T) {
	tests := []struct{ in, want string }{
		{"text\n\n", "text"},
		{"text\n\n---\n\n", "text"},
		{"text\n\n---\n\n***\n", "text"},
		{"Setext heading\n---", "Setext heading\n---"}, // no blank line: not a separator
		{"---", "---"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := trimEnd(tt.in); got != tt.want {
			t.Errorf("trimEnd(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLineMapSafeCuts(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []bool // safe(k) for k = 0 … number of lines (the end)
	}{
		{
			name: "blank lines inside a fence are not cut points",
			// 0 "## H", 1 "", 2 "para", 3 "", 4 "```", 5 "code", 6 "", 7 "more", 8 "```", 9 "", 10 "end"
			text: "## H\n\npara\n\n```\ncode\n\nmore\n```\n\nend",
			want: []bool{true, true, true, true, true, false, false, false, false, true, true, true},
		},
		{
			name: "a line of inline code reads as code: conservative until prose follows",
			// 0 "```", 1 "x", 2 "```", 3 "", 4 "`inline`", 5 "", 6 "end"
			text: "```\nx\n```\n\n`inline`\n\nend",
			want: []bool{true, false, false, false, false, true, true, true},
		},
		{
			name: "unterminated fence: the end is not safe",
			// 0 "## H", 1 "```", 2 "open"
			text: "## H\n```\nopen",
			want: []bool{true, true, false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mapLines(markdown.Parse(tt.text))
			var got []bool
			for k := 0; k <= len(m.starts); k++ {
				got = append(got, m.safe(k))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("safe cuts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// countingTokenizer is CharTokenizer that sums the bytes it is asked to
// count; it is not a PrefixCutter, so the search paths are measured too.
type countingTokenizer struct{ bytes int }

func (c *countingTokenizer) Count(text string) int {
	c.bytes += len(text)
	return CharTokenizer{}.Count(text)
}

// TestTruncateWorkIsLinear guards against searches that re-count ever larger
// candidates: on adversarial inputs the bytes handed to the Tokenizer stay
// a small multiple of the input, whatever its size. (Counting work, not
// time, keeps the test deterministic.)
func TestTruncateWorkIsLinear(t *testing.T) {
	gens := map[string]func(n int) string{
		"tiny paragraphs": func(n int) string {
			return "## Gap Resolution: X\n### Proposed Solution\n" + strings.Repeat("a\n\n", n/3)
		},
		"fence lines":   func(n int) string { return "## Gap Resolution: X\n### Examples\n" + strings.Repeat("```\n", n/4) },
		"fence, blanks": func(n int) string { return "## Review: X\n### Critical Issues\n```\n" + strings.Repeat("x\n\n", n/3) },
		"many children": func(n int) string {
			return "## Gap Resolution: X\n" + strings.Repeat("### Proposed Solution\nab\n", n/25)
		},
		"many roots":    func(n int) string { return strings.Repeat("## Gap Resolution: X\n### Trade-offs\n", n/36) },
		"inline code":   func(n int) string { return "## Gap Resolution: X\n### Examples\n" + strings.Repeat("`a`\n\n", n/5) },
		"one long line": func(n int) string { return "## Gap Resolution: X\n### Examples\n" + strings.Repeat("w ", n/2) },
		"long heading":  func(n int) string { return "## Gap Resolution: " + strings.Repeat("w ", n/2) },
		"prose":         func(n int) string { return strings.Repeat("word ", n/5) },
	}
	for name, gen := range gens {
		for _, n := range []int{50_000, 400_000} {
			for _, budget := range []int{1, 50, RetryBudget} {
				doc := gen(n)
				tok := &countingTokenizer{}
				Truncate(doc, budget, tok)
				if perByte := float64(tok.bytes) / float64(len(doc)); perByte > 6 {
					t.Errorf("%s, %d bytes, budget %d: counted %.1f bytes per input byte", name, len(doc), budget, perByte)
				}
			}
		}
	}
}

// countingCutter is CharTokenizer, PrefixCutter included, counting calls.
type countingCutter struct{ counts, prefixes int }

func (c *countingCutter) Count(text string) int { c.counts++; return CharTokenizer{}.Count(text) }

func (c *countingCutter) Prefix(text string, budget int) string {
	c.prefixes++
	return CharTokenizer{}.Prefix(text, budget)
}

// TestHardTruncationIsOnePass checks that a PrefixCutter (the default
// tokenizer is one) cuts in a fixed number of passes, not by search.
func TestHardTruncationIsOnePass(t *testing.T) {
	prose := strings.Repeat("Unstructured prose, no headings. ", 30_000) // ~1 MB
	for _, budget := range []int{10, RetryBudget, 100_000} {
		tok := &countingCutter{}
		got := Truncate(prose, budget, tok)
		if got.Kind != TruncatedHard || got.Tokens > budget {
			t.Fatalf("budget %d: %v, %d tokens", budget, got.Kind, got.Tokens)
		}
		// The whole, the frame, the guess, the result: a handful of counts
		// and one cut, where a search would take dozens.
		if tok.counts > 5 || tok.prefixes != 1 {
			t.Errorf("budget %d: %d counts and %d prefix cuts", budget, tok.counts, tok.prefixes)
		}
		// The guess wastes at most a token's worth of characters.
		if got.Tokens < budget-1 {
			t.Errorf("budget %d: only %d tokens used", budget, got.Tokens)
		}
	}
}
