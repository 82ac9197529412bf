package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/validate"
)

// evil is LLM or server text that retitles the terminal, clears it, moves
// the cursor back over a line and reverses what follows.
const evil = "x\x1b]0;owned\a\x1b[2J\rFAKE\u202e\u009b"

// checkTerminalSafe fails if out holds a character a terminal would act on
// (newlines and tabs are fine).
func checkTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		bad := r == utf8.RuneError || (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f ||
			(r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
		if bad {
			t.Errorf("%s: raw control character %U at byte %d:\n%q", what, r, i, out)
			return
		}
	}
	if !strings.Contains(out, `\x1b]0;owned`) {
		t.Errorf("%s: the escaped text is not shown:\n%q", what, out)
	}
}

func TestQuestionTextIsEscaped(t *testing.T) {
	var b bytes.Buffer
	printQuestion(&b, refine.Question{ID: "conflict-r1-1", Title: "Title " + evil, Body: "Body " + evil,
		Options: []refine.Option{{Key: "A", Label: "Label " + evil}}})
	checkTerminalSafe(t, "printQuestion", b.String())
}

func TestSummaryAndStatusTextAreEscaped(t *testing.T) {
	st := refine.Status{SessionID: "s", Outcome: refine.StatusPaused, Reason: "Reason " + evil,
		Gaps:    []refine.GapStatus{{ID: "GAP-HOOK-001", Title: "Title " + evil, Severity: gap.High, State: gap.Open}},
		Pending: []refine.Question{{ID: "q1", Title: "Pending " + evil, Options: []refine.Option{{Key: "A", Label: "L " + evil}}}}}
	var b bytes.Buffer
	printSummary(&b, st, sessionLoc{dir: "dir"})
	printPending(&b, st.Pending)
	checkTerminalSafe(t, "summary", b.String())
}

func TestValidationTextIsEscaped(t *testing.T) {
	r := validate.Result{Success: false, FailureType: validate.WrongFormat, Message: "Msg " + evil, Warnings: []string{"Warn " + evil},
		NewGaps: []validate.NewGap{{ID: "GAP-HOOK-009", Title: "New " + evil}},
		Issues:  []validate.Issue{{ID: "ISSUE-R1-001", Severity: gap.High, Summary: "Issue " + evil}}, Verdict: "REQUEST_CHANGES"}
	var b bytes.Buffer
	printValidation(&b, string(gap.Reviewer), "out"+evil+".md", r)
	checkTerminalSafe(t, "validate", b.String())
}

func TestProgressTextIsEscaped(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, false)
	for _, e := range []refine.Event{
		{Kind: refine.EventRoundStarted, Message: evil},
		{Kind: refine.EventAttemptFinished, FailureType: "WRONG_FORMAT", Message: evil},
		{Kind: refine.EventTransportRetry, Message: evil},
		{Kind: refine.EventRoundFinished, Message: evil},
		{Kind: refine.EventSessionFinished, Message: evil},
	} {
		p.Observe(e)
	}
	checkTerminalSafe(t, "progress", b.String())
}

// failingRole fails every call with a server's error message.
type failingRole struct{}

func (failingRole) Respond(context.Context, refine.Request) (refine.Response, error) {
	return refine.Response{}, errors.New("server says: " + evil)
}

func TestBackendErrorIsEscaped(t *testing.T) {
	ctx := context.Background()
	cfg := refine.DefaultConfig()
	cfg.Store = memory.New()
	cfg.Spec = "# Spec\n"
	cfg.Gaps = []gap.Gap{{ID: "GAP-HOOK-001", Severity: gap.High, Title: "Retries"}}
	cfg.Engineer, cfg.Reviewer, cfg.Asker = failingRole{}, failingRole{}, refine.DeferAsker{}
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, out, errb := newTestCLI()
	if code := c.drive(ctx, s, cfg.Store, sessionLoc{dir: "dir"}); code != exitFailed {
		t.Fatalf("drive exit %d, want %d", code, exitFailed)
	}
	checkTerminalSafe(t, "backend error", out.String()+errb.String())
}

// `refine status --json` (and the other --json outputs) write what a
// terminal would obey as \u escapes, as the text output escapes it, and
// the document still decodes to the text (issue #24: U+009B, U+202E and
// DEL passed through raw).
func TestStatusJSONIsTerminalSafe(t *testing.T) {
	text := "Title " + evil + "\x7f"
	st := refine.Status{SessionID: "s", Outcome: refine.StatusPaused, Reason: text,
		Gaps:    []refine.GapStatus{{ID: "GAP-HOOK-001", Title: text, Severity: gap.High, State: gap.Open}},
		Pending: []refine.Question{{ID: "q1", Title: text, Body: text, Options: []refine.Option{{Key: "A", Label: text}}}}}
	var b bytes.Buffer
	if err := writeStatusJSON(&b, st, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for i, r := range out {
		if r == utf8.RuneError || (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) {
			t.Fatalf("status --json: raw control character %U at byte %d:\n%q", r, i, out)
		}
	}
	var doc struct {
		Gaps []struct {
			Title string `json:"title"`
		} `json:"gaps"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Gaps) != 1 || doc.Gaps[0].Title != text {
		t.Errorf("decoded %+v, %v; want the title %q", doc, err, text)
	}
}
