package refine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/validate"
)

// The integration step's tests play a one-round session over a small spec
// (two gaps resolved in round 1, a third left open by MaxRounds 1), then
// script the integration calls.

const hooksSpec = `# Hooks API — Draft

## 1. Delivery

Webhooks are delivered over HTTPS with a JSON body. The retry schedule is not
specified (GAP-HOOK-001).

## 2. Signatures

How deliveries are signed is TBD (GAP-HOOK-002).

## 3. Ordering

Deliveries may arrive out of order (GAP-HOOK-003).

## 9. Appendix

Workflow notes for the refinement session.
`

var hooksGaps = []gap.Gap{
	{ID: "GAP-HOOK-001", Title: "Retry schedule is unspecified", Severity: gap.High},
	{ID: "GAP-HOOK-002", Title: "Signature scheme is unspecified", Severity: gap.Medium},
	{ID: "GAP-HOOK-003", Title: "Ordering guarantees are unspecified", Severity: gap.Low},
}

// hooksResolution is the accepted resolution the engine reads back for id:
// the body of its section in the round's Engineer output.
func hooksResolution(id gap.ID) string {
	res := validate.Engineer(refinetest.EngineerOutput(id), validate.Options{})
	return strings.TrimSpace(res.Sections[0].Body)
}

// integrated builds an integrated spec of hooksSpec; edits change it.
type integratedOpts struct {
	staleDelivery bool // keep the source's "not specified (GAP-HOOK-001)" sentence
	noLog         bool
	dropOrdering  bool // drop "## 3. Ordering" without logging it
}

func integrated(o integratedOpts) string {
	var b strings.Builder
	b.WriteString("# Hooks API — v1.0\n\n## 1. Delivery\n\nWebhooks are delivered over HTTPS with a JSON body.")
	if o.staleDelivery {
		b.WriteString(" The retry schedule is not\nspecified (GAP-HOOK-001).")
	}
	b.WriteString("\n\n### 1.1 Retries\n\n" + hooksResolution("GAP-HOOK-001") + "\n\n")
	b.WriteString("## 2. Signatures\n\n" + hooksResolution("GAP-HOOK-002") + "\n\n")
	if !o.dropOrdering {
		b.WriteString("## 3. Ordering\n\nDeliveries may arrive out of order; see Known Limitations.\n\n")
	}
	b.WriteString("## Known Limitations\n\n- GAP-HOOK-003 (LOW): ordering guarantees are not yet specified.\n\n")
	if !o.noLog {
		b.WriteString("## Resolution Log\n\n| Item | Section(s) | Note |\n|---|---|---|\n" +
			"| GAP-HOOK-001 | 1.1 Retries; 1. Delivery | retry schedule merged |\n" +
			"| GAP-HOOK-002 | 2. Signatures | signature scheme merged |\n" +
			"| ## 9. Appendix | — | removed: session notes, not part of the API |\n" +
			"| # Hooks API — Draft | # Hooks API — v1.0 | renamed: no longer a draft |\n")
	}
	return b.String()
}

func consistencyReview(issues ...refinetest.Issue) string {
	return refinetest.ReviewerOutput(2, []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"}, issues...)
}

// hooksSession is a session whose round 1 resolves GAP-HOOK-001 and -002;
// engineer and reviewer are the integration step's scripted replies.
func hooksSession(t *testing.T, asker refine.Asker, engineer, reviewer []string) (refine.Config, *refinetest.Role, *refinetest.Role) {
	t.Helper()
	eng := refinetest.Script(append([]string{refinetest.EngineerOutput("GAP-HOOK-001", "GAP-HOOK-002")}, engineer...)...)
	rev := refinetest.Script(append([]string{refinetest.ReviewerOutput(1, []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"})}, reviewer...)...)
	cfg := refinetest.Config(eng, rev, asker, hooksGaps...)
	cfg.Spec, cfg.Integrate, cfg.MaxRounds, cfg.GapsPerRound = hooksSpec, true, 1, 2
	return cfg, eng, rev
}

func getKey(t *testing.T, st refine.Store, key string) string {
	t.Helper()
	b, err := st.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return string(b)
}

// trace reads final_spec_trace.json.
func trace(t *testing.T, st refine.Store) (tr struct {
	Form        string                `json:"form"`
	Reason      string                `json:"reason"`
	Log         []validate.LogEntry   `json:"log"`
	KnownIssues []struct{ ID string } `json:"known_issues"`
	Notes       []string              `json:"notes"`
	Attempts    int                   `json:"attempts"`
	Reviews     int                   `json:"reviews"`
}) {
	t.Helper()
	if err := json.Unmarshal([]byte(getKey(t, st, "final_spec_trace.json")), &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestIntegrationAcceptedFirstTime(t *testing.T) {
	cfg, eng, rev := hooksSession(t, auto(), []string{integrated(integratedOpts{})}, []string{consistencyReview()})
	s, out := run(t, cfg)
	if !out.Status.Terminal() || out.Status == refine.StatusAbandoned {
		t.Fatalf("outcome %+v, want a terminal outcome that keeps the work", out)
	}
	if got := getKey(t, cfg.Store, "final_spec.md"); got != integrated(integratedOpts{}) {
		t.Errorf("final_spec.md is not the integrated spec:\n%s", got)
	}
	// The integration call is the Engineer's next call, with its own prompt
	// carrying the whole source spec and every accepted resolution.
	calls := eng.Calls()
	if len(calls) != 2 || calls[1].Call != 2 {
		t.Fatalf("engineer calls %d (last call number %d), want 2", len(calls), calls[len(calls)-1].Call)
	}
	var whole []string
	for _, m := range eng.Calls()[1].Messages {
		whole = append(whole, m.Content)
	}
	prompt := strings.Join(whole, "\n")
	if stable := eng.Calls()[1].Stable; stable != 2 || !strings.Contains(eng.Calls()[1].Messages[0].Content, "How deliveries are signed is TBD (GAP-HOOK-002).") {
		t.Errorf("stable prefix of %d messages, want 2 with the whole source spec first", stable)
	}
	for _, want := range []string{"# Integration: write the refined spec (v1.0)", "How deliveries are signed is TBD (GAP-HOOK-002).",
		"### GAP-HOOK-001: Retry schedule is unspecified", hooksResolution("GAP-HOOK-002"), "- GAP-HOOK-003 (LOW): Ordering guarantees are unspecified [open]",
		"## Resolution Log"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("integration prompt lacks %q", want)
		}
	}
	if rev.CallCount() != 2 || !strings.Contains(rev.Prompt(1), "# Consistency review of the integrated spec (v1.0)") || !strings.Contains(rev.Prompt(1), "ISSUE-R2-NNN") {
		t.Errorf("reviewer calls %d; consistency prompt:\n%s", rev.CallCount(), rev.Prompt(rev.CallCount()-1))
	}
	for _, key := range []string{"final/prompts/engineer-1.md", "final/attempts/engineer-1.md", "final/engineer.md", "final/prompts/reviewer-1.md", "final/reviewer.md"} {
		getKey(t, cfg.Store, key)
	}
	tr := trace(t, cfg.Store)
	if tr.Form != refine.FinalSpecIntegrated || len(tr.Log) != 4 || tr.Log[0].Item != "GAP-HOOK-001" || tr.Attempts != 1 || tr.Reviews != 1 {
		t.Errorf("trace = %+v", tr)
	}
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.FinalSpec != refine.FinalSpecIntegrated || st.Outcome != out.Status {
		t.Errorf("status final spec %q, outcome %s; want integrated, %s", st.FinalSpec, st.Outcome, out.Status)
	}
	if sum := getKey(t, cfg.Store, "final_summary.md"); !strings.Contains(sum, "Form: integrated (v1.0)") {
		t.Errorf("final_summary.md does not say the spec is integrated:\n%s", sum)
	}
}

func TestIntegrationStructuralFailureRetried(t *testing.T) {
	cfg, eng, _ := hooksSession(t, auto(), []string{integrated(integratedOpts{noLog: true}), integrated(integratedOpts{})}, []string{consistencyReview()})
	_, out := run(t, cfg)
	if got := getKey(t, cfg.Store, "final_spec.md"); got != integrated(integratedOpts{}) {
		t.Fatalf("final_spec.md is not the retried integration (outcome %+v):\n%s", out, got)
	}
	retry := eng.Prompt(2)
	for _, want := range []string{"RETRY ATTEMPT 1 of 2", "INTEGRATED SPEC STRUCTURE CORRECTION REQUIRED:", `no "## Resolution Log" section`, "EXAMPLE OUTPUT", "| Item | Section(s) | Note |"} {
		if !strings.Contains(retry, want) {
			t.Errorf("retry prompt lacks %q:\n%s", want, retry[:min(len(retry), 1500)])
		}
	}
	if tr := trace(t, cfg.Store); tr.Attempts != 2 {
		t.Errorf("trace attempts %d, want 2", tr.Attempts)
	}
}

func TestIntegrationStaleGapRetried(t *testing.T) {
	cfg, eng, _ := hooksSession(t, auto(), []string{integrated(integratedOpts{staleDelivery: true}), integrated(integratedOpts{})}, []string{consistencyReview()})
	_, out := run(t, cfg)
	if got := getKey(t, cfg.Store, "final_spec.md"); got != integrated(integratedOpts{}) {
		t.Fatalf("final_spec.md is not the retried integration (outcome %+v):\n%s", out, got)
	}
	retry := eng.Prompt(2)
	for _, want := range []string{"RESOLVED GAP STILL DESCRIBED AS OPEN:", "GAP-HOOK-001 is resolved, but this sentence still describes it as open", "The retry schedule is not specified (GAP-HOOK-001)."} {
		if !strings.Contains(retry, want) {
			t.Errorf("retry prompt lacks %q:\n%s", want, retry[:min(len(retry), 1500)])
		}
	}
	if strings.Contains(retry, "EXAMPLE OUTPUT") {
		t.Error("a content failure's retry carries the structural example")
	}
}

func TestIntegrationReviewerCriticalGetsOneRetry(t *testing.T) {
	critical := refinetest.Issue{Severity: gap.Critical, Gap: "GAP-HOOK-001", Summary: "1.1 Retries and 2. Signatures disagree on the retry header", Suggestion: "state the header once"}
	cfg, eng, rev := hooksSession(t, auto(),
		[]string{integrated(integratedOpts{}), integrated(integratedOpts{})},
		[]string{consistencyReview(critical), consistencyReview()})
	_, out := run(t, cfg)
	if eng.CallCount() != 3 || rev.CallCount() != 3 {
		t.Fatalf("calls engineer %d reviewer %d, want 3 and 3 (outcome %+v)", eng.CallCount(), rev.CallCount(), out)
	}
	retry := eng.Prompt(2)
	for _, want := range []string{"## Consistency review: fix these issues", "**ISSUE-R2-001** (CRITICAL): 1.1 Retries and 2. Signatures disagree", "Suggestion: state the header once"} {
		if !strings.Contains(retry, want) {
			t.Errorf("integration retry lacks %q", want)
		}
	}
	if strings.Contains(retry, "RETRY ATTEMPT") {
		t.Error("the review's retry is a fresh prompt, not a validation retry")
	}
	tr := trace(t, cfg.Store)
	if tr.Form != refine.FinalSpecIntegrated || tr.Attempts != 2 || tr.Reviews != 2 || len(tr.KnownIssues) != 0 {
		t.Errorf("trace = %+v", tr)
	}
}

// A CRITICAL issue the one retry does not fix is asked; automated mode
// accepts the spec with the issue listed as a known limitation.
func TestIntegrationIssueLeftIsAskedAndListed(t *testing.T) {
	critical := refinetest.Issue{Severity: gap.Critical, Gap: "GAP-HOOK-001", Summary: "retry header stated two ways"}
	asker := auto()
	cfg, eng, _ := hooksSession(t, asker,
		[]string{integrated(integratedOpts{}), integrated(integratedOpts{})},
		[]string{consistencyReview(critical), consistencyReview(critical)})
	_, out := run(t, cfg)
	if eng.CallCount() != 3 {
		t.Fatalf("engineer calls %d, want 3", eng.CallCount())
	}
	asked := asker.Asked()
	last := asked[len(asked)-1]
	if last.ID != "final-integration-1" || last.Kind != refine.KindEscalation {
		t.Fatalf("last question %s (%s), want final-integration-1", last.ID, last.Kind)
	}
	if diff := cmp.Diff([]string{"accept", "retry", "appendix", "pause"}, integOptionKeys(last)); diff != "" || last.Default != "accept" {
		t.Errorf("options (-want +got):\n%s default %q", diff, last.Default)
	}
	spec := getKey(t, cfg.Store, "final_spec.md")
	want := "## Known Limitations\n\n- GAP-HOOK-003 (LOW): ordering guarantees are not yet specified.\n- ISSUE-R2-001 (CRITICAL, consistency review): retry header stated two ways (GAP-HOOK-001)\n"
	if !strings.Contains(spec, want) {
		t.Errorf("final_spec.md lacks the accepted issue under Known Limitations:\n%s", spec)
	}
	if tr := trace(t, cfg.Store); len(tr.KnownIssues) != 1 || tr.KnownIssues[0].ID != "ISSUE-R2-001" {
		t.Errorf("trace known issues %+v", tr.KnownIssues)
	}
	if !out.Status.Terminal() {
		t.Errorf("outcome %s", out.Status)
	}
}

func integOptionKeys(q refine.Question) []string {
	var out []string
	for _, o := range q.Options {
		out = append(out, o.Key)
	}
	return out
}

func TestIntegrationFallbackAfterExhaustedRetries(t *testing.T) {
	bad := integrated(integratedOpts{dropOrdering: true})
	cfg, eng, rev := hooksSession(t, auto(), []string{bad, bad, bad}, nil)
	s, out := run(t, cfg)
	if eng.CallCount() != 4 || rev.CallCount() != 1 {
		t.Fatalf("calls engineer %d reviewer %d, want 4 and 1", eng.CallCount(), rev.CallCount())
	}
	spec := getKey(t, cfg.Store, "final_spec.md")
	head, _, _ := strings.Cut(spec, "\n")
	if !strings.HasPrefix(head, "> **Integration failed:** the integration failed validation 3 times (last: INTEGRATION_STRUCTURE") {
		t.Errorf("first line %q", head)
	}
	for _, want := range []string{hooksSpec[:40], "## Resolved Gaps", "### GAP-HOOK-001: Retry schedule is unspecified", "## Known Limitations"} {
		if !strings.Contains(spec, want) {
			t.Errorf("appendix form lacks %q", want)
		}
	}
	st, _ := s.Status(context.Background())
	if st.FinalSpec != refine.FinalSpecAppendix || !strings.Contains(st.FinalSpecReason, "INTEGRATION_STRUCTURE") || st.Outcome != out.Status || !out.Status.Terminal() {
		t.Errorf("status final spec %q (%s), outcome %s", st.FinalSpec, st.FinalSpecReason, st.Outcome)
	}
	if tr := trace(t, cfg.Store); tr.Form != refine.FinalSpecAppendix || len(tr.Log) != 0 {
		t.Errorf("trace %+v", tr)
	}
}

func TestNoIntegrate(t *testing.T) {
	cfg, eng, rev := hooksSession(t, auto(), []string{integrated(integratedOpts{})}, []string{consistencyReview()})
	cfg.Integrate = false
	s, _ := run(t, cfg)
	if eng.CallCount() != 1 || rev.CallCount() != 1 {
		t.Errorf("calls engineer %d reviewer %d, want 1 and 1: no integration", eng.CallCount(), rev.CallCount())
	}
	spec := getKey(t, cfg.Store, "final_spec.md")
	if !strings.HasPrefix(spec, hooksSpec[:40]) || !strings.Contains(spec, "## Resolved Gaps") {
		t.Errorf("final_spec.md is not the plain appendix form:\n%s", spec)
	}
	if _, err := cfg.Store.Get(context.Background(), "final_spec_trace.json"); !errors.Is(err, refine.ErrNotFound) {
		t.Errorf("final_spec_trace.json: %v, want none", err)
	}
	if st, _ := s.Status(context.Background()); st.FinalSpec != refine.FinalSpecAppendix || st.Settings.Integrate {
		t.Errorf("status final spec %q, settings integrate %v", st.FinalSpec, st.Settings.Integrate)
	}
}

// A recording (or a script) with no response for the integration call
// keeps the appendix form with a note, and gives the call number back.
func TestIntegrationWithoutResponseFallsBack(t *testing.T) {
	cfg, eng, _ := hooksSession(t, auto(), nil, nil)
	s, out := run(t, cfg)
	if !out.Status.Terminal() {
		t.Fatalf("outcome %+v", out)
	}
	spec := getKey(t, cfg.Store, "final_spec.md")
	if !strings.HasPrefix(spec, "> **Integration failed:** the Engineer has no response for the integration call (") {
		t.Errorf("final_spec.md:\n%s", spec[:min(len(spec), 300)])
	}
	if eng.CallCount() != 2 {
		t.Errorf("engineer calls %d, want 2", eng.CallCount())
	}
	if st, _ := s.Status(context.Background()); st.Responses[refine.Engineer] != 1 {
		t.Errorf("engineer responses %d, want 1", st.Responses[refine.Engineer])
	}
}

// The escalation pauses a session whose Asker defers; another process
// opens the session, answers and runs it to the end.
func TestIntegrationEscalationResumedElsewhere(t *testing.T) {
	ctx := context.Background()
	critical := refinetest.Issue{Severity: gap.High, Gap: "GAP-HOOK-002", Summary: "signature header named two ways"}
	asker := &refinetest.Asker{DeferAfterScript: true}
	cfg, eng, rev := hooksSession(t, asker,
		[]string{integrated(integratedOpts{}), integrated(integratedOpts{}), integrated(integratedOpts{})},
		[]string{consistencyReview(critical), consistencyReview(critical), consistencyReview()})
	cfg.MaxRounds = 2 // no question before the integration's: the session completes in round 1
	cfg.Gaps = hooksGaps[:2]
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused || len(out.Pending) != 1 || out.Pending[0].ID != "final-integration-1" {
		t.Fatalf("run = %+v, %v; want paused at final-integration-1", out, err)
	}
	if st, _ := s.Status(ctx); st.FinalSpec != refine.FinalSpecPending {
		t.Errorf("status final spec %q while the question waits", st.FinalSpec)
	}
	// Another process: a new Session on the same store, the roles'
	// scripts where they stopped.
	other := cfg
	other.Asker = auto()
	s2, err := refine.Open(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Answer(ctx, "final-integration-1", refine.Answer{Key: "retry"}); err != nil {
		t.Fatal(err)
	}
	out, err = s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resumed run = %+v, %v", out, err)
	}
	if eng.CallCount() != 4 || rev.CallCount() != 4 {
		t.Errorf("calls engineer %d reviewer %d, want 4 and 4", eng.CallCount(), rev.CallCount())
	}
	if got := getKey(t, cfg.Store, "final_spec.md"); got != integrated(integratedOpts{}) {
		t.Errorf("final_spec.md:\n%s", got)
	}
	if d := getKey(t, cfg.Store, "decisions.md"); !strings.Contains(d, "Retry the integration once more with the issues attached") {
		t.Errorf("decisions.md lacks the answer:\n%s", d)
	}
}

// A crash at any commit from the session's end on repeats at most one
// role call, and the integration finishes after the session is opened
// again.
func TestIntegrationCrashRepeatsAtMostOneCall(t *testing.T) {
	script := func() (*refinetest.Role, *refinetest.Role) {
		eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			if strings.Contains(req.Messages[len(req.Messages)-1].Content, "# Integration:") {
				if req.Attempt == 1 {
					return refine.Response{Content: integrated(integratedOpts{staleDelivery: true})}, nil
				}
				return refine.Response{Content: integrated(integratedOpts{})}, nil
			}
			return refine.Response{Content: refinetest.EngineerOutput("GAP-HOOK-001", "GAP-HOOK-002")}, nil
		})
		rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			if strings.Contains(req.Messages[1].Content, "# Consistency review") {
				return refine.Response{Content: consistencyReview()}, nil
			}
			return refine.Response{Content: refinetest.ReviewerOutput(1, []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"})}, nil
		})
		return eng, rev
	}
	config := func(st refine.Store) (refine.Config, *refinetest.Role, *refinetest.Role) {
		eng, rev := script()
		cfg := refinetest.Config(eng, rev, auto(), hooksGaps[:2]...)
		cfg.Spec, cfg.Integrate, cfg.GapsPerRound, cfg.Store = hooksSpec, true, 2, st
		return cfg, eng, rev
	}
	crashEverywhere(t, config, 5) // round 1: 1 + 1; integration: 2 + 1
}

// TestIntegrationPartsCrashRepeatsAtMostOneCall: the same, integrating
// part by part.
func TestIntegrationPartsCrashRepeatsAtMostOneCall(t *testing.T) {
	config := func(st refine.Store) (refine.Config, *refinetest.Role, *refinetest.Role) {
		eng := partIntegrator()
		rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			if strings.Contains(req.Messages[1].Content, "# Consistency review") {
				return refine.Response{Content: consistencyReview()}, nil
			}
			return refine.Response{Content: refinetest.ReviewerOutput(1, []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"})}, nil
		})
		cfg := refinetest.Config(eng, rev, auto(), hooksGaps...)
		cfg.Spec, cfg.Integrate, cfg.GapsPerRound, cfg.MaxRounds, cfg.PromptBudget, cfg.Store = hooksSpec, true, 2, 1, 400, st
		return cfg, eng, rev
	}
	crashEverywhere(t, config, 6) // round 1: 1 + 1; three parts; the review
}

// crashEverywhere runs a session cleanly, then crashes it at each commit
// in turn and runs it again on what the store kept: at most one role call
// more than the clean run's wantCalls, the same final spec, and crashes
// during the integration step among them.
func crashEverywhere(t *testing.T, config func(refine.Store) (refine.Config, *refinetest.Role, *refinetest.Role), wantCalls int) {
	t.Helper()
	ctx := context.Background()
	clean := &crashingStore{Store: memory.New()}
	cfg, eng, rev := config(clean)
	if _, out := run(t, cfg); !out.Status.Terminal() {
		t.Fatalf("clean run: %+v", out)
	}
	if got := eng.CallCount() + rev.CallCount(); got != wantCalls {
		t.Fatalf("clean run made %d calls, want %d", got, wantCalls)
	}
	if st, _ := refine.Inspect(ctx, clean); st.FinalSpec != refine.FinalSpecIntegrated {
		t.Fatalf("clean run: final spec %q (%s)", st.FinalSpec, st.FinalSpecReason)
	}
	want := getKey(t, clean, "final_spec.md")
	during := 0 // crashes with an integration call made
	for failAt := 2; failAt <= clean.commits; failAt++ {
		mem := memory.New()
		cfg, eng, rev := config(&crashingStore{Store: mem, failAt: failAt})
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(ctx); !errors.Is(err, errCrash) {
			t.Fatalf("failAt %d: Run = %v, want the crash", failAt, err)
		}
		if eng.CallCount() > 1 {
			during++
		}
		cfg.Store = mem
		s2, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("failAt %d: Open: %v", failAt, err)
		}
		out, err := s2.Run(ctx)
		if err != nil || !out.Status.Terminal() {
			t.Fatalf("failAt %d: resumed Run = %+v, %v", failAt, out, err)
		}
		if got := eng.CallCount() + rev.CallCount(); got > wantCalls+1 {
			t.Errorf("failAt %d: %d role calls, want at most %d", failAt, got, wantCalls+1)
		}
		if got := getKey(t, mem, "final_spec.md"); got != want {
			t.Errorf("failAt %d: final_spec.md differs from the clean run's:\n%s", failAt, got)
		}
	}
	if during < 3 {
		t.Errorf("only %d of %d crashes hit the integration step", during, clean.commits-1)
	}
}

// Next's caller makes the integration calls like any other.
func TestIntegrationThroughNext(t *testing.T) {
	ctx := context.Background()
	cfg, _, _ := hooksSession(t, refine.DeferAsker{}, nil, nil)
	cfg.Gaps, cfg.MaxRounds = hooksGaps[:2], 2
	replies := map[string][]string{
		"engineer": {refinetest.EngineerOutput("GAP-HOOK-001", "GAP-HOOK-002"), integrated(integratedOpts{})},
		"reviewer": {refinetest.ReviewerOutput(1, []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"}), consistencyReview()},
	}
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var made []string
	for i := 0; ; i++ {
		if i > 20 {
			t.Fatal("Next never finished")
		}
		r, err := s.Next(ctx, refine.Play{})
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if err := cfg.Store.Commit(ctx, r.Persist...); err != nil {
			t.Fatal(err)
		}
		if err := s.Advance(ctx); err != nil {
			t.Fatal(err)
		}
		if len(r.Calls) == 0 {
			if r.Outcome.Status != refine.StatusComplete {
				t.Fatalf("outcome %+v", r.Outcome)
			}
			break
		}
		for _, req := range r.Calls {
			made = append(made, fmt.Sprintf("%s-%d", req.Role, req.Call))
			content := replies[string(req.Role)][req.Call-1]
			if err := s.Deliver(ctx, req, refine.Response{Content: content}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if diff := cmp.Diff([]string{"engineer-1", "reviewer-1", "engineer-2", "reviewer-2"}, made); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := getKey(t, cfg.Store, "final_spec.md"); got != integrated(integratedOpts{}) {
		t.Errorf("final_spec.md:\n%s", got)
	}
}

// A recording that ends after a consistency review with a CRITICAL issue
// (no response for the retry) keeps the integration, asks, and lists the
// issue when accepted.
func TestIntegrationRetryWithoutResponseAsks(t *testing.T) {
	critical := refinetest.Issue{Severity: gap.Critical, Gap: "GAP-HOOK-001", Summary: "retry header stated two ways"}
	cfg, eng, _ := hooksSession(t, auto(), []string{integrated(integratedOpts{})}, []string{consistencyReview(critical)})
	_, out := run(t, cfg)
	if eng.CallCount() != 3 || !out.Status.Terminal() {
		t.Fatalf("engineer calls %d, outcome %+v", eng.CallCount(), out)
	}
	spec := getKey(t, cfg.Store, "final_spec.md")
	if !strings.HasPrefix(spec, "# Hooks API — v1.0") || !strings.Contains(spec, "- ISSUE-R2-001 (CRITICAL, consistency review): retry header stated two ways") {
		t.Errorf("final_spec.md:\n%s", spec)
	}
	if tr := trace(t, cfg.Store); len(tr.Notes) == 0 || !strings.Contains(strings.Join(tr.Notes, "\n"), "the integration retry after the consistency review was not made") {
		t.Errorf("trace notes %q", tr.Notes)
	}
}

// partIntegrator is an Engineer that plays round 1 and integrates
// whatever part of hooksSpec its prompt quotes: the stale sentences
// replaced, the part's resolutions appended, Known Limitations in the
// last part, and the part's own Resolution Log.
func partIntegrator() *refinetest.Role {
	return refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		prompt := req.Messages[len(req.Messages)-1].Content
		if !strings.Contains(prompt, "# Integration:") {
			return refine.Response{Content: refinetest.EngineerOutput("GAP-HOOK-001", "GAP-HOOK-002")}, nil
		}
		_, src, _ := strings.Cut(prompt, "## Source spec (quoted material)\n~~~~\n")
		src, _, _ = strings.Cut(src, "\n~~~~\n")
		src = strings.Replace(src, " The retry schedule is not\nspecified (GAP-HOOK-001).", "", 1)
		src = strings.Replace(src, "How deliveries are signed is TBD (GAP-HOOK-002).", "Deliveries are signed as below.", 1)
		heading := ""
		for _, line := range strings.Split(src, "\n") {
			if strings.HasPrefix(line, "#") {
				heading = strings.TrimLeft(line, "# ")
				break
			}
		}
		var b strings.Builder
		b.WriteString(src + "\n\n")
		var rows []string
		for _, id := range []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"} {
			if strings.Contains(prompt, "### "+string(id)+":") {
				b.WriteString(hooksResolution(id) + "\n\n")
				rows = append(rows, fmt.Sprintf("| %s | %s | merged |", id, heading))
			}
		}
		if strings.Contains(prompt, "- GAP-HOOK-003 (LOW)") {
			b.WriteString("## Known Limitations\n\n- GAP-HOOK-003 (LOW): ordering guarantees are not yet specified.\n\n")
		}
		b.WriteString("## Resolution Log\n\n| Item | Section(s) | Note |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n")
		return refine.Response{Content: b.String()}, nil
	})
}

// Above the integration prompt's cap (twice PromptBudget) the spec is
// integrated part by part, and the parts joined into one spec with one
// Resolution Log.
func TestIntegrationPartByPart(t *testing.T) {
	eng := partIntegrator()
	rev := refinetest.Script(refinetest.ReviewerOutput(1, []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"}), consistencyReview())
	cfg := refinetest.Config(eng, rev, auto(), hooksGaps...)
	cfg.Spec, cfg.Integrate, cfg.MaxRounds, cfg.GapsPerRound = hooksSpec, true, 1, 2
	cfg.PromptBudget = 400 // the whole integration prompt is about 1,100 tokens
	s, out := run(t, cfg)
	if !out.Status.Terminal() {
		t.Fatalf("outcome %+v", out)
	}
	st, _ := s.Status(context.Background())
	if st.FinalSpec != refine.FinalSpecIntegrated {
		t.Fatalf("final spec %q: %s", st.FinalSpec, st.FinalSpecReason)
	}
	calls := eng.CallCount() - 1
	if calls < 2 {
		t.Errorf("%d integration calls, want one per part with something to merge (at least 2)", calls)
	}
	for i := 1; i <= calls; i++ {
		if p := eng.Prompt(i); !strings.Contains(p, fmt.Sprintf("## This is part %d of ", i)) {
			t.Errorf("integration call %d is not a part's:\n%.600s", i, p)
		}
	}
	spec := getKey(t, cfg.Store, "final_spec.md")
	for _, want := range []string{"# Hooks API — Draft", "## 1. Delivery", hooksResolution("GAP-HOOK-001"), "## 2. Signatures", hooksResolution("GAP-HOOK-002"),
		"## 9. Appendix", "## Known Limitations", "| GAP-HOOK-001 |", "| GAP-HOOK-002 |"} {
		if !strings.Contains(spec, want) {
			t.Errorf("joined spec lacks %q:\n%s", want, spec)
		}
	}
	if n := strings.Count(spec, "## Resolution Log"); n != 1 || strings.Count(spec, "| Item | Section(s) | Note |") != 1 {
		t.Errorf("joined spec has %d Resolution Logs:\n%s", n, spec)
	}
	tr := trace(t, cfg.Store)
	if len(tr.Log) != 2 || tr.Reviews != 1 || !strings.Contains(strings.Join(tr.Notes, "\n"), "integrated part by part") {
		t.Errorf("trace %+v", tr)
	}
}

// A source section that alone does not fit a part keeps the appendix
// form, with the reason, and no integration call is made.
func TestIntegrationPartTooLargeKeepsTheAppendix(t *testing.T) {
	cfg, eng, _ := hooksSession(t, auto(), []string{integrated(integratedOpts{})}, []string{consistencyReview()})
	cfg.PromptBudget = 330
	s, _ := run(t, cfg)
	if eng.CallCount() != 1 {
		t.Errorf("engineer calls %d, want 1: no integration call", eng.CallCount())
	}
	st, _ := s.Status(context.Background())
	if st.FinalSpec != refine.FinalSpecAppendix || !strings.Contains(st.FinalSpecReason, "raise PromptBudget to integrate") {
		t.Errorf("final spec %q: %s", st.FinalSpec, st.FinalSpecReason)
	}
	if spec := getKey(t, cfg.Store, "final_spec.md"); !strings.HasPrefix(spec, "> **Integration failed:** ") {
		t.Errorf("final_spec.md:\n%.300s", spec)
	}
}

// Turning integration off while its question waits (resume
// --no-integrate) keeps the appendix form and drops the question.
func TestIntegrationTurnedOffWhileAsked(t *testing.T) {
	ctx := context.Background()
	critical := refinetest.Issue{Severity: gap.Critical, Gap: "GAP-HOOK-001", Summary: "retry header stated two ways"}
	cfg, _, _ := hooksSession(t, refine.DeferAsker{},
		[]string{integrated(integratedOpts{}), integrated(integratedOpts{})},
		[]string{consistencyReview(critical), consistencyReview(critical)})
	cfg.Gaps, cfg.MaxRounds = hooksGaps[:2], 2
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Run(ctx); err != nil || out.Status != refine.StatusPaused {
		t.Fatalf("run = %+v, %v", out, err)
	}
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := s2.Settings()
	set.Integrate = false
	if err := s2.SetSettings(ctx, set); err != nil {
		t.Fatal(err)
	}
	out, err := s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("run = %+v, %v", out, err)
	}
	st, _ := s2.Status(ctx)
	if st.FinalSpec != refine.FinalSpecAppendix || !strings.Contains(st.FinalSpecReason, "turned off") || len(st.Pending) != 0 {
		t.Errorf("final spec %q (%s), pending %v", st.FinalSpec, st.FinalSpecReason, st.Pending)
	}
}
