package web

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/refine-spec/refine"
)

// chromium returns the browser to drive, or skips the test naming the
// package to install (fails instead when REFINE_REQUIRE_BROWSER=1).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("REFINE_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	msg := "browser test needs Chromium: install Debian's chromium package (apt-get install chromium) or set REFINE_CHROMIUM"
	if os.Getenv("REFINE_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser starts headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.WindowSize(1280, 1600),
		chromedp.UserDataDir(t.TempDir()),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	// A ceiling, not a timing: under -race beside other packages on two
	// cores a page load can take seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return bctx
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) []byte {
	t.Helper()
	// The page may be reloading itself (it follows a running session):
	// take the picture once a page is laid out.
	var png []byte
	var err error
	for try := 0; try < 5; try++ {
		if err = waitFor(ctx, `document.readyState === "complete" && document.body && document.body.clientWidth > 0`); err != nil {
			continue
		}
		if png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o600); err != nil {
		t.Fatal(err)
	}
	return png
}

// TestBrowserAnswersToComplete opens the demo session paused at its first
// question, checks the convergence chart loads as an image, answers every
// question by clicking its option (typing text where the demo gives some),
// and watches the page follow the session to COMPLETE.
func TestBrowserAnswersToComplete(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, "")
	shots := t.TempDir()
	t.Logf("screenshots in %s", shots)

	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.sessions"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, shots, "sessions.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="/sessions/`+f.id+`"]`)), chromedp.WaitVisible(chromedp.ID("pending"))); err != nil {
		t.Fatal(err)
	}
	// The chart is served as an image the browser can decode.
	loaded, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const i = document.getElementById("chart"); return !!i && i.complete && i.naturalWidth > 0; })()`,
		chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil || !loaded {
		t.Fatalf("convergence chart did not load: %v", err)
	}
	png := screenshot(t, ctx, shots, "session.png")
	if out := os.Getenv("REFINE_CONSOLE_SCREENSHOT"); out != "" {
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/sessions/"+f.id+"/rounds/1"), chromedp.WaitVisible(chromedp.ID("engineer"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, shots, "round-1.png")
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/sessions/"+f.id), chromedp.WaitVisible(chromedp.ID("pending"))); err != nil {
		t.Fatal(err)
	}

	for i := 0; ; i++ {
		st := f.status()
		if len(st.Pending) == 0 {
			break
		}
		if i > 12 {
			t.Fatalf("still asking after %d answers", i)
		}
		q := st.Pending[0]
		a := demoAnswer(q)
		steps := []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("q-" + q.ID))}
		// Text first (where the demo gives some), then the option's button.
		if a.Text != "" {
			steps = append(steps, chromedp.SendKeys(chromedp.ID("text-"+q.ID), a.Text))
		}
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("answer %s: %v", q.ID, err)
		}
		// The click posts the form; the console answers, starts the run and
		// redirects to the session page.
		// A DOM click on the option's button (mouse coordinates can land
		// elsewhere while the page lays out its chart).
		button := fmt.Sprintf(`document.querySelector(%s).click()`, strconv.Quote(fmt.Sprintf(`#q-%s button[data-key=%s]`, cssIdent(q.ID), strconv.Quote(a.Key))))
		// The page follows the session, so it may reload itself while the
		// click's navigation is under way (ERR_ABORTED on a slow machine):
		// what counts is whether the server took the answer.
		if _, err := chromedp.RunResponse(ctx, chromedp.Evaluate[chromedp.Void](button)); err != nil && stillPending(f, q.ID) {
			t.Fatalf("answer %s with %s: %v", q.ID, a.Key, err)
		}
		t.Logf("answered %s with %s", q.ID, a.Key)
		// No reload here: the page follows the session by itself (live.js
		// polls while the session is not finished) until it rests on the
		// next question or the end.
		next := fmt.Sprintf(`(() => { const q = document.querySelector(".question"); const o = document.getElementById("outcome");
			return (!!q && q.id !== %q) || (!q && !!o && o.textContent.trim() === "COMPLETE"); })()`, "q-"+q.ID)
		if err := waitFor(ctx, next); err != nil {
			live, _ := f.server.peek(f.id)
			t.Fatalf("page did not move past %s by itself: %v\nserver: pending %v, runner %+v", q.ID, err, f.status().Pending, live)
		}
		if err := f.server.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, shots, fmt.Sprintf("answered-%d.png", i+1))
	}
	done := `(() => { const o = document.getElementById("outcome"); return !!o && o.textContent.trim() === "COMPLETE"; })()`
	if err := waitFor(ctx, done); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("outcome")))
		t.Fatalf("page never showed COMPLETE (shows %q): %v", text, err)
	}
	screenshot(t, ctx, shots, "complete.png")
	if st := f.status(); st.Outcome != refine.StatusComplete {
		t.Errorf("session outcome %s, want COMPLETE", st.Outcome)
	}
}

// stillPending reports whether question id still waits for an answer, once
// any run the console started for the session has stopped.
func stillPending(f *fixture, id string) bool {
	_ = f.server.Wait(context.Background())
	for _, q := range f.status().Pending {
		if q.ID == id {
			return true
		}
	}
	return false
}

// waitFor waits until the page's predicate holds. The page reloads itself
// while a session runs, which aborts a poll; waitFor polls again in the
// new page, until ctx ends.
func waitFor(ctx context.Context, predicate string) error {
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	for {
		// A poll caught by a navigation may never answer: bound each try.
		tctx, cancel := context.WithTimeout(wctx, 6*time.Second)
		_, err := chromedp.Run(tctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(5*time.Second)))
		cancel()
		if err == nil {
			return nil
		}
		if wctx.Err() != nil {
			state, serr := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const s = document.getElementById("session"); const q = document.querySelector(".question");
				return location.href + " poll=" + (s ? s.dataset.poll : "-") + " question=" + (q ? q.id : "-") + " text=" + document.body.innerText.slice(0, 300); })()`))
			return fmt.Errorf("%w (last poll: %v; page: %s %v)", wctx.Err(), err, state, serr)
		}
	}
}

// cssIdent escapes a question ID for a CSS #id selector.
func cssIdent(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			out = append(out, c)
			continue
		}
		out = append(out, fmt.Sprintf(`\%x `, c)...)
	}
	return string(out)
}
