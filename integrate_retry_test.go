package refine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
)

// After every integration attempt failed validation, "retry" gives the
// Engineer a new run of attempts whose first prompt says what the last
// one got wrong, numbered as the retry it is (#40 item 2d).
func TestIntegrationRetryAnswerCarriesTheFailure(t *testing.T) {
	bad := integrated(integratedOpts{dropOrdering: true})
	sc := &script{answers: []scripted{{"Integration of the final spec failed validation", refine.Answer{Key: "retry"}}}}
	cfg, eng, _ := hooksSession(t, sc, []string{bad, bad, bad, integrated(integratedOpts{})}, []string{consistencyReview()})
	_, out := run(t, cfg)
	q, ok := sc.find("Integration of the final spec failed validation")
	if !ok {
		t.Fatalf("no integration escalation; asked %v", sc.titles())
	}
	if eng.CallCount() != 5 {
		t.Fatalf("engineer calls %d, want 5 (a round, three integrations, one more after retry)", eng.CallCount())
	}
	// The question quotes the last failure: "> MESSAGE" (on one line).
	_, quoted, _ := strings.Cut(q.Body, "\n\n> ")
	quoted, _, _ = strings.Cut(quoted, " is missing")
	if quoted == "" || strings.Contains(quoted, "\n") {
		t.Fatalf("the question quotes no failure:\n%s", q.Body)
	}
	prompt := eng.Prompt(4) // the fifth call
	for _, want := range []string{"RETRY ATTEMPT 1 of 3", quoted} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the attempt after \"retry\" lacks %q:\n%s", want, prompt[:min(len(prompt), 2500)])
		}
	}
	if tr := trace(t, cfg.Store); tr.Form != refine.FinalSpecIntegrated || !out.Status.Terminal() {
		t.Errorf("after the retry: form %q, outcome %s", tr.Form, out.Status)
	}
}

// While the integration's escalation waits, the session keeps its
// outcome (the question says so) and says that a question waits: Status,
// status.md and the status document (#40 item 2d).
func TestIntegrationEscalationWaitingKeepsTheOutcome(t *testing.T) {
	ctx := context.Background()
	bad := integrated(integratedOpts{dropOrdering: true})
	cfg, _, _ := hooksSession(t, refine.DeferAsker{}, []string{bad, bad, bad}, nil)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || len(out.Pending) != 1 || out.Pending[0].ID != "final-integration-1" {
		t.Fatalf("run = %+v, %v; want the integration escalation waiting", out, err)
	}
	st, _ := s.Status(ctx)
	if !st.Outcome.Terminal() || len(st.Pending) != 1 {
		t.Fatalf("status %s with %d pending, want the session's outcome with the question", st.Outcome, len(st.Pending))
	}
	if o, _ := st.Pending[0].Option("pause"); !strings.Contains(o.Effect, "the outcome stays "+string(st.Outcome)) {
		t.Errorf("the pause option says %q, status says %s", o.Effect, st.Outcome)
	}
	var buf bytes.Buffer
	if err := statusjson.Write(&buf, st); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Outcome string `json:"outcome"`
		Waiting bool   `json:"waiting"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Outcome != string(st.Outcome) || !doc.Waiting {
		t.Errorf("status document: outcome %q, waiting %v; want %s and true", doc.Outcome, doc.Waiting, st.Outcome)
	}
	if md := get(t, cfg, "status.md"); !strings.Contains(md, "- **Outcome:** "+string(st.Outcome)+" (a question waits for an answer)") {
		t.Errorf("status.md does not say both:\n%s", md[:min(len(md), 400)])
	}
}
