package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/refine-spec/refine/store"
)

func TestFinalSpecPage(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	// The paused demo has no final spec yet.
	if resp, body := f.get("/sessions/" + f.id + "/final"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "has no final spec yet") {
		t.Errorf("unfinished session: status %d\n%s", resp.StatusCode, body)
	}
	if _, body := f.get("/sessions/" + f.id); strings.Contains(body, `id="final-link"`) {
		t.Error("the session page links to a final spec it does not have")
	}

	st, err := f.backend.Session(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	source := "# Orders API — Draft\n\n## 2. Endpoints\n\nPaging is not specified (GAP-API-001).\n"
	final := "# Orders API — v1.0\n\n## 2. Endpoints\n\nPages use `next_cursor`.\n\n## Resolution Log\n\n| Item | Section(s) | Note |\n|---|---|---|\n| GAP-API-001 | 2. Endpoints | <script>alert(1)</script> |\n"
	trace := `{"form": "integrated", "log": [{"item": "GAP-API-001", "sections": ["2. Endpoints"], "note": "<script>alert(1)</script>"}], "notes": ["consistency review: ISSUE-R5-001 (LOW): a nit"]}`
	if err := st.Commit(ctx, store.Put("source_spec.md", []byte(source)), store.Put("final_spec.md", []byte(final)), store.Put("final_spec_trace.json", []byte(trace))); err != nil {
		t.Fatal(err)
	}
	closeStore(st)

	resp, body := f.get("/sessions/" + f.id + "/final")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{"<strong>Integrated (v1.0)</strong>", `id="resolution-log"`, "<td>GAP-API-001</td><td>2. Endpoints</td>",
		`<span class="del">- # Orders API — Draft</span>`, `<span class="add">&#43; # Orders API — v1.0</span>`, `<span class="same">  ## 2. Endpoints</span>`,
		`<span class="del">- Paging is not specified (GAP-API-001).</span>`, "+8 −2 lines", "consistency review: ISSUE-R5-001 (LOW): a nit", `id="final-spec"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q\n%s", want, body[strings.Index(body, "<pre"):strings.Index(body, "</pre>")])
		}
	}
	if strings.Contains(body, "<script>alert(1)") {
		t.Error("LLM-written text reached the page unescaped")
	}
	checkHeaders(t, resp)
	if _, body := f.get("/sessions/" + f.id); !strings.Contains(body, `href="/sessions/`+f.id+`/final" id="final-link"`) {
		t.Error("the session page does not link to the final spec page")
	}
}
