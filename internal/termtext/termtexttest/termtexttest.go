// Package termtexttest holds the hostile text every display surface is
// tested with, a session that carries it to every surface, and the check
// that a surface showed it by refine's escape policy (package termtext).
package termtexttest

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// Corpus is text a model could write to take over a display: a bidi
// override that makes "DETAVITCA" read "ACTIVATED" (RLO … PDF), a screen
// clear and colours (ESC, CSI), a hyperlink (OSC 8), a C1 CSI, a C1 next
// line (NEL), an isolate (LRI … PDI), a bell, and a carriage return that
// draws a fake prompt over the line. It holds no newline, so it fits any
// one-line field.
const Corpus = "Offset \u202eDETAVITCA\u202c; \x1b[2J\x1b[31mred\x1b[0m; " +
	"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ here; \u009b2J; line\u0085next; " +
	"\u2066isolated\u2069; bell\a; \rFAKE: approve"

// RTL is a right-to-left sentence with RLM marks, which every surface
// must show unchanged.
const RTL = "הפער נסגר\u200f: הבקשה אושרה\u200f."

// Form is how a surface writes the visible forms of the policy.
type Form int

// The forms.
const (
	// Text: a terminal, an MCP client: <U+202E>, \x1b.
	Text Form = iota
	// Markup: an HTML page or an SVG image: &lt;U+202E&gt;, \x1b.
	Markup
	// JSON: \u202e, \u001b; the values decode to the text itself.
	JSON
)

// raw are the characters of Corpus no surface may show raw.
var raw = []string{"\x1b", "\a", "\u009b", "\u0085", "\u202e", "\u202c", "\u2066", "\u2069"}

// Check fails t unless out, what surface showed of Corpus and RTL, holds
// none of Corpus's controls raw (a carriage return only before a
// newline), shows them in form's visible forms, and holds RTL unchanged.
func Check(t testing.TB, surface string, form Form, out string) {
	t.Helper()
	NoRaw(t, surface, out)
	var want []string
	switch form {
	case Text:
		want = []string{"Offset <U+202E>DETAVITCA<U+202C>", `\x1b[2J\x1b[31mred`, `\x1b]8;;https://evil.example/`, `\u009b2J`, `line\u0085next`, "<U+2066>isolated<U+2069>", `bell\x07`, `\rFAKE`}
	case Markup:
		want = []string{"Offset &lt;U+202E&gt;DETAVITCA&lt;U+202C&gt;", `\x1b[2J\x1b[31mred`, `\x1b]8;;https://evil.example/`, `\u009b2J`, `line\u0085next`, "&lt;U+2066&gt;isolated&lt;U+2069&gt;", `bell\x07`, `\rFAKE`}
	case JSON:
		want = []string{`Offset \u202eDETAVITCA\u202c`, `\u001b[2J\u001b[31mred`, `\u009b2J`, `line\u0085next`, `\u2066isolated\u2069`, `\rFAKE`}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: %q is not shown", surface, w)
		}
	}
	if !strings.Contains(out, RTL) {
		t.Errorf("%s: the right-to-left sentence %q is not shown unchanged", surface, RTL)
	}
}

// NoRaw fails t if out holds a control character of Corpus raw (a
// carriage return only before a newline): for a surface that shows a
// rendering which reflowed some of them (a table cell turns a carriage
// return into a space).
func NoRaw(t testing.TB, surface, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: output is not UTF-8", surface)
	}
	for _, r := range raw {
		if i := strings.Index(out, r); i >= 0 {
			t.Errorf("%s: raw %U at byte %d: %q", surface, []rune(r)[0], i, around(out, i))
		}
	}
	for i := strings.IndexByte(out, '\r'); i >= 0; i = next(out, i) {
		if i+1 >= len(out) || out[i+1] != '\n' {
			t.Errorf("%s: raw carriage return at byte %d: %q", surface, i, around(out, i))
			break
		}
	}
}

func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '\r')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func around(s string, i int) string {
	return s[max(0, i-30):min(len(s), i+30)]
}

// Title is Corpus and RTL, as one line.
const Title = Corpus + " " + RTL

// Config returns cfg for a session over st whose gap's title is Title,
// verbatim, and that pauses at a conflict question carrying what the
// Reviewer's parser keeps of it: the Reviewer raises a HIGH issue whose
// finding is Title, the Engineer disagrees with it, and the question
// quotes the finding. cfg's Asker defers.
func Config(st refine.Store) refine.Config {
	concern := Title
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 1 {
			return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
		}
		issue := refinetest.IssueID(1, 1)
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...) + "\n" + refinetest.Disagree(issue, concern, "")}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 1 {
			return refine.Response{Content: refinetest.ReviewerOutput(1, req.Gaps, refinetest.Issue{Severity: gap.High, Summary: concern})}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{}, gap.Gap{ID: "GAP-EVIL-001", Title: Title, Severity: gap.High})
	cfg.Store = st
	return cfg
}

// Session runs Config(st) until it pauses at its question, and returns
// the status.
func Session(t testing.TB, st refine.Store) refine.Status {
	t.Helper()
	ctx := context.Background()
	s, err := refine.New(ctx, Config(st))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused || len(out.Pending) == 0 {
		t.Fatalf("hostile session: %+v, %v; want a pause at a question", out, err)
	}
	status, err := refine.Inspect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(status.Gaps) == 0 || status.Gaps[0].Title != Title {
		t.Fatalf("the gap's title is not the corpus verbatim: %+v", status.Gaps)
	}
	return status
}
