package web

import (
	"bytes"
	"html/template"
	"strings"

	mdscan "github.com/refine-spec/refine/internal/markdown"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders LLM-written markdown to HTML that is safe to embed: raw
// HTML is dropped (goldmark's default without html.WithUnsafe), and links
// and images keep their destination only when it is relative or http,
// https or mailto.
// Lines renders with every line break kept, for question bodies: they are
// written line by line ("**Subject:** …" over "**Severity:** …").
type markdown struct{ md, lines goldmark.Markdown }

func newMarkdown() *markdown {
	opts := func(extra ...goldmark.Option) goldmark.Markdown {
		return goldmark.New(append([]goldmark.Option{
			goldmark.WithExtensions(extension.Table, extension.Strikethrough),
			goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkGuard{}, 0))),
		}, extra...)...)
	}
	return &markdown{md: opts(goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(fieldLines{}, 1)))),
		lines: opts(goldmark.WithRendererOptions(html.WithHardWraps()))}
}

// HTML renders src. Rendering never fails on any input; should goldmark
// report an error, the source is shown as escaped text instead.
func (m *markdown) HTML(src string) template.HTML { return convert(m.md, src) }

// Lines renders src as HTML keeping each line break (a question's body).
func (m *markdown) Lines(src string) template.HTML { return convert(m.lines, src) }

func convert(md goldmark.Markdown, src string) template.HTML {
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	// Raw HTML is omitted, so every <table> is the renderer's: each goes
	// in a box that scrolls sideways when the table is wider than the
	// page (#40).
	out := strings.NewReplacer("<table>", `<div class="table-scroll"><table>`, "</table>", "</table></div>").Replace(buf.String())
	return template.HTML(out) // goldmark escaped every text and attribute
}

// Section renders src as the body of a page section that has its own
// heading: a level-1 heading opening src (a summary's "# Round 2 Summary")
// is dropped, and the others are shown one level lower, so that none is
// larger than the section's (#40).
func (m *markdown) Section(src string) template.HTML {
	d := mdscan.Parse(src)
	text := d.Text
	var b strings.Builder
	at := 0
	for i, h := range d.Headings {
		if i == 0 && h.Level == 1 && strings.TrimSpace(text[:h.Start]) == "" {
			at = h.BodyStart
			continue
		}
		hashes := h.Start + strings.IndexByte(text[h.Start:h.BodyStart], '#') // after up to three spaces
		b.WriteString(text[at:hashes])
		if h.Level < 6 {
			b.WriteString("#")
		}
		at = hashes
	}
	b.WriteString(text[at:])
	return convert(m.md, b.String())
}

// fieldLines keeps a field line on its own line: a line break followed by
// "**Label:**" ("**Status:** v1.0" over "**Owner:** Platform team") is
// kept as a line break, where markdown would join the two lines (#40).
type fieldLines struct{}

func (fieldLines) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		t, ok := n.(*ast.Text)
		if !entering || !ok || !t.SoftLineBreak() {
			return ast.WalkContinue, nil
		}
		e, ok := t.NextSibling().(*ast.Emphasis)
		if !ok || e.Level != 2 {
			return ast.WalkContinue, nil
		}
		label := strings.TrimSpace(string(e.Text(src)))
		if after, ok := e.NextSibling().(*ast.Text); strings.HasSuffix(label, ":") || ok && strings.HasPrefix(string(after.Segment.Value(src)), ":") {
			t.SetHardLineBreak(true) // "**Label:** value" or "**Label**: value"
		}
		return ast.WalkContinue, nil
	})
}

// inlineCode renders one line of text whose only markup is `code` spans
// (option labels, decisions): each pair of backticks becomes <code>, the
// rest is escaped; an unpaired backtick stays as it is.
func inlineCode(s string) template.HTML {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 0:
			b.WriteString(template.HTMLEscapeString(p))
		case i == len(parts)-1: // opened, never closed
			b.WriteString("`" + template.HTMLEscapeString(p))
		default:
			b.WriteString("<code>" + template.HTMLEscapeString(p) + "</code>")
		}
	}
	return template.HTML(b.String())
}

// linkGuard neutralises link and image destinations with a scheme other
// than http, https or mailto (javascript:, data:, vbscript:, file:, …), and
// marks links so that following one sends no referrer.
type linkGuard struct{}

func (linkGuard) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	var autolinks []*ast.AutoLink
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			if !safeURL(string(l.Destination)) {
				l.Destination = []byte("#unsafe-link-removed")
			}
			l.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
		case *ast.Image:
			if !safeURL(string(l.Destination)) {
				l.Destination = []byte("#unsafe-link-removed")
			}
		case *ast.AutoLink:
			if l.AutoLinkType == ast.AutoLinkURL && !safeURL(string(l.URL(reader.Source()))) {
				autolinks = append(autolinks, l)
			} else {
				l.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
			}
		}
		return ast.WalkContinue, nil
	})
	// An autolink with a refused scheme stays as its (escaped) text.
	for _, l := range autolinks {
		l.Parent().ReplaceChild(l.Parent(), l, ast.NewString(l.Label(reader.Source())))
	}
}

// safeURL accepts relative references and the http, https and mailto
// schemes. Browsers ignore tabs, newlines and leading spaces inside a
// scheme, so they are removed before looking.
func safeURL(u string) bool {
	clean := strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, u)
	i := strings.IndexAny(clean, ":/?#")
	if i < 0 || clean[i] != ':' {
		return true // no scheme: relative
	}
	switch strings.ToLower(clean[:i]) {
	case "http", "https", "mailto":
		return true
	}
	return false
}
