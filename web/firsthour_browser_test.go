package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/refine-spec/refine"
)

// The console's part of #40, in a real Chromium page.

// finishDemo answers the fixture's questions through the API until the
// demo session ends, calling atPause at each question first.
func finishDemo(t *testing.T, f *fixture, atPause func(q refine.Question)) {
	t.Helper()
	for i := 0; ; i++ {
		st := f.status()
		if len(st.Pending) == 0 {
			if st.Outcome != refine.StatusComplete {
				t.Fatalf("demo ended %s, want COMPLETE", st.Outcome)
			}
			return
		}
		if i > 12 {
			t.Fatalf("still asking after %d answers", i)
		}
		q := st.Pending[0]
		if atPause != nil {
			atPause(q)
		}
		a := demoAnswer(q)
		if resp, body := f.do(http.MethodPost, "/api/sessions/"+f.id+"/answers", "application/json", answerBody(q.ID, a.Key, a.Text)); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("answer %s: %d %s", q.ID, resp.StatusCode, body)
		}
		f.wait()
	}
}

// eval runs a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// open navigates to path and waits for the page. A navigation the page
// itself aborts (its live view reloading as the session moves on, under
// load) is tried again, twice at most: it says nothing of what is tested.
func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	for try := 1; ; try++ {
		err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main")))
		if err == nil {
			return
		}
		if try < 3 && strings.Contains(err.Error(), "ERR_ABORTED") {
			continue
		}
		t.Fatalf("open %s: %v", url, err)
	}
}

// Item 7: the chart plots the rounds the table lists, at every question
// the demo asks, mid-round ones included (the divergence warning is
// asked once round 3's row is in the table, before the round ends).
func TestBrowserChartMatchesTable(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, "")
	checked := 0
	finishDemo(t, f, func(q refine.Question) {
		open(t, ctx, f.http.URL+"/sessions/"+f.id)
		rows := eval[int](t, ctx, `document.querySelectorAll("table.convergence tbody tr").length`)
		points := eval[int](t, ctx, `(() => { const x = new XMLHttpRequest(); x.open("GET", "/sessions/`+f.id+`/convergence.svg", false); x.send();
			return (x.responseText.match(/class="point /g) || []).length; })()`)
		if rows > 0 && points != rows {
			t.Errorf("at %s: the chart plots %d rounds, the table lists %d", q.ID, points, rows)
		}
		checked++
	})
	if checked < 4 {
		t.Errorf("checked %d pauses", checked)
	}
}

// Item 6: a console started without roles shows each option of a pending
// question with its key, and the exact command that answers it for this
// session.
func TestBrowserWatchOnlyShowsHowToAnswer(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, "")
	watch, err := New(Config{Backend: f.backend, ResumeCommand: func(id string) string { return "refine resume --store file:/srv/sessions --session " + id }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watch.Close() })
	f.http.Config.Handler = watch
	q := f.status().Pending[0]
	open(t, ctx, f.http.URL+"/sessions/"+f.id)
	text := eval[string](t, ctx, `document.getElementById("answer-`+q.ID+`").innerText`)
	if len(q.Options) < 2 {
		t.Fatalf("question %s offers %d options", q.ID, len(q.Options))
	}
	for _, o := range q.Options {
		row := eval[string](t, ctx, `document.querySelector('#answer-`+q.ID+` tr[data-key="`+o.Key+`"]').innerText`)
		label := strings.ReplaceAll(o.Label, "`", "")
		if !strings.Contains(row, o.Key) || !strings.Contains(row, label) || !strings.Contains(row, "refine resume --store file:/srv/sessions --session "+f.id+" --answer") {
			t.Errorf("option %s's row %q lacks its key, label %q or command", o.Key, row, label)
		}
	}
	if strings.Contains(text, "refine resume --answer KEY") {
		t.Errorf("the page still shows the generic hint:\n%s", text)
	}
}

// noBrokenHeader lists the words of table header cells that the page
// wraps across lines ("Opti" / "on").
const noBrokenHeader = `(() => { const bad = [];
	for (const th of document.querySelectorAll("th")) {
		const w = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
		for (let n = w.nextNode(); n; n = w.nextNode()) {
			const re = /\S+/g; let m;
			while ((m = re.exec(n.data))) {
				const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
				const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
				if (tops.size > 1) bad.push(m[0]);
			}
		}
	}
	return bad.join(" "); })()`

// Items 5 and 7 on a finished demo session: no header cell wraps inside
// a word at 375 and 1280 px; the round page's summary has no heading
// larger than its section's; field lines of the rendered spec stay on
// their own lines; the source → final diff keeps the shared headings.
func TestBrowserFinishedDemoPages(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, "")
	finishDemo(t, f, nil)
	base := f.http.URL + "/sessions/" + f.id
	pages := []string{f.http.URL + "/", base, base + "/rounds/2", base + "/final", base + "/files/status.md", base + "/files/final_summary.md"}
	for _, width := range []int64{375, 1280} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			open(t, ctx, p)
			if n := eval[int](t, ctx, `document.querySelectorAll("th").length`); n == 0 {
				t.Errorf("%d px, %s: no table header to check", width, p)
			}
			if bad := eval[string](t, ctx, noBrokenHeader); bad != "" {
				t.Errorf("%d px, %s: header words wrapped inside: %s", width, p, bad)
			}
		}
	}

	open(t, ctx, base+"/rounds/2")
	larger := eval[string](t, ctx, `(() => { const h2 = parseFloat(getComputedStyle(document.querySelector("#summary").closest("section").querySelector("h2")).fontSize);
		return [...document.querySelectorAll("#summary h1, #summary h2, #summary h3, #summary h4")].filter(h => parseFloat(getComputedStyle(h).fontSize) >= h2).map(h => h.textContent).join("; "); })()`)
	if larger != "" {
		t.Errorf("the round page's summary has headings as large as its section's: %s", larger)
	}

	open(t, ctx, base+"/final")
	sameLine := eval[bool](t, ctx, `(() => { const s = [...document.querySelectorAll("#final-spec strong")];
		const st = s.find(e => e.textContent === "Status:"), ow = s.find(e => e.textContent === "Owner:");
		return !st || !ow || Math.round(st.getBoundingClientRect().top) === Math.round(ow.getBoundingClientRect().top); })()`)
	if sameLine {
		t.Error(`the rendered final spec runs "**Status:** …" and "**Owner:** …" together on one line`)
	}
	ops := eval[string](t, ctx, `[...document.querySelectorAll("#final-diff pre span")].filter(s => /^. #+ /.test(s.textContent))
		.map(s => s.className + ":" + s.textContent.slice(2)).join("\n")`)
	for _, h := range []string{"## 1. Purpose", "## 2. Endpoints", "## 3. Errors", "## 4. Limits", "## 5. Versioning"} {
		if !strings.Contains(ops, "same:"+h+"\n") || strings.Contains(ops, "del:"+h+"\n") || strings.Contains(ops, "add:"+h+"\n") {
			t.Errorf("the diff does not keep %q as context:\n%s", h, ops)
		}
	}
}
