package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// The round through a whole Session (refine.New, Run, Step with scripted
// roles and askers): validation retries and their examples, escalation,
// the Engineer's and the Reviewer's steps, new gaps, parallel drafting and
// long sessions. The scripts in testdata specify these decisions input by
// input; these tests play the longer cases through the driver.

func TestRetryThenSuccess(t *testing.T) {
	eng := refinetest.Script("Here are my thoughts on error recovery, without headers.", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if eng.CallCount() != 2 {
		t.Errorf("engineer called %d times, want 2", eng.CallCount())
	}
	retryPrompt := eng.Prompt(1)
	for _, want := range []string{"RETRY ATTEMPT 1 of 2", "FORMAT CORRECTION REQUIRED:", "EXAMPLE OUTPUT", "Source: ", "## Gap Resolution: [GAP-ID]"} {
		if !strings.Contains(retryPrompt, want) {
			t.Errorf("retry prompt lacks %q", want)
		}
	}
	journal := get(t, cfg, "round_001/prompts/engineer-2.md")
	if !strings.Contains(journal, "RETRY ATTEMPT 1 of 2") {
		t.Errorf("journaled prompt lacks the retry notice")
	}
	if got := get(t, cfg, "round_001/attempts/engineer-1.md"); !strings.Contains(got, "without headers") {
		t.Errorf("raw failed response not journaled: %q", got)
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{
		"| Engineer | SUCCESS | 2 | N/A (passed on retry) |",
		"| 2026-01-12T", "| Engineer | 1 | Structure | FAIL | Missing required header: '## Gap Resolution:'",
		"#### Engineer Retry 1 (", "- **Failure Type:** WRONG_FORMAT", "- **Prompt Modification:** FORMAT CORRECTION REQUIRED (structural headers)",
		"- **Outcome:** Success on retry", "## Round 1 Errors", "| Engineer | WRONG_FORMAT | Retry 1 initiated |", "| Engineer | Retry success |",
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q\n%s", want, status)
		}
	}
}

func TestEscalationOptions(t *testing.T) {
	tests := []struct {
		name      string
		answer    refine.Answer
		engineer  []string
		reviewer  []string
		wantCalls int
		wantState map[gap.ID]gap.State
		wantRound string // the round record's Engineer column
		check     func(t *testing.T, eng *refinetest.Role)
	}{
		{
			name: "1 skip", answer: refine.Answer{Key: "1"}, engineer: exhausted(), wantCalls: 3,
			wantState: map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open, "GAP-FLOW-002": gap.Open}, wantRound: "SKIP",
		},
		{
			name: "2 reassign", answer: refine.Answer{Key: "2", Text: "GAP-FLOW-002"}, engineer: exhausted(engineerDoc("GAP-FLOW-002")), reviewer: []string{reviewerDoc(1, "GAP-FLOW-002")},
			wantCalls: 4, wantState: map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open, "GAP-FLOW-002": gap.Accepted}, wantRound: "OK (4 attempts)",
		},
		{
			name: "3 provide context", answer: refine.Answer{Key: "3", Text: "The retry bound is 2."}, engineer: exhausted(engineerDoc("GAP-FLOW-001", "GAP-FLOW-002")),
			reviewer: []string{reviewerDoc(1, "GAP-FLOW-001 and GAP-FLOW-002")}, wantCalls: 4,
			wantState: map[gap.ID]gap.State{"GAP-FLOW-001": gap.Accepted, "GAP-FLOW-002": gap.Accepted}, wantRound: "OK (4 attempts)",
			check: func(t *testing.T, eng *refinetest.Role) {
				if !strings.Contains(eng.Prompt(3), "The retry bound is 2.") {
					t.Errorf("context missing from the extra attempt's prompt")
				}
			},
		},
		{
			name: "4 narrow scope", answer: refine.Answer{Key: "4"}, engineer: exhausted(engineerDoc("GAP-FLOW-002")), reviewer: []string{reviewerDoc(1, "GAP-FLOW-002")},
			wantCalls: 4, wantState: map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open, "GAP-FLOW-002": gap.Accepted}, wantRound: "OK (4 attempts)",
			check: func(t *testing.T, eng *refinetest.Role) {
				if got := eng.Calls()[3].Gaps; !cmp.Equal(got, []gap.ID{"GAP-FLOW-002"}) {
					t.Errorf("narrowed call gaps = %v, want the MEDIUM gap only", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := refinetest.Script(tt.engineer...)
			rev := refinetest.Script(tt.reviewer...)
			ask := then(refinetest.Answers(tt.answer))
			cfg := refinetest.Config(eng, rev, ask, twoGaps...)
			cfg.MaxRounds = 1
			s, out := run(t, cfg)
			if out.Status != refine.StatusMaxRounds && out.Status != refine.StatusComplete {
				t.Fatalf("outcome %+v", out)
			}
			if eng.CallCount() != tt.wantCalls {
				t.Errorf("engineer calls = %d, want %d", eng.CallCount(), tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantState, gapStates(t, s)); diff != "" {
				t.Errorf("gap states (-want +got):\n%s", diff)
			}
			q := ask.Asked()
			if len(q) != 1 || q[0].Kind != refine.KindEscalation || !strings.Contains(q[0].Body, "Engineer could not produce valid output after 3 attempts.") {
				t.Fatalf("questions = %+v", q)
			}
			if !strings.Contains(get(t, cfg, "round_001/summary.md"), "**Engineer:** "+tt.wantRound) {
				t.Errorf("summary lacks Engineer %q:\n%s", tt.wantRound, get(t, cfg, "round_001/summary.md"))
			}
			if !strings.Contains(get(t, cfg, "decisions.md"), "**Chosen Option:** "+tt.answer.Key) {
				t.Errorf("decisions.md lacks the escalation decision")
			}
			if tt.check != nil {
				tt.check(t, eng)
			}
			if tt.name == "1 skip" && rev.CallCount() != 0 {
				t.Errorf("reviewer called after Engineer SKIP")
			}
		})
	}
}

func TestEscalationPauseThenResume(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(exhausted(engineerDoc("GAP-FLOW-001", "GAP-FLOW-002"))...)
	rev := refinetest.Script(reviewerDoc(1, "GAP-FLOW-001, GAP-FLOW-002"))
	cfg := refinetest.Config(eng, rev, then(refinetest.Keys("5")), twoGaps...)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused || len(out.Pending) != 1 {
		t.Fatalf("first run = %+v, %v; want PAUSED with the escalation pending", out, err)
	}
	// Resume in a "new process": Open on the same store with a new asker.
	cfg.Asker = then(refinetest.Keys("3"))
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Answer(ctx, out.Pending[0].ID, refine.Answer{Key: "3", Text: "Bound retries at 2."}); err != nil {
		t.Fatal(err)
	}
	out, err = s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resumed run = %+v, %v", out, err)
	}
	if eng.CallCount() != 4 {
		t.Errorf("engineer calls = %d, want 4 (no repeat after pause)", eng.CallCount())
	}
}

func TestReviewerSkippedLeavesProposalsUnreviewed(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script("bad 1", "bad 2", "bad 3", reviewerDoc(2, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, then(refinetest.Keys("1")))
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v, want COMPLETE in round 2", out)
	}
	if eng.CallCount() != 1 {
		t.Errorf("engineer calls = %d: round 2 has nothing to assign", eng.CallCount())
	}
	if !strings.Contains(get(t, cfg, "round_001/summary.md"), "**Reviewer:** SKIP") {
		t.Errorf("round 1 summary lacks Reviewer SKIP")
	}
	if !strings.Contains(rev.Prompt(3), "## Gap Resolution: GAP-TEST-001") {
		t.Errorf("round 2 reviewer did not get round 1's proposal")
	}
	_ = s
}

func TestPartialEngineerReturnsUnaddressedToOpen(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-FLOW-001"), engineerDoc("GAP-FLOW-002"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-FLOW-001"), reviewerDoc(2, "GAP-FLOW-002"))
	cfg := refinetest.Config(eng, rev, auto(), twoGaps...)
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v", out)
	}
	if got := eng.Calls()[1].Gaps; !cmp.Equal(got, []gap.ID{"GAP-FLOW-002"}) {
		t.Errorf("round 2 assigned %v, want the unaddressed gap", got)
	}
	_ = s
}

func TestNeedsRevisionThenAcceptedAndIssuesCarried(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), revisedDoc("GAP-TEST-001", "ISSUE-R1-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified", "LOW: typo"), reviewerDoc(2, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v", out)
	}
	p := eng.Prompt(1)
	if !strings.Contains(p, "ISSUE-R1-001") || !strings.Contains(p, "retry bound unspecified") {
		t.Errorf("round 2 prompt lacks round 1's issue:\n%s", p)
	}
	if !strings.Contains(rev.Prompt(1), "ISSUE-R2-") {
		t.Errorf("round 2 reviewer prompt lacks the issue ID rule")
	}
	summary := get(t, cfg, "round_001/summary.md")
	if !strings.Contains(summary, "| GAP-TEST-001 | PROPOSED | NEEDS_REVISION | reviewer raised ISSUE-R1-001 |") {
		t.Errorf("summary lacks the transition:\n%s", summary)
	}
	_ = s
}

func TestMaxRounds(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: a"), reviewerDoc(2, "GAP-TEST-001", "CRITICAL: b"))
	cfg := refinetest.Config(eng, rev, auto())
	cfg.MaxRounds = 2
	_, out := run(t, cfg)
	if out.Status != refine.StatusMaxRounds || out.Round != 2 {
		t.Fatalf("outcome %+v, want MAX_ROUNDS after 2", out)
	}
}

func TestNewGapsBecomeOpen(t *testing.T) {
	doc := strings.Replace(engineerDoc("GAP-TEST-001"), "- None", "- GAP-TEST-002 (HIGH): Persistence format undefined", 1)
	eng := refinetest.Script(doc, engineerDoc("GAP-TEST-002"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"), reviewerDoc(2, "GAP-TEST-002"))
	cfg := refinetest.Config(eng, rev, auto())
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v", out)
	}
	st, _ := s.Status(context.Background())
	if len(st.Gaps) != 2 || st.Gaps[1].ID != "GAP-TEST-002" || st.Gaps[1].Severity != gap.High {
		t.Errorf("gaps = %+v", st.Gaps)
	}
}

func TestPermanentRoleErrorFailsResumably(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("401 unauthorized: check the API key")
	calls := 0
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		calls++
		if calls == 1 {
			return refine.Response{}, boom
		}
		return refine.Response{Content: engineerDoc("GAP-TEST-001")}, nil
	})
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if !errors.Is(err, boom) || out.Status != refine.StatusFailed {
		t.Fatalf("Run = %+v, %v; want FAILED wrapping the role error", out, err)
	}
	if !strings.Contains(err.Error(), "round 1 engineer attempt 1") {
		t.Errorf("error lacks where: %v", err)
	}
	if !strings.Contains(get(t, cfg, "status.md"), "EXECUTION_ERROR") {
		t.Errorf("status.md lacks the EXECUTION_ERROR row")
	}
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err = s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resume = %+v, %v", out, err)
	}
}

func TestParallelDrafting(t *testing.T) {
	gaps := []gap.Gap{{ID: "GAP-PAR-001", Severity: gap.High}, {ID: "GAP-PAR-002", Severity: gap.High}, {ID: "GAP-PAR-003", Severity: gap.High}}
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		if len(req.Gaps) != 1 {
			return refine.Response{}, fmt.Errorf("parallel call got %d gaps", len(req.Gaps))
		}
		if req.Gaps[0] == "GAP-PAR-002" && req.Attempt == 1 {
			return refine.Response{Content: "bad format"}, nil
		}
		return refine.Response{Content: engineerDoc(req.Gaps[0])}, nil
	})
	rev := refinetest.Script(reviewerDoc(1, "GAP-PAR-001, GAP-PAR-002, GAP-PAR-003"))
	cfg := refinetest.Config(eng, rev, auto(), gaps...)
	cfg.ParallelGaps = 3
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if eng.CallCount() != 4 {
		t.Errorf("engineer calls = %d, want 4 (one retry)", eng.CallCount())
	}
	merged := get(t, cfg, "round_001/engineer.md")
	i1, i2, i3 := strings.Index(merged, "GAP-PAR-001"), strings.Index(merged, "## Gap Resolution: GAP-PAR-002"), strings.Index(merged, "## Gap Resolution: GAP-PAR-003")
	if !(i1 >= 0 && i1 < i2 && i2 < i3) {
		t.Errorf("merged engineer.md not in gap order")
	}
	get(t, cfg, "round_001/attempts/engineer-GAP-PAR-002-2.md")
}

// The validation summary of a round is derived from its attempt facts, so
// it reads the same while the round waits at the escalation question and
// after the round is over (it used to fall back to the tier,
// "Structure", once the round's attempts had left the state).
func TestValidationSummaryStaysTheSameAfterTheRound(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script("not a proposal", "still not", "nope", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || len(out.Pending) != 1 {
		t.Fatalf("Run: %v, pending %v", err, out.Pending)
	}
	const want = "| Engineer | FAILED | 3 | WRONG_FORMAT |"
	paused := section(get(t, cfg, "status.md"), "## Round 1 Validation Log")
	if !strings.Contains(paused, want) {
		t.Fatalf("while paused, the summary lacks %q:\n%s", want, paused)
	}
	// Skip the Engineer: the round ends without a valid Engineer output.
	if err := s.Answer(ctx, out.Pending[0].ID, refine.Answer{Key: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatal(err)
	}
	after := section(get(t, cfg, "status.md"), "## Round 1 Validation Log")
	if !strings.Contains(after, want) {
		t.Errorf("after the round, the summary lacks %q:\n%s", want, after)
	}
	if !strings.Contains(after, "#### Engineer Retry 2") || !strings.Contains(after, "- **Outcome:** Failed again (WRONG_FORMAT)") {
		t.Errorf("retry details are not derived from the attempts:\n%s", after)
	}
	errs := section(get(t, cfg, "status.md"), "## Round 1 Errors")
	for _, want := range []string{"| Engineer | WRONG_FORMAT | Retry 1 initiated |", "| Engineer | WRONG_FORMAT | Retries exhausted: escalating |"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the error table lacks %q:\n%s", want, errs)
		}
	}
}

// exampleBetween returns the example block of a retry prompt: the text
// between "Source: …" + its rule line and the closing heavy rule.
func exampleBetween(t *testing.T, prompt string) (source, example string) {
	t.Helper()
	i := strings.Index(prompt, "Source: ")
	if i < 0 {
		t.Fatalf("retry prompt has no Source: line:\n%s", prompt)
	}
	rest := prompt[i+len("Source: "):]
	nl := strings.IndexByte(rest, '\n')
	source, rest = rest[:nl], rest[nl+1:]
	rest = rest[strings.IndexByte(rest, '\n')+1:] // the light rule
	end := strings.Index(rest, "═══")
	if end < 0 {
		t.Fatalf("no closing rule")
	}
	return source, strings.TrimSpace(rest[:end])
}

func TestRetryAttachesTemplateAndLogsIt(t *testing.T) {
	eng := refinetest.Script("no headers here", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	run(t, cfg)
	prompt := get(t, cfg, "round_001/prompts/engineer-2.md")
	for _, want := range []string{"RETRY ATTEMPT 1 of 2", "FORMAT CORRECTION REQUIRED:", "EXAMPLE OUTPUT"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("retry prompt lacks %q", want)
		}
	}
	_, ex := exampleBetween(t, prompt)
	if n := (refine.CharTokenizer{}).Count(ex); n == 0 || n > 2000 {
		t.Errorf("example is %d tokens, want 1..2000", n)
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"## Example Attachment Log", "### Round 1 - Engineer Retry 1", "Tier 3", "### Example Source Statistics"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q:\n%s", want, status)
		}
	}
}

func TestCanonicalExampleFromSpecSection7IsTruncatedToBudget(t *testing.T) {
	huge := strings.Repeat("The retry schedule is exponential with full jitter and a cap. ", 1700) // ~100 KB
	spec := "# Orders API\n\nPagination is unspecified.\n\n## 7. Examples\n\n### 7.1 Engineer output\n\n```markdown\n## Gap Resolution: GAP-XXX\n\n**Confidence:** HIGH\n\n### Proposed Solution\n" +
		huge + "\n\n### Examples\nOne.\n\n### Trade-offs\n**Pros:** a\n**Cons:** b\n\n### New Gaps Introduced\n- None\n```\n"
	eng := refinetest.Script("no headers here", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	cfg.Spec = spec
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	source, ex := exampleBetween(t, get(t, cfg, "round_001/prompts/engineer-2.md"))
	if !strings.Contains(strings.ToLower(source), "canonical") {
		t.Errorf("source = %q, want the canonical example", source)
	}
	if n := (refine.CharTokenizer{}).Count(ex); n > 2000 || !strings.Contains(ex, "## Gap Resolution:") {
		t.Errorf("canonical example is %d tokens (want ≤ 2000) or lost its header", n)
	}
	if !strings.Contains(get(t, cfg, "status.md"), "Tier 1") {
		t.Errorf("status.md attachment log lacks Tier 1")
	}
	// The initial prompt carries the canonical format within 1000 tokens.
	first := get(t, cfg, "round_001/prompts/engineer-1.md")
	i := strings.Index(first, "## Format example")
	if i < 0 {
		t.Fatalf("initial prompt has no format example")
	}
	block := first[i:]
	if j := strings.Index(block, "## Spec excerpt"); j > 0 {
		block = block[:j]
	}
	if j := strings.Index(block, "<!-- user -->"); j > 0 { // the example ends the stable prefix
		block = block[:j]
	}
	if n := (refine.CharTokenizer{}).Count(block); n > 1100 {
		t.Errorf("initial format block is %d tokens, budget 1000", n)
	}
	_ = s
	_ = context.Background()
}

// A retry's prompt attaches the very example the Example Attachment Log
// names for that retry: it is selected once, when the failure is recorded.
func TestRetryAttachesTheLoggedExample(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script("not a proposal at all", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	tier := -1
	cfg.Observer = refine.ObserverFunc(func(e refine.Event) {
		if e.Kind == refine.EventAttemptStarted && e.Role == refine.Engineer && e.Attempt == 2 {
			tier = e.ExampleTier
		}
	})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Run(ctx); err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	prompt := get(t, cfg, "round_001/prompts/engineer-2.md")
	status := get(t, cfg, "status.md")
	i := strings.Index(status, "- **Example Source:** ")
	if i < 0 {
		t.Fatalf("status.md has no example log entry:\n%s", status)
	}
	source := strings.TrimSpace(strings.SplitN(status[i+len("- **Example Source:** "):], "\n", 2)[0])
	if !strings.HasPrefix(source, fmt.Sprintf("Tier %d ", tier)) {
		t.Errorf("the retry prompt attached a tier %d example; the log says %q", tier, source)
	}
	if !strings.Contains(prompt, "Source: ") {
		t.Errorf("the retry prompt attaches no example:\n%s", prompt)
	}
}

// A fatal error leaves the session FAILED (resumable) wherever it is
// read, never RUNNING, and the next run takes it up again (issue #23).
func TestFatalErrorGivesFailedThenResumes(t *testing.T) {
	ctx := context.Background()
	broken := errors.New("backend refused the key")
	fail := true
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if fail {
			return refine.Response{}, broken
		}
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	_, rev := approvingRoles()
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if !errors.Is(err, broken) || out.Status != refine.StatusFailed {
		t.Fatalf("Run: %s, %v; want FAILED wrapping the role's error", out.Status, err)
	}
	// Another process reads it.
	st, err := refine.Inspect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	if st.Outcome != refine.StatusFailed || !strings.Contains(st.Reason, "backend refused the key") {
		t.Errorf("Inspect: %s (%q), want FAILED with the error", st.Outcome, st.Reason)
	}
	md, err := cfg.Store.Get(ctx, "status.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "FAILED") {
		t.Errorf("status.md does not say FAILED:\n%s", md)
	}
	fail = false
	s, err = refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err = s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resumed run: %s, %v; want COMPLETE", out.Status, err)
	}
	if st, _ := refine.Inspect(ctx, cfg.Store); st.Outcome != refine.StatusComplete || st.Reason == "" || strings.Contains(st.Reason, "refused") {
		t.Errorf("after the resumed run: %s (%q)", st.Outcome, st.Reason)
	}
}

// A session may run past round 99: issue and decision IDs carry up to
// three round digits, round folders sort (issue #30, DESIGN §4).
func TestSessionPastRound99(t *testing.T) {
	if testing.Short() {
		t.Skip("a 105-round session")
	}
	ctx := context.Background()
	id := gap.ID("GAP-TEST-001")
	eng, rev := revisingRoles(id)
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
	cfg.MaxRounds = 105
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusMaxRounds || out.Round != 105 {
		t.Fatalf("Run: %+v, %v; want MAX_ROUNDS after round 105", out, err)
	}
	rev105, err := cfg.Store.Get(ctx, "round_105/reviewer.md")
	if err != nil || !strings.Contains(string(rev105), "ISSUE-R105-001") {
		t.Fatalf("round_105/reviewer.md: %v", err)
	}
	st, _ := s.Status(ctx)
	var late bool
	for _, d := range st.Decisions {
		late = late || strings.HasPrefix(d.ID, "DECISION-R10") && len(d.ID) == len("DECISION-R100-001")
	}
	if !late {
		t.Errorf("no decision numbered in a round past 99: %+v", st.Decisions)
	}
	keys, _ := cfg.Store.List(ctx, "round_")
	if len(keys) == 0 || !strings.HasPrefix(keys[len(keys)-1], "round_105/") {
		t.Errorf("round folders do not sort: last key %q", keys[len(keys)-1])
	}
}

// Two REVISE rounds raise the divergence warning; narrowing scope defers
// the only gap. The session must not end COMPLETE (the last review was
// REVISE), and the round's convergence row counts the deferral (issue #23).
func TestNarrowScopeAfterReviseIsNotComplete(t *testing.T) {
	ctx := context.Background()
	id := gap.ID("GAP-TEST-001")
	eng, rev := revisingRoles(id)
	asker := refinetest.Answers(refine.Answer{Key: convergence.KeyNarrowScope, Text: string(id)}, refine.Answer{Key: convergence.KeyAccept})
	cfg := refinetest.Config(eng, rev, asker)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Not COMPLETE: the good-enough offer, accepted by a person.
	if out.Status != refine.StatusUserApproved {
		t.Fatalf("outcome %s after a REVISE review whose gap was deferred by narrowing scope, want USER_APPROVED from the good-enough offer", out.Status)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Convergence) < 2 {
		t.Fatalf("convergence rows %+v", st.Convergence)
	}
	row := st.Convergence[1]
	if row.Round != 2 || row.Deferred != 1 || row.GapsEnd != 0 {
		t.Errorf("round 2's row = %+v, want Deferred 1 and Gaps End 0", row)
	}
	if row.State != convergence.DivergenceWarning {
		t.Errorf("round 2's state %s, want it kept as DIVERGENCE_WARNING", row.State)
	}
}

// A round that makes no role call (every gap deferred) starts, stages its
// backup and ends in the commit that finishes the session with a whole
// snapshot: the backup must keep what it is rebuilt from (found by the
// simulator, seed 1932: export failed with "no snapshot at or before
// journal record 12").
func TestBackupStagedWithTheFinishingSnapshot(t *testing.T) {
	ctx := context.Background()
	id := gap.ID("GAP-TEST-001")
	eng, rev := revisingRoles(id)
	asker := refinetest.Answers(refine.Answer{Key: convergence.KeyNarrowScope, Text: string(id)}, refine.Answer{Key: convergence.KeyContinue})
	cfg := refinetest.Config(eng, rev, asker)
	cfg.MaxRounds, cfg.BackupRetention = 3, 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusMaxRounds {
		t.Fatalf("Run: %+v, %v; want MAX_ROUNDS after a round with nothing to do", out, err)
	}
	if err := refine.Compact(ctx, cfg.Store); err != nil {
		t.Fatalf("Compact (refine export): %v", err)
	}
	s, err = refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Asker = refinetest.Keys("1")
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 2, Reason: "redo round 3", Adjustments: []string{"x"}}); err != nil {
		t.Fatalf("rollback to 2: %v", err)
	}
}

// revisingRoles play a gap the Reviewer never accepts: the Engineer
// proposes, then revises for the last round's issue; the Reviewer raises a
// HIGH issue against it every round.
func revisingRoles(id gap.ID) (eng, rev refine.Role) {
	eng = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 1 {
			return refine.Response{Content: refinetest.EngineerOutput(id)}, nil
		}
		return refine.Response{Content: refinetest.Revision(id, refinetest.IssueID(req.Round-1, 1), "bound the retries")}, nil
	})
	rev = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps,
			refinetest.Issue{Severity: gap.High, Gap: id, Summary: "retries are unbounded", Suggestion: "bound the retries"})}, nil
	})
	return eng, rev
}

// Answers ending in a line that holds only a Unicode space (a no-break
// space, as chat models end answers) are read as written: the session
// completes in one call per role. Before the fix the closing-remark check
// panicked on such a line.
func TestAnswersEndingInAUnicodeSpaceLine(t *testing.T) {
	eng := refinetest.Script(engineerDoc("GAP-TEST-001") + "\n\n\u00a0\n")
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001") + "\n\n\u2000")
	cfg := refinetest.Config(eng, rev, auto())
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete || eng.CallCount() != 1 || rev.CallCount() != 1 {
		t.Errorf("outcome %s after %d engineer and %d reviewer calls, want COMPLETE after one each", out.Status, eng.CallCount(), rev.CallCount())
	}
}
