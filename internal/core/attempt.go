package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/retry"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// attemptOutcome is one attempt's journal and verdict, not yet committed.
type attemptOutcome struct {
	rec     state.AttemptRec
	content string
	result  validate.Result
	ops     []store.Op
	example exampleChoice
	// estimated is set when usage was estimated, not reported.
	estimated bool
	// finishReason is the backend's, for observers.
	finishReason string
}

// attemptPlan is an attempt prepared on the session's goroutine: the
// prompt built and journaled (or a journaled response found), ready for a
// role call that may run on another goroutine.
type attemptPlan struct {
	Role    llm.RoleName
	Part    string
	K       int
	where   string
	req     llm.Request
	msgs    []llm.Message
	Example exampleChoice
	// journaled holds a response journaled before a crash or pause: the
	// role is not called again; journaledFinish is the finish reason
	// journaled beside it.
	journaled       *string
	journaledFinish string
	// delivered holds the result of the call the driver made; needed
	// marks a call the Ready asks the driver to make.
	delivered *RoleResult
	needed    bool
	started   time.Time
	// Phase is PhaseIntegration for the integration step's calls.
	Phase state.Phase
}

// RoleResult is what a role call hands back: the response, how many calls
// it took, and the transport retries made on the way.
type RoleResult struct {
	Resp  llm.Response
	Calls int
	Err   error
	// Failure says how the call failed, for the error's wording.
	Failure CallFailure
}

// CallFailure is how a role call failed.
type CallFailure struct {
	// Cancelled: the caller's context ended; retries: gave up after this
	// many transport retries (0: a permanent error).
	Cancelled bool
	Retries   int
}

// wrap words the failure of the call where names.
func (f CallFailure) wrap(where string, role llm.RoleName, err error) error {
	switch {
	case f.Cancelled:
		return &interruption{cause: err, err: fmt.Errorf("%s: %w", where, err)}
	case f.Retries > 0:
		return fmt.Errorf("%s: %s: gave up after %d transport retries: %w", where, role, f.Retries, err)
	}
	return fmt.Errorf("%s: %s: %w", where, role, err)
}

// interruption is the error of a call the driver's context ended: the
// run stops there, paused, not failed.
type interruption struct {
	cause error // the context's error
	err   error
}

func (e *interruption) Error() string { return e.err.Error() }
func (e *interruption) Unwrap() error { return e.err }

// TransportNote is one transient role error retried after a delay.
type TransportNote struct {
	Role    llm.RoleName
	Round   int
	Attempt int
	Err     error
	Try     int
	Delay   time.Duration
}

// attempt plays one attempt of a sequential role phase on the session's
// goroutine: plan, journal the prompt, and either stop for the call
// (errNeedCalls: the driver makes it) or validate and record its result.
func (s *Engine) attempt(role llm.RoleName, k int, rp *state.RolePhase) (attemptOutcome, error) {
	plan, err := s.planAttempt(role, "", k, rp)
	if err != nil {
		return attemptOutcome{}, err
	}
	if plan.needed {
		return attemptOutcome{}, ErrNeedCalls // the Ready makes the prompt durable
	}
	return s.settle(plan, plan.result(), &rp.Attempts)
}

// settle validates a role call's result, records the attempt in attempts
// and closes the attempt's scope.
func (s *Engine) settle(plan attemptPlan, res RoleResult, attempts *[]state.AttemptRec) (attemptOutcome, error) {
	out, err := finishAttempt(s.st, plan, res, s.cfg.MaxOutputBytes, s.tok, s.at)
	if err != nil {
		s.endAttempt(plan, out, err)
		return out, err
	}
	out.rec.Free = !out.rec.Success && freeReask(out.rec, *attempts, s.cfg.TokensCap())
	s.recordAttempt(plan.Role, plan.Part, attempts, out)
	s.endAttempt(plan, out, nil)
	return out, nil
}

// planAttempt builds the prompt and stages it for the journal, or finds
// the response journaled before a crash or pause. It runs on the session's
// goroutine; the caller makes the staged prompt durable before the call.
func (s *Engine) planAttempt(role llm.RoleName, part string, k int, rp *state.RolePhase) (attemptPlan, error) {
	cur := s.st.Current
	gaps, prev := rp.Gaps, rp.Attempts
	if part != "" {
		p := rp.Part(gap.ID(part))
		gaps, prev = []gap.ID{p.Gap}, p.Attempts
	}
	where := fmt.Sprintf("round %d %s attempt %d", cur.N, role, k)
	if part != "" {
		where = fmt.Sprintf("round %d %s (%s) attempt %d", cur.N, role, part, k)
	}
	promptKey, respKey := state.AttemptKeys(cur.N, role, part, k)
	if plan, ok := s.ext.resume(role, s.st.Usage.CallIndex(role, respKey)); ok {
		return plan, nil // planned when its call was asked for
	}
	msgs, stable, ex, err := s.buildPrompt(role, k, gaps, prev, rp.Context)
	if err != nil {
		return attemptPlan{}, fmt.Errorf("%s: build prompt: %w", where, err)
	}
	plan := attemptPlan{Role: role, Part: part, K: k, where: where, msgs: msgs, Example: ex, started: s.at()}
	plan.req = llm.Request{Role: role, Round: cur.N, Attempt: k, Call: s.st.Usage.CallIndex(role, respKey),
		Gaps: slices.Clone(gaps), Messages: msgs, MaxTokens: nextMaxTokens(s.cfg.MaxTokens, s.cfg.TokensCap(), prev), Stable: stable}
	if b, err := s.get(respKey); err == nil {
		// A journaled response from before a crash or pause: never pay twice.
		c := string(b)
		plan.journaled, plan.journaledFinish = &c, s.journaledFinish(respKey)
	} else if !errors.Is(err, store.ErrNotFound) {
		return attemptPlan{}, fmt.Errorf("%s: read response journal: %w", where, err)
	} else if res, ok := s.ext.take(plan.req); ok {
		plan.delivered = &res
	} else {
		// The driver makes the call. Its prompt, and everything staged
		// before it, is durable before the call: a crash during the call
		// loses nothing already paid for.
		s.stage(store.Put(promptKey, []byte(renderPrompt(where, msgs))))
		plan.needed = true
		s.keepPlan(plan)
		return plan, nil
	}
	s.startPlan(&plan)
	return plan, nil
}

// startEvent is the event that opens the attempt's scope.
func (plan attemptPlan) startEvent() Event {
	return Event{Kind: EventAttemptStarted, Role: plan.Role, Call: plan.req.Call, Attempt: plan.K, Gap: plan.Part, ExampleTier: plan.Example.Tier, Phase: plan.Phase}
}

// result is the plan's role call's result: the response journaled before
// a crash or pause, or what the driver delivered.
func (plan attemptPlan) result() RoleResult {
	if plan.journaled != nil {
		return RoleResult{Resp: llm.Response{Content: *plan.journaled, FinishReason: plan.journaledFinish}}
	}
	res := *plan.delivered
	if res.Err != nil {
		res.Err = res.Failure.wrap(plan.where, plan.req.Role, res.Err)
	}
	return res
}

// noteTransport records a transport retry the driver made (and reported
// as it happened).
func (s *Engine) noteTransport(n TransportNote) {
	s.st.Logged = append(s.st.Logged, state.LoggedEvent{Kind: state.LoggedTransportRetry, Round: n.Round, At: s.at(), Role: n.Role,
		Err: render.OneLine(n.Err.Error()), Try: n.Try, Delay: n.Delay})
	s.log.Warn("transient role error, backing off", "round", n.Round, "role", n.Role, "attempt", n.Attempt, "retry", n.Try, "delay", n.Delay, "err", n.Err)
}

// finishAttempt journals the raw response (capped at maxOutputBytes) and
// validates it; usage the backend did not report is estimated with tok,
// and now stamps the attempt. The caller records the outcome and commits
// its ops.
func finishAttempt(st *state.State, plan attemptPlan, res RoleResult, maxOutputBytes int, tok exemplar.Tokenizer, now func() time.Time) (attemptOutcome, error) {
	role, part, k := plan.Role, plan.Part, plan.K
	cur := st.Current
	out := attemptOutcome{example: plan.Example}
	if res.Err != nil {
		return attemptOutcome{}, res.Err
	}
	var usage llm.Usage
	out.content = res.Resp.Content
	if plan.journaled == nil {
		usage = res.Resp.Usage
		if usage == (llm.Usage{}) {
			// The backend reported nothing (a replay, some local servers):
			// estimate with the Tokenizer so status never shows a free call.
			for _, m := range plan.msgs {
				usage.PromptTokens += tok.Count(m.Content)
			}
			usage.CompletionTokens = tok.Count(res.Resp.Content)
			out.estimated = true
		}
		out.content = capOutput(out.content, maxOutputBytes)
		// The journal never holds more than the limit; validation fails
		// the attempt as WRONG_FORMAT from the full size.
		_, respKey := state.AttemptKeys(cur.N, role, part, k)
		out.ops = append(out.ops, journalResponse(respKey, out.content, res.Resp.FinishReason, maxOutputBytes)...)
	}
	finish := res.Resp.FinishReason
	if validate.ContextExceeded(finish) {
		return attemptOutcome{}, contextExceeded(plan.where, finish, plan.msgs, tok)
	}

	vr := validateOutput(st, role, out.content, finish, maxOutputBytes)
	out.result = vr
	out.rec = state.AttemptRec{N: k, At: now(), Success: vr.Success, FailureType: vr.FailureType, Tier: string(vr.Tier),
		Line: vr.Line, Message: vr.Message, Warnings: vr.Warnings, Usage: usage, Calls: res.Calls, UsageEstimated: out.estimated,
		Model: res.Resp.Model, MaxTokens: plan.req.MaxTokens, FinishReason: finish, Normalized: state.NormalizedQuirks(vr.Normalized)}
	out.finishReason = finish
	return out, nil
}

// validateOutput validates a role's output in the round in progress, an
// answer that ended for finish, against the ledger, the issues raised and
// the decisions recorded.
func validateOutput(st *state.State, role llm.RoleName, content, finish string, maxOutputBytes int) validate.Result {
	opts := validate.Options{KnownGaps: st.Ledger.IDs(), KnownIssues: st.IssueIDs(), Round: st.Current.N, MaxOutputBytes: maxOutputBytes}
	decided := slices.Clone(st.ConflictDecisions)
	for _, d := range decided {
		opts.ResolvedIssues = append(opts.ResolvedIssues, d.IssueID)
	}
	opts.FinishReason = finish
	if role != llm.Engineer {
		return readAnswer(content, finish, maxOutputBytes, func(c string) validate.Result { return validate.Reviewer(c, opts) })
	}
	res := readAnswer(content, finish, maxOutputBytes, func(c string) validate.Result { return validate.Engineer(c, opts) })
	// The decisions hold the answer as read: a quirk of form neither
	// hides nor invents a re-argued conflict.
	return complianceCheck(res, readText(res, content), decided)
}

// readText is the text of an answer as its validation read it: the
// normalized text, or the answer itself when validation kept none.
func readText(res validate.Result, content string) string {
	if res.Text != "" {
		return res.Text
	}
	return content
}

// capOutput keeps at most limit (MaxOutputBytes) bytes, plus one so
// validation still sees that the output was too large, of a role's
// response: the journal never holds more than the limit.
func capOutput(content string, limit int) string {
	if limit > 0 && len(content) > limit+1 {
		return content[:limit+1]
	}
	return content
}

// endAttempt closes the attempt's scope and reports it finished: its
// validation verdict, or err when the attempt could not be played.
func (s *Engine) endAttempt(plan attemptPlan, out attemptOutcome, err error) {
	e := Event{Kind: EventAttemptFinished, Role: plan.Role, Call: plan.req.Call, Attempt: plan.K, Gap: plan.Part, ExampleTier: plan.Example.Tier,
		Elapsed: s.at().Sub(plan.started), FailureType: out.rec.FailureType, Message: out.rec.Message,
		Model: out.rec.Model, FinishReason: out.finishReason, AttemptUsage: out.rec.Usage, Success: out.rec.Success}
	if err != nil {
		e.FailureType, e.Message, e.Err = validate.ExecutionError, err.Error(), err
	}
	s.emit(e)
}

// complianceCheck holds a valid Engineer output to the recorded decisions
// (FLOW-006 §5): re-arguing a decided conflict is the retriable failure
// RE_ARGUED_CONFLICT, quoting the decision; a repeated position is a warning.
func complianceCheck(res validate.Result, content string, decided []conflict.Ruling) validate.Result {
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

// recordAttempt appends the attempt and its fact in the attempt log (from
// which the validation and error tables are rendered), on the session's
// goroutine, and prepares the retry a failed attempt with budget left
// gets.
func (s *Engine) recordAttempt(role llm.RoleName, part string, attempts *[]state.AttemptRec, out attemptOutcome) {
	cur := s.st.Current
	rec := out.rec
	*attempts = append(*attempts, rec)
	s.st.Usage.Add(role, rec.Usage, rec.Calls)
	_, respKey := state.AttemptKeys(cur.N, role, part, rec.N)
	delete(s.st.Usage.InFlight, respKey)
	fact := newAttemptFact(cur.N, role, part, rec, out.result)
	if !rec.Success {
		s.emit(Event{Kind: EventValidationFailed, Role: role, Attempt: rec.N, Gap: part, FailureType: rec.FailureType, Message: rec.Message})
	}
	s.st.AttemptLog = append(s.st.AttemptLog, fact)
	factAt := len(s.st.AttemptLog) - 1
	settleExampleOutcome(s.st, cur.N, role, rec)
	settleLegacyRetry(s.st, cur.N, role, part, rec)
	if !rec.Success && rec.Free && part == "" {
		// Re-asked without spending the retry budget; a part's budget
		// counts its free attempts (budgetFor).
		cur.Role(role).Budget++
	}
	if !rec.Success && rec.N < budgetFor(s.st, role, part, s.cfg.MaxRetries) {
		s.prepareRetry(role, part, rec, factAt)
	}
}

// newAttemptFact is the attempt log's fact for attempt rec of role (of
// part, when drafted in parallel) in round n.
func newAttemptFact(n int, role llm.RoleName, part string, rec state.AttemptRec, res validate.Result) state.AttemptFact {
	fact := state.AttemptFact{Round: n, Role: role, Part: part, N: rec.N, At: rec.At, Success: rec.Success, Normalized: rec.Normalized}
	if rec.Success {
		fact.Summary = contentSummary(role, res)
		return fact
	}
	msg := rec.Message
	if rec.Line > 0 && !strings.Contains(msg, "line ") {
		msg = fmt.Sprintf("line %d: %s", rec.Line, msg)
	}
	fact.Tier, fact.FailureType, fact.Message = rec.Tier, rec.FailureType, render.OneLine(msg)
	return fact
}

// settleExampleOutcome gives the example logged for the retry attempt rec
// answered its outcome.
func settleExampleOutcome(st *state.State, n int, role llm.RoleName, rec state.AttemptRec) {
	for i := len(st.ExampleLog) - 1; i >= 0 && rec.N > 1; i-- {
		e := &st.ExampleLog[i]
		if e.Round == n && e.Role == role && e.Retry == rec.N-1 && e.Outcome == exemplar.OutcomePending {
			e.Outcome = exemplar.OutcomeFailed
			if rec.Success {
				e.Outcome = exemplar.OutcomeSuccess
			}
			return
		}
	}
}

// settleLegacyRetry: a session started before the attempt log keeps its
// round's retry rows; the one attempt rec answered gets its outcome.
func settleLegacyRetry(st *state.State, n int, role llm.RoleName, part string, rec state.AttemptRec) {
	for i := range st.LegacyRetries {
		if d := &st.LegacyRetries[i]; d.Round == n && d.Role == role && d.Part == part && d.Retry == rec.N-1 && d.Outcome == "pending" {
			d.Outcome = "Failed again (" + string(rec.FailureType) + ")"
			if rec.Success {
				d.Outcome = "Success on retry"
			}
		}
	}
}

// prepareRetry selects the example the retry after the failed attempt rec
// attaches, logs it on the attempt's fact (at factAt) and in the example
// log, and announces the retry.
func (s *Engine) prepareRetry(role llm.RoleName, part string, rec state.AttemptRec, factAt int) {
	cur := s.st.Current
	sel, err := s.example(role, rec.FailureType, s.cfg.RetryExampleBudget)
	label := exampleLabel(sel)
	if err != nil {
		label = "unavailable: " + err.Error()
	} else {
		// Selected once: the retry prompt attaches this very example.
		if s.chosenExamples == nil {
			s.chosenExamples = map[string]exemplar.Selection{}
		}
		s.chosenExamples[retryExampleKey(cur.N, role, rec.N+1, rec.FailureType)] = sel
		entry := exemplar.NewLogEntry(cur.N, role, rec.N, rec.FailureType, sel)
		entry.Outcome = exemplar.OutcomePending
		s.st.ExampleLog = append(s.st.ExampleLog, entry)
	}
	s.st.AttemptLog[factAt].Retry = &state.RetryFact{Modification: retry.Label(rec.FailureType), Example: label}
	s.emit(Event{Kind: EventRetry, Role: role, Attempt: rec.N + 1, Gap: part, FailureType: rec.FailureType})
}

// budgetFor is how many attempts role (a part of it, when drafted in
// parallel) has in the round in progress.
func budgetFor(st *state.State, role llm.RoleName, part string, maxRetries int) int {
	if part != "" {
		return partBudget(st.Current.Engineer.Part(gap.ID(part)).Attempts, maxRetries)
	}
	return st.Current.Role(role).Budget
}

// partBudget is how many attempts a part of parallel drafting whose
// attempts so far are attempts has: 1 + maxRetries, plus its free
// re-asks.
func partBudget(attempts []state.AttemptRec, maxRetries int) int {
	n := 1 + maxRetries
	for _, a := range attempts {
		if a.Free {
			n++
		}
	}
	return n
}

func contentSummary(role llm.RoleName, r validate.Result) string {
	if role == llm.Engineer {
		n := len(r.GapsAddressed)
		return fmt.Sprintf("%d gap%s addressed", n, render.Plural(n))
	}
	if r.NoIssuesFound && len(r.Issues) == 0 {
		return "NO_ISSUES_FOUND"
	}
	n := len(r.Issues)
	return fmt.Sprintf("%d issue%s, verdict %s", n, render.Plural(n), r.Verdict)
}

func idStrings(ids []gap.ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

func renderPrompt(where string, msgs []llm.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- refine prompt: %s -->\n", where)
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n<!-- %s -->\n%s\n", m.Role, m.Content)
	}
	return b.String()
}
