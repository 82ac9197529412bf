package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/examples"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/retry"
	"github.com/refine-spec/refine/validate"
)

// attemptOutcome is one attempt's journal and verdict, not yet committed.
type attemptOutcome struct {
	rec     attemptRec
	content string
	result  validate.Result
	ops     []Op
	example exampleChoice
	// estimated is set when usage was estimated, not reported.
	estimated bool
}

// attempt builds the prompt, journals it, calls the role (unless a
// journaled response exists), journals the raw response and validates it.
// The caller records the outcome and commits ops with the state.
func (s *Session) attempt(ctx context.Context, role RoleName, part string, k int, rp *rolePhase) (attemptOutcome, error) {
	cur := s.st.Current
	gaps, prev := rp.Gaps, rp.Attempts
	if part != "" {
		p := rp.part(gap.ID(part))
		gaps, prev = []gap.ID{p.Gap}, p.Attempts
	}
	where := fmt.Sprintf("round %d %s attempt %d", cur.N, role, k)
	if part != "" {
		where = fmt.Sprintf("round %d %s (%s) attempt %d", cur.N, role, part, k)
	}
	s.emit(Event{Kind: EventAttemptStarted, Role: role, Attempt: k, Gap: part})
	started := s.now()

	s.stateMu.Lock()
	msgs, ex, err := s.buildPrompt(ctx, role, k, gaps, prev, rp.Context)
	s.stateMu.Unlock()
	if err != nil {
		return attemptOutcome{}, fmt.Errorf("%s: build prompt: %w", where, err)
	}
	promptKey, respKey := attemptKeys(cur.N, role, part, k)
	promptOp := Put(promptKey, []byte(renderPrompt(where, msgs)))

	out := attemptOutcome{example: ex}
	var usage Usage
	calls := 0
	if b, err := s.get(ctx, respKey); err == nil {
		// A journaled response from before a crash or pause: never pay twice.
		out.content = string(b)
	} else if !errors.Is(err, ErrNotFound) {
		return attemptOutcome{}, fmt.Errorf("%s: read response journal: %w", where, err)
	} else {
		// The prompt, and everything staged before it, is durable before
		// the call: a crash during the call loses nothing already paid for.
		if part != "" {
			// Parallel calls journal their own prompt; the state is
			// committed under stateMu by runPart.
			if err := s.cfg.Store.Commit(ctx, promptOp); err != nil {
				return attemptOutcome{}, fmt.Errorf("%s: journal prompt: %w", where, err)
			}
		} else {
			s.stage(promptOp)
			if err := s.flush(ctx); err != nil {
				return attemptOutcome{}, fmt.Errorf("%s: journal prompt: %w", where, err)
			}
		}
		expected := outputKey(cur.N, role)
		if part != "" {
			expected = ""
		}
		req := Request{Role: role, Round: cur.N, Attempt: k, Gaps: idStrings(gaps), Messages: msgs, ExpectedKey: expected, MaxTokens: s.cfg.MaxTokens}
		resp, n, err := s.call(ctx, where, req)
		calls = n
		if err != nil {
			return attemptOutcome{}, err
		}
		usage = resp.Usage
		out.content = resp.Content
		if usage == (Usage{}) {
			// The backend reported nothing (a replay, some local servers):
			// estimate with the Tokenizer so status never shows a free call.
			for _, m := range msgs {
				usage.PromptTokens += s.tok.Count(m.Content)
			}
			usage.CompletionTokens = s.tok.Count(resp.Content)
			out.estimated = true
		}
		if out.content == "" && expected != "" {
			// The role may have written its output into the Store itself.
			if b, err := s.get(ctx, expected); err == nil {
				out.content = string(b)
			}
		}
		out.ops = append(out.ops, Put(respKey, []byte(out.content)))
	}

	var res validate.Result
	if out.content == "" {
		res = validate.FileMissing(outputKey(cur.N, role))
	} else {
		s.stateMu.Lock()
		opts := validate.Options{KnownGaps: s.st.Ledger.IDs(), KnownIssues: s.issueIDs(), Round: cur.N, MaxOutputBytes: s.cfg.MaxOutputBytes}
		decided := slices.Clone(s.st.ConflictDecisions)
		for _, d := range decided {
			opts.ResolvedIssues = append(opts.ResolvedIssues, d.IssueID)
		}
		s.stateMu.Unlock()
		if role == Engineer {
			res = validate.Engineer(out.content, opts)
			res = complianceCheck(res, out.content, decided)
		} else {
			res = validate.Reviewer(out.content, opts)
		}
	}
	if !res.Success {
		// A role that wrote its output key itself must not leave an invalid file behind.
		if part == "" {
			out.ops = append(out.ops, Delete(outputKey(cur.N, role)))
		}
	}
	out.result = res
	out.rec = attemptRec{N: k, At: s.now(), Success: res.Success, FailureType: string(res.FailureType), Tier: string(res.Tier),
		Line: res.Line, Message: res.Message, Warnings: res.Warnings, Usage: usage, Calls: calls, UsageEstimated: out.estimated}
	s.emit(Event{Kind: EventAttemptFinished, Role: role, Attempt: k, Gap: part, FailureType: out.rec.FailureType,
		Message: res.Message, Elapsed: s.now().Sub(started)})
	return out, nil
}

// complianceCheck holds a valid Engineer output to the recorded decisions
// (FLOW-006 §5): re-arguing a decided conflict is the retriable failure
// RE_ARGUED_CONFLICT, quoting the decision; a repeated position is a warning.
func complianceCheck(res validate.Result, content string, decided []conflict.Decision) validate.Result {
	if len(decided) == 0 || (!res.Success && res.FailureType != validate.ReArguedConflict) {
		return res
	}
	for _, v := range conflict.CheckCompliance(content, decided) {
		if v.Fatal {
			f := validate.Fail(validate.ReArguedConflict, v.Message)
			f.Line = v.Line
			return f
		}
		if res.Success {
			res.Warnings = append(res.Warnings, v.Message)
		}
	}
	return res
}

// call sends req to the role, retrying transient errors with backoff.
// Transport retries never spend the validation budget.
func (s *Session) call(ctx context.Context, where string, req Request) (Response, int, error) {
	r := s.cfg.Engineer
	if req.Role == Reviewer {
		r = s.cfg.Reviewer
	}
	b := retry.Backoff{Base: s.cfg.BackoffBase, Max: s.cfg.BackoffMax}
	calls := 0
	for try := 1; ; try++ {
		resp, err := r.Respond(ctx, req)
		calls++
		if err == nil {
			return resp, calls, nil
		}
		if ctx.Err() != nil {
			return Response{}, calls, fmt.Errorf("%s: %w", where, ctx.Err())
		}
		transient, hint := IsTransient(err)
		if !transient {
			return Response{}, calls, fmt.Errorf("%s: %s: %w", where, req.Role, err)
		}
		if try > s.cfg.TransportRetries {
			return Response{}, calls, fmt.Errorf("%s: %s: gave up after %d transport retries: %w", where, req.Role, s.cfg.TransportRetries, err)
		}
		s.stateMu.Lock()
		d := b.Delay(try, hint, s.rnd.Float64)
		s.st.Errors = append(s.st.Errors, errorEntry{Round: req.Round, At: s.now(), Role: roleTitle(req.Role), Event: "Transport retry",
			Details: fmt.Sprintf("%s; retry %d in %s", oneLine(err.Error()), try, d.Round(time.Millisecond))})
		s.stateMu.Unlock()
		s.log.Warn("transient role error, backing off", "where", where, "retry", try, "delay", d, "err", err)
		s.emit(Event{Kind: EventTransportRetry, Role: req.Role, Attempt: req.Attempt, Message: err.Error(), Elapsed: d})
		if err := s.clock.Sleep(ctx, d); err != nil {
			return Response{}, calls, fmt.Errorf("%s: %w", where, err)
		}
	}
}

// recordAttempt appends the attempt and its validation-log, retry and
// error rows. Callers hold no lock in sequential mode; parallel mode calls
// it under stateMu.
func (s *Session) recordAttempt(ctx context.Context, role RoleName, part string, attempts *[]attemptRec, out attemptOutcome) {
	cur := s.st.Current
	rec := out.rec
	*attempts = append(*attempts, rec)
	s.st.Usage.add(role, rec.Usage, rec.Calls)
	s.publish()
	at := rec.At
	if rec.Success {
		s.st.Validation = append(s.st.Validation,
			validationEntry{Round: cur.N, At: at, Role: role, Part: part, Attempt: rec.N, Tier: "Structure", Result: "PASS", Message: "-"},
			validationEntry{Round: cur.N, At: at, Role: role, Part: part, Attempt: rec.N, Tier: "Content", Result: "PASS", Message: contentSummary(role, out.result)})
	} else {
		msg := rec.Message
		if rec.Line > 0 && !strings.Contains(msg, "line ") {
			msg = fmt.Sprintf("line %d: %s", rec.Line, msg)
		}
		s.st.Validation = append(s.st.Validation, validationEntry{Round: cur.N, At: at, Role: role, Part: part, Attempt: rec.N, Tier: rec.Tier, Result: "FAIL", Message: oneLine(msg)})
		s.emit(Event{Kind: EventValidationFailed, Role: role, Attempt: rec.N, Gap: part, FailureType: rec.FailureType, Message: rec.Message})
	}
	// The outcome of the retry this attempt answered.
	for i := len(s.st.ExampleLog) - 1; i >= 0 && rec.N > 1; i-- {
		e := &s.st.ExampleLog[i]
		if e.Round == cur.N && e.Role == string(role) && e.Retry == rec.N-1 && e.Outcome == examples.OutcomePending {
			e.Outcome = examples.OutcomeFailed
			if rec.Success {
				e.Outcome = examples.OutcomeSuccess
			}
			break
		}
	}
	for i := len(s.st.Retries) - 1; i >= 0; i-- {
		d := &s.st.Retries[i]
		if d.Round == cur.N && d.Role == role && d.Part == part && d.Retry == rec.N-1 {
			if rec.Success {
				d.Outcome = "Success on retry"
			} else {
				d.Outcome = "Failed again (" + rec.FailureType + ")"
			}
			break
		}
	}
	if rec.Success {
		if rec.N > 1 {
			s.st.Errors = append(s.st.Errors, errorEntry{Round: cur.N, At: at, Role: roleTitle(role), Event: "Retry success", Details: fmt.Sprintf("Valid output on attempt %d", rec.N)})
		}
		return
	}
	details := "Retries exhausted: escalating"
	if rec.N < s.budgetFor(role, part) {
		details = fmt.Sprintf("Retry %d initiated", rec.N)
		sel, err := s.example(ctx, role, rec.FailureType, s.cfg.RetryExampleBudget)
		label := exampleLabel(sel)
		if err != nil {
			label = "unavailable: " + err.Error()
		} else {
			entry := examples.NewLogEntry(cur.N, string(role), rec.N, rec.FailureType, sel)
			entry.Outcome = examples.OutcomePending
			s.st.ExampleLog = append(s.st.ExampleLog, entry)
		}
		s.st.Retries = append(s.st.Retries, retryDetail{Round: cur.N, Role: role, Part: part, Retry: rec.N, At: at, FailureType: rec.FailureType,
			Modification: retry.Label(rec.FailureType), Example: label, Outcome: "pending"})
		s.emit(Event{Kind: EventRetry, Role: role, Attempt: rec.N + 1, Gap: part, FailureType: rec.FailureType})
	}
	s.st.Errors = append(s.st.Errors, errorEntry{Round: cur.N, At: at, Role: roleTitle(role), Event: rec.FailureType, Details: details})
}

func (s *Session) budgetFor(role RoleName, part string) int {
	rp := s.st.Current.role(role)
	if part != "" {
		return 1 + s.cfg.MaxRetries
	}
	return rp.Budget
}

func contentSummary(role RoleName, r validate.Result) string {
	if role == Engineer {
		n := len(r.GapsAddressed)
		return fmt.Sprintf("%d gap%s addressed", n, plural(n))
	}
	if r.NoIssuesFound && len(r.Issues) == 0 {
		return "NO_ISSUES_FOUND"
	}
	n := len(r.Issues)
	return fmt.Sprintf("%d issue%s, verdict %s", n, plural(n), r.Verdict)
}

func (s *Session) issueIDs() []string {
	out := make([]string, len(s.st.Issues))
	for i, is := range s.st.Issues {
		out[i] = is.ID
	}
	return out
}

func idStrings(ids []gap.ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

func roleTitle(r RoleName) string {
	if r == "" {
		return ""
	}
	return strings.ToUpper(string(r[:1])) + string(r[1:])
}

func renderPrompt(where string, msgs []Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- refine prompt: %s -->\n", where)
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n<!-- %s -->\n%s\n", m.Role, m.Content)
	}
	return b.String()
}
