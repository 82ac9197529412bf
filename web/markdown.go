package web

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders LLM-written markdown to HTML that is safe to embed: raw
// HTML is dropped (goldmark's default without html.WithUnsafe), and links
// and images keep their destination only when it is relative or http,
// https or mailto.
type markdown struct{ md goldmark.Markdown }

func newMarkdown() *markdown {
	return &markdown{md: goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkGuard{}, 0))),
	)}
}

// HTML renders src. Rendering never fails on any input; should goldmark
// report an error, the source is shown as escaped text instead.
func (m *markdown) HTML(src string) template.HTML {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	return template.HTML(buf.String()) // goldmark escaped every text and attribute; raw HTML is omitted
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
