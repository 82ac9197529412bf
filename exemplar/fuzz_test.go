package exemplar

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// addSpecSeeds seeds the corpus from every spec file, with each argument
// list built by args; none when the specs are not checked out. Each file
// is added as its "##" sections and its first 8 KB rather than whole: the
// same material in small inputs, which the fuzzing engine mutates and
// minimizes far faster.
func addSpecSeeds(f *testing.F, args func(doc string) [][]any) {
	files, _ := filepath.Glob(filepath.Join(specDir, "*.md"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		doc := markdown.Parse(string(b))
		seeds := []string{doc.Text[:runeBoundary(doc.Text, 8<<10)]}
		for _, s := range doc.SectionsAt(2) {
			seeds = append(seeds, doc.Full(s))
		}
		for _, seed := range seeds {
			for _, a := range args(seed) {
				f.Add(a...)
			}
		}
	}
}

func FuzzTruncate(f *testing.F) {
	addSpecSeeds(f, func(doc string) [][]any {
		return [][]any{{doc, 1}, {doc, 40}, {doc, 300}, {doc, InitialBudget}, {doc, RetryBudget}}
	})
	for _, doc := range []string{
		engineerDoc(),
		"## Review: X\n\n### Critical Issues\n\n```\nopen fence\n\n### High Priority\n",
		"## Gap Resolution: A\n### Examples\n~~~\n## x\n~~~\n### Trade-offs\n- a\n",
		"no structure at all " + strings.Repeat("é", 100),
		"",
	} {
		f.Add(doc, 7)
		f.Add(doc, 64)
	}
	f.Fuzz(func(t *testing.T, doc string, budget int) {
		budget = (budget%5000+5000)%5000 + 1 // 1 … 5000
		for _, tok := range []Tokenizer{CharTokenizer{}, wordTokenizer{}} {
			checkTruncation(t, doc, budget, tok)
		}
	})
}

// checkTruncation asserts the properties every truncation has.
func checkTruncation(t *testing.T, doc string, budget int, tok Tokenizer) {
	t.Helper()
	tr := Truncate(doc, budget, tok)
	if n := tok.Count(tr.Text); n > budget || n != tr.Tokens {
		t.Fatalf("%T budget %d: text counts %d (reported %d)", tok, budget, n, tr.Tokens)
	}
	switch tr.Kind {
	case Untruncated:
		if tr.Text != doc {
			t.Fatalf("%T: untruncated text differs from the input", tok)
		}
	case TruncatedHard:
		kept := strings.TrimSuffix(tr.Text, HardNotice)
		if kept != tr.Text {
			kept = strings.TrimSuffix(kept, "\n\n")
		}
		if !strings.HasPrefix(doc, kept) {
			t.Fatalf("%T: hard cut %q is not a prefix of the input", tok, kept)
		}
	case TruncatedStructurally:
		if !strings.HasSuffix(tr.Text, "\n\n"+StructuralNotice) {
			t.Fatalf("%T: structural cut without the notice: %q", tok, tr.Text)
		}
		checkPriorityOrder(t, doc, tr.Text)
	default:
		t.Fatalf("kind %v", tr.Kind)
	}
}

// checkPriorityOrder asserts that the section headers that survive are
// sections of the input, under the same resolution heading, in the spec's
// priority order, each at most once.
func checkPriorityOrder(t *testing.T, in, out string) {
	t.Helper()
	inDoc, outDoc := markdown.Parse(in), markdown.Parse(out)
	inRoot, kind, ok := resolutionRoot(inDoc)
	if !ok {
		t.Fatalf("structural cut of a text without a resolution heading")
	}
	outRoot, _, ok := resolutionRoot(outDoc)
	if !ok || outRoot.Title != inRoot.Title || outRoot.Start != 0 {
		t.Fatalf("resolution heading %q lost or moved: output starts %q", inRoot.Title, out[:min(len(out), 80)])
	}
	inChildren := directChildren(inDoc, inRoot)
	if len(inChildren) == 0 {
		return
	}
	level := inChildren[0].Level
	inTitles := map[string]bool{}
	for _, c := range inChildren {
		inTitles[c.Title] = true
	}
	last := -1
	for _, s := range outDoc.Within(outRoot) {
		if s.Level != level {
			continue
		}
		rank := priorityRank(kind, s.Title)
		if rank < 0 || !inTitles[s.Title] {
			t.Fatalf("kept section %q is not a priority section of the input", s.Title)
		}
		if rank <= last {
			t.Fatalf("section %q out of priority order in:\n%s", s.Title, out)
		}
		last = rank
	}
}

func priorityRank(kind documentKind, title string) int {
	norm := normalizeTitle(title)
	for i, name := range priorityOf(kind) {
		if strings.HasPrefix(norm, name) {
			return i
		}
	}
	return -1
}

func FuzzExtractCanonical(f *testing.F) {
	addSpecSeeds(f, func(doc string) [][]any { return [][]any{{doc}} })
	f.Add(workflowSpec())
	f.Add("---\n# 7\n---\n## 7. Examples\n````\n## Gap Resolution: A\n```\n## Review: B\n```\nx\n````\n")
	f.Add("# 7\n## 7\n### 7\n```\n## Review: X\n")
	f.Fuzz(func(t *testing.T, src string) {
		c, err := ExtractCanonical(src)
		for _, ex := range []struct {
			role         gap.Role
			text, prefix string
		}{
			{gap.Engineer, c.Engineer, "Gap Resolution:"},
			{gap.Reviewer, c.Reviewer, "Review:"},
		} {
			if ex.text == "" {
				if roleError(err, ex.role) == nil {
					t.Fatalf("no %s example and no reason for it: %v", ex.role, err)
				}
				continue
			}
			doc := markdown.Parse(ex.text)
			if len(doc.Headings) == 0 || doc.Headings[0].Start != 0 || !hasPrefixFold(doc.Headings[0].Title, ex.prefix) || !wellFormed(ex.text) {
				t.Fatalf("%s example does not start with a %q heading and a body: %q", ex.role, ex.prefix, ex.text)
			}
		}
		var ee *ExtractError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("error %v is not an *ExtractError", err)
		}
	})
}
