package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The pending conflict on the session page: Subject, Severity and Gap
// Affected each on a line of their own; option labels and decisions with
// `code` rendered as code, never raw backticks (#27 item 8).
func TestPendingConflictRendering(t *testing.T) {
	f := newFixture(t, "")
	q := f.status().Pending[0]
	if q.Kind != "conflict" {
		t.Fatalf("the fixture's first question is %s, want the demo's conflict", q.Kind)
	}
	resp, body := f.get("/sessions/" + f.id)
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.StatusCode)
	}
	for _, want := range []string{
		"<strong>Subject:</strong>", "<br>\n<strong>Severity:</strong> HIGH<br>\n<strong>Gap Affected:</strong> GAP-API-001",
		"Reviewer Position - Use an opaque cursor (<code>next_cursor</code>) anchored on (<code>created_at</code>, <code>id</code>)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the session page lacks %q", want)
		}
	}
	pending := body[strings.Index(body, `id="pending"`):]
	pending = pending[:strings.Index(pending, "</section>")]
	for _, o := range q.Options {
		if strings.Contains(o.Label, "`") && strings.Contains(pending, html.EscapeString(o.Label)) {
			t.Errorf("option %s's label is shown with raw backticks", o.Key)
		}
	}

	// Answered: the decision it files shows its code as code too.
	form := url.Values{"question": {q.ID}, "key": {"A"}, "text": {"Integrators sync orders."}}
	if resp, body := f.do(http.MethodPost, "/sessions/"+f.id+"/answers", "application/x-www-form-urlencoded", form.Encode()); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("answer: %d\n%s", resp.StatusCode, body)
	}
	f.wait()
	var decided bool
	for _, d := range f.status().Decisions {
		decided = decided || strings.Contains(d.Decision, "`")
	}
	if !decided {
		t.Fatalf("no decision with code in it to look at: %+v", f.status().Decisions)
	}
	_, body = f.get("/sessions/" + f.id)
	table := body[strings.Index(body, `class="decisions"`):]
	table = table[:strings.Index(table, "</table>")]
	if strings.Contains(table, "`") || !strings.Contains(table, "<code>") {
		t.Errorf("the Decisions table shows raw backticks or no code:\n%s", table)
	}
}

func TestInlineCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain <b>", "plain &lt;b&gt;"},
		{"use `next_cursor` and `id`", "use <code>next_cursor</code> and <code>id</code>"},
		{"one ` unpaired", "one ` unpaired"},
		{"`<script>`", "<code>&lt;script&gt;</code>"},
	}
	for _, tc := range tests {
		if got := string(inlineCode(tc.in)); got != tc.want {
			t.Errorf("inlineCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
