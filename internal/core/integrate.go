package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// The integration step (DESIGN §16).
//
// After a terminal outcome that keeps the session's work (COMPLETE,
// USER_APPROVED, GOOD_ENOUGH, MAX_ROUNDS, STALL_EXIT), the Engineer's next
// call writes the whole refined spec from the source spec, each accepted
// gap's final resolution, the decisions in force and the open gaps. Its
// output is validated (validate.Integration) and retried with the
// failure's notice like any output; a valid one gets one consistency
// review by the Reviewer, whose CRITICAL/HIGH issues give one more
// integration attempt with the issues attached; what remains is asked as
// an escalation. final_spec.md is then the integrated spec, or the
// appendix form written when the session ended, headed by a line saying
// why integration failed. The outcome never changes.
//
// Every call is journaled under final/ (prompts/, attempts/) and numbered
// as the role's next call, so a crash repeats at most the call in flight
// and a replay picks the recording's next file; a Role with no response
// for the call (ErrNoResponse: a recording or script that ends with the
// rounds) gives the appendix form with a note.

// EventIntegrated reports how final_spec.md was written; Message says
// which form and why.
const EventIntegrated EventKind = "integrated"

// keepsWork reports whether an outcome's session is integrated.
func keepsWork(o OutcomeStatus) bool {
	switch o {
	case StatusComplete, StatusUserApproved, StatusGoodEnough, StatusMaxRounds, StatusStallExit:
		return true
	}
	return false
}

// integrationLimits are the Config values the integration's decisions
// depend on, with the session's tokenizer.
type integrationLimits struct {
	tok exemplar.Tokenizer
	// cap is the integration prompt's cap in tokens: twice the round
	// prompts' budget, since it is the one prompt that carries the whole
	// spec and every resolution.
	cap            int
	maxRetries     int
	maxOutputBytes int
}

func limitsOf(cfg Params, tok exemplar.Tokenizer) integrationLimits {
	return integrationLimits{tok: tok, cap: 2 * cfg.PromptBudget, maxRetries: cfg.MaxRetries, maxOutputBytes: cfg.MaxOutputBytes}
}

// NewIntegration is the integration step a session that ends with st's
// outcome starts with: none when the outcome keeps no work, the appendix
// form when integration is off (the one finalOps writes stands), else the
// Engineer's first attempts, with the decisions in force.
func NewIntegration(st *state.State, integrate bool, maxRetries int) *state.IntegrationState {
	if !keepsWork(st.Outcome) {
		return nil
	}
	if !integrate {
		return &state.IntegrationState{Step: state.IntegDone, Round: st.Round, Form: state.FinalSpecAppendix,
			Reason: "integration is off (Settings.Integrate false, --no-integrate)"}
	}
	if st.Discovery != nil && len(st.Ledger.Gaps) == 0 {
		// Discovery found nothing to refine, and the person confirmed it.
		return &state.IntegrationState{Step: state.IntegDone, Round: st.Round, Form: state.FinalSpecAppendix,
			Reason: "the session had no gap to refine: the spec stands as it is"}
	}
	in := &state.IntegrationState{Step: state.IntegEngineer, Round: st.Round, EngineerBudget: 1 + maxRetries}
	for _, d := range st.Decisions {
		if discoveryDecision(d) {
			continue
		}
		in.Decisions = append(in.Decisions, d.ID)
	}
	for _, d := range st.ConflictDecisions {
		in.Decisions = append(in.Decisions, d.ID)
	}
	slices.SortFunc(in.Decisions, CompareDecisionIDs)
	return in
}

// integrationStartOps sets up the integration step as the session ends
// (finish): a previous integration's files (a session rolled back after
// it finished) are deleted in the same commit.
func (s *Engine) integrationStartOps() ([]store.Op, error) {
	s.st.Integration = NewIntegration(s.st, s.cfg.Integrate, s.cfg.MaxRetries)
	switch in := s.st.Integration; {
	case in == nil:
		return nil, nil
	case in.Step == state.IntegDone:
		return []store.Op{store.Delete(state.KeyFinalTrace)}, nil
	}
	old, err := s.out.List("final/")
	if err != nil {
		return nil, fmt.Errorf("integration: list final/: %w", err)
	}
	ops := []store.Op{store.Delete(state.KeyFinalTrace)}
	for _, k := range old {
		ops = append(ops, store.Delete(k))
	}
	return ops, nil
}

// dropIntegrationQuestions drops the integration's question, if one
// waits, and its answers: integration was turned off.
func dropIntegrationQuestions(st *state.State) {
	st.Pending = slices.DeleteFunc(st.Pending, isIntegrationQuestion)
	for id := range st.Answers {
		if strings.HasPrefix(id, integQuestionPrefix) {
			delete(st.Answers, id)
		}
	}
}

// integrate plays the integration step until final_spec.md is written or
// a question waits; paused is true in the latter case.
func (s *Engine) integrate() (paused bool, err error) {
	in := s.st.Integration
	if in != nil && in.Step != state.IntegDone && !s.cfg.Integrate {
		dropIntegrationQuestions(s.st)
		return false, s.integrationDone(state.FinalSpecAppendix, "integration was turned off before it finished (Settings.Integrate false, --no-integrate)")
	}
	for in != nil && in.Step != state.IntegDone {
		var st stop
		var why string
		switch in.Step {
		case state.IntegEngineer:
			why, err = s.integrationEngineer()
		case state.IntegReview:
			err = s.integrationReview()
		case state.IntegAsk:
			st, err = s.integrationAsk()
		default:
			return false, fmt.Errorf("integration: %w: unknown step %q in state.json", store.ErrCorrupt, in.Step)
		}
		if err == nil && why != "" {
			if integrationStopped(in, why) {
				err = s.integrationDone(state.FinalSpecAppendix, why)
			} else {
				s.stage()
			}
		}
		if err != nil || st == waitForAnswer {
			return st == waitForAnswer, err
		}
	}
	return false, nil
}

// IntegrationMaterial is what the integration merges.
type IntegrationMaterial struct {
	Source      string
	Accepted    []gap.Gap
	Resolutions []validate.Resolution
	decisions   []string // "ID (what was asked): what was decided"
	limits      []convergence.Limitation
}

func (m IntegrationMaterial) ids() []gap.ID {
	out := make([]gap.ID, len(m.Accepted))
	for i, g := range m.Accepted {
		out[i] = g.ID
	}
	return out
}

// input is what an integration of the whole material is validated
// against.
func (m IntegrationMaterial) input(maxOutputBytes int, decisions []string) validate.IntegrationInput {
	in := validate.IntegrationInput{Source: m.Source, Resolutions: m.Resolutions, Decisions: decisions, MaxOutputBytes: maxOutputBytes}
	in.Limitations, in.OpenIssues = limitationIDs(m.limits)
	return in
}

func (s *Engine) integrationMaterial() (IntegrationMaterial, error) {
	var m IntegrationMaterial
	src, err := s.source()
	if err != nil {
		return m, fmt.Errorf("integration: %w", err)
	}
	m.Source = src
	m.Accepted = s.st.Ledger.InState(gap.Accepted)
	texts, err := s.finalResolutions(m.ids())
	if err != nil {
		return m, fmt.Errorf("integration: %w", err)
	}
	for _, g := range m.Accepted {
		m.Resolutions = append(m.Resolutions, validate.Resolution{ID: g.ID, Text: texts[g.ID]})
	}
	m.decisions = decisionLines(s.st, s.st.Integration.Decisions)
	m.limits = knownLimitations(s.st) // limitations.go
	return m, nil
}

// decisionLines describes st's decisions with the given IDs (all when ids
// is nil), in ID order: user decisions and conflict decisions alike.
func decisionLines(st *state.State, ids []string) []string {
	want := func(id string) bool { return ids == nil || slices.Contains(ids, id) }
	type line struct{ id, text string }
	var lines []line
	for _, d := range st.Decisions {
		if want(d.ID) && !discoveryDecision(d) {
			what := d.Question
			if d.Issue != "" {
				what = d.Issue + ", " + what
			}
			lines = append(lines, line{d.ID, fmt.Sprintf("%s (round %d, %s): %s", d.ID, d.Round, render.OneLine(what), render.OneLine(d.Decision))})
		}
	}
	for _, d := range st.ConflictDecisions {
		if want(d.ID) {
			lines = append(lines, line{d.ID, fmt.Sprintf("%s (round %d, conflict over %s on %s): option %s: %s", d.ID, d.Round, d.IssueID, render.Dash(string(d.Gap)), d.ChosenOption, render.OneLine(d.Decision))})
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int { return CompareDecisionIDs(a.id, b.id) })
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// countMessages is a prompt's size in tokens.
func countMessages(tok exemplar.Tokenizer, msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += tok.Count(m.Content)
	}
	return n
}

// newIntegrationData fills the integration prompt of the whole spec.
func newIntegrationData(st *state.State, m IntegrationMaterial) *integrationData {
	in := st.Integration
	d := &integrationData{Outcome: st.Outcome, Round: in.Round, Source: strings.TrimSpace(m.Source), Decisions: m.decisions}
	d.SourceFence = fenceFor(d.Source)
	material := utf8.RuneCountInString(m.Source)
	for i, g := range m.Accepted {
		text := strings.TrimSpace(m.Resolutions[i].Text)
		material += utf8.RuneCountInString(m.Resolutions[i].Text)
		d.Resolutions = append(d.Resolutions, integrationResolution{ID: g.ID, Title: g.Title, Text: text, Fence: fenceFor(text)})
	}
	d.MinChars = int(validate.IntegrationMinSize*float64(material)) + 1
	d.MaxChars = int(validate.IntegrationMaxSize * float64(material))
	for _, l := range m.limits {
		d.Limitations = append(d.Limitations, l)
	}
	for _, is := range in.Issues {
		if is.Severity.AtLeastHigh() {
			d.Issues = append(d.Issues, PromptIssue{ID: is.ID, Summary: is.Summary, Location: is.Location, Impact: is.Impact, Suggestion: is.Suggestion, Severity: is.Severity, Gap: is.Gap})
		}
	}
	return d
}

// nextAttempt numbers a role's next integration attempt and names the
// failed attempt its retry notice answers (nil: the first of its run).
func nextAttempt(recs []state.AttemptRec, from int) (k int, prev *state.AttemptRec) {
	k = len(recs) + 1
	if k-1 > from {
		prev = &recs[k-2]
	}
	return k, prev
}

// integrationCheck validates an integration attempt's output against
// check (readAnswer reads its finish reason and an empty answer first).
func integrationCheck(check validate.IntegrationInput) func(string) validate.Result {
	return func(content string) validate.Result {
		return validate.Integration(content, check).Result
	}
}

// integrationEngineer plays the Engineer's integration attempts until one
// is valid or the attempts allowed are spent; stopped says why they end
// early (see IntegrationState.Stopped).
func (s *Engine) integrationEngineer() (stopped string, err error) {
	in := s.st.Integration
	m, err := s.integrationMaterial()
	if err != nil {
		return "", err
	}
	if in.PartsMode {
		return s.integrationParts(m)
	}
	lim := limitsOf(s.cfg, s.tok)
	d := newIntegrationData(s.st, m)
	check := m.input(lim.maxOutputBytes, in.Decisions)
	for len(in.Engineer) < in.EngineerBudget {
		k, prev := nextAttempt(in.Engineer, in.EngineerFrom)
		msgs, stable, err := integrationMessages(d, k-in.EngineerFrom, in.EngineerBudget-in.EngineerFrom, prev)
		if err != nil {
			return "", fmt.Errorf("integration: %w", err)
		}
		if n := countMessages(lim.tok, msgs); n > lim.cap {
			if startParts(in) {
				return s.integrationParts(m)
			}
			return fmt.Sprintf("the source spec and its %d accepted resolutions make a %d-token prompt, above the integration cap of %d tokens (twice PromptBudget); raise PromptBudget to integrate",
				len(m.Accepted), n, lim.cap), nil
		}
		at, err := s.integrationCall(llm.Engineer, k, msgs, stable, m.ids(), integrationCheck(check))
		if errors.Is(err, llm.ErrNoResponse) {
			return fmt.Sprintf("the Engineer has no response for the integration call (Engineer call %d: %s)", s.st.Usage.NextCall[string(llm.Engineer)]+1, roleError(err)), nil
		}
		if err != nil {
			return "", err
		}
		if engineerSettled(in, at.rec, lim.maxRetries) {
			_, respKey := state.FinalAttemptKeys(llm.Engineer, k)
			s.stage(append(at.ops, s.acceptOp(state.FinalOutputKey(llm.Engineer), respKey, at.content, at.vr))...)
			return "", nil
		}
		s.stage(at.ops...)
	}
	engineerSpent(in)
	s.stage()
	return "", nil
}

// startParts switches to integration part by part when the whole prompt
// is above the cap before any attempt; false: too late for that.
func startParts(in *state.IntegrationState) bool {
	if in.Accepted == 0 && len(in.Engineer) == 0 {
		in.PartsMode = true
		return true
	}
	return false
}

// engineerSettled records an Engineer attempt of the whole spec; a valid
// one is accepted and goes to its consistency review (true).
func engineerSettled(in *state.IntegrationState, rec state.AttemptRec, maxRetries int) (accepted bool) {
	in.Engineer = append(in.Engineer, rec)
	if !rec.Success {
		return false
	}
	in.Accepted, in.Step = rec.N, state.IntegReview
	in.ReviewerFrom, in.ReviewerBudget = len(in.Reviewer), len(in.Reviewer)+1+maxRetries
	return true
}

// engineerSpent ends the Engineer's attempts, all failed: the user is
// asked.
func engineerSpent(in *state.IntegrationState) {
	last := in.Engineer[len(in.Engineer)-1]
	if in.Accepted > 0 {
		in.Notes = append(in.Notes, fmt.Sprintf("the integration retry after the consistency review failed validation (%s: %s); the integration it was to fix stands", last.FailureType, render.OneLine(last.Message)))
	}
	in.Step = state.IntegAsk
}

// Stopped ends the Engineer's attempts for why: the appendix form (true),
// unless an integration already validated (the retry after a consistency
// review), which then goes to the user with its issues.
func integrationStopped(in *state.IntegrationState, why string) (appendix bool) {
	if in.Accepted == 0 {
		return true
	}
	in.Notes = append(in.Notes, "the integration retry after the consistency review was not made: "+why)
	in.Step = state.IntegAsk
	return false
}

// newConsistencyData fills the consistency review's prompt for spec, with
// the accepted gaps it must hold.
func newConsistencyData(st *state.State, spec string) (*consistencyData, []gap.ID) {
	in := st.Integration
	d := &consistencyData{Decisions: decisionLines(st, in.Decisions), IssuePrefix: fmt.Sprintf("ISSUE-R%d-", in.ReviewRound()),
		EngineerOutput: spec, Fence: fenceFor(spec)}
	var ids []gap.ID
	for _, g := range st.Ledger.InState(gap.Accepted) {
		d.Gaps = append(d.Gaps, PromptGap{ID: g.ID, Title: g.Title, Severity: g.Severity, State: g.State})
		ids = append(ids, g.ID)
	}
	return d, ids
}

// reviewCheck validates a consistency review of st's integration
// (readAnswer reads its finish reason and an empty answer first).
func reviewCheck(st *state.State, maxOutputBytes int) func(string) validate.Result {
	return func(content string) validate.Result {
		return validate.Reviewer(content, validate.Options{KnownGaps: st.Ledger.IDs(), Round: st.Integration.ReviewRound(), MaxOutputBytes: maxOutputBytes})
	}
}

// integrationReview plays the consistency review of the accepted
// integration.
func (s *Engine) integrationReview() error {
	in := s.st.Integration
	specKey := in.SpecKey()
	spec, err := s.get(specKey)
	if err != nil {
		return fmt.Errorf("integration: read %s: %w", specKey, err)
	}
	lim := limitsOf(s.cfg, s.tok)
	d, ids := newConsistencyData(s.st, string(spec))
	for len(in.Reviewer) < in.ReviewerBudget {
		k, prev := nextAttempt(in.Reviewer, in.ReviewerFrom)
		msgs, stable, err := consistencyMessages(d, k-in.ReviewerFrom, in.ReviewerBudget-in.ReviewerFrom, prev)
		if err != nil {
			return fmt.Errorf("integration: %w", err)
		}
		if n := countMessages(lim.tok, msgs); n > lim.cap {
			in.Notes = append(in.Notes, fmt.Sprintf("no consistency review: the spec makes a %d-token review prompt, above the cap of %d", n, lim.cap))
			return s.integrationDone(state.FinalSpecIntegrated, "")
		}
		at, err := s.integrationCall(llm.Reviewer, k, msgs, stable, ids, reviewCheck(s.st, lim.maxOutputBytes))
		if errors.Is(err, llm.ErrNoResponse) {
			in.Notes = append(in.Notes, fmt.Sprintf("no consistency review: the Reviewer has no response for it (Reviewer call %d: %s)", s.st.Usage.NextCall[string(llm.Reviewer)]+1, roleError(err)))
			return s.integrationDone(state.FinalSpecIntegrated, "")
		}
		if err != nil {
			return err
		}
		in.Reviewer = append(in.Reviewer, at.rec)
		if !at.vr.Success {
			s.stage(at.ops...)
			continue
		}
		_, respKey := state.FinalAttemptKeys(llm.Reviewer, k)
		s.stage(append(at.ops, s.acceptOp(state.FinalOutputKey(llm.Reviewer), respKey, at.content, at.vr))...)
		if integrationReviewed(in, at.vr.Issues) {
			return s.integrationDone(state.FinalSpecIntegrated, "")
		}
		return nil
	}
	reviewSpent(in)
	return s.integrationDone(state.FinalSpecIntegrated, "")
}

// Reviewed records a valid consistency review's issues and decides what
// follows: done (true) when none is CRITICAL/HIGH, else one more
// integration attempt with the issues attached, or, that one made, the
// user's decision.
func integrationReviewed(in *state.IntegrationState, issues []validate.Issue) (done bool) {
	in.Reviews++
	in.Issues = nil
	for _, is := range issues {
		in.Issues = append(in.Issues, conflict.Issue{ID: is.ID, Round: in.ReviewRound(), Severity: is.Severity, Gap: is.Gap,
			Summary: is.Summary, Location: is.Location, Impact: is.Impact, Suggestion: is.Suggestion})
	}
	switch {
	case len(highIssues(in.Issues)) == 0:
		return true
	case !in.Retried:
		// One more integration attempt, with the issues attached.
		in.Retried = true
		in.EngineerFrom, in.EngineerBudget = len(in.Engineer), len(in.Engineer)+1
		in.Step = state.IntegEngineer
	default:
		in.Step = state.IntegAsk
	}
	return false
}

// reviewSpent notes that every consistency review attempt failed
// validation: the integrated spec stands unreviewed.
func reviewSpent(in *state.IntegrationState) {
	last := in.Reviewer[len(in.Reviewer)-1]
	in.Notes = append(in.Notes, fmt.Sprintf("the consistency review failed validation %d times (last: %s); the integrated spec is unreviewed", len(in.Reviewer)-in.ReviewerFrom, last.FailureType))
}

// roleError is a role's error without the attempt's prefixes, one line.
func roleError(err error) string {
	msg := err.Error()
	for _, p := range []string{"integration engineer attempt ", "integration reviewer attempt "} {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			if _, after, ok := strings.Cut(rest, ": "); ok {
				msg = after
				if _, after, ok := strings.Cut(msg, ": "); ok && (strings.HasPrefix(msg, "engineer:") || strings.HasPrefix(msg, "reviewer:")) {
					msg = after
				}
			}
		}
	}
	return render.OneLine(strings.TrimSuffix(msg, " ("+llm.ErrNoResponse.Error()+")"))
}

func highIssues(issues []conflict.Issue) []conflict.Issue {
	var out []conflict.Issue
	for _, is := range issues {
		if is.Severity.AtLeastHigh() {
			out = append(out, is)
		}
	}
	return out
}

// integQuestionPrefix starts the IDs of the integration's questions.
const integQuestionPrefix = "final-integration-"

func isIntegrationQuestion(q question.Question) bool {
	return strings.HasPrefix(q.ID, integQuestionPrefix)
}

// Integration escalation options.
const (
	IntegKeyAccept   = "accept"
	IntegKeyRetry    = "retry"
	IntegKeyAppendix = "appendix"
	integKeyPause    = "pause"
)

// integrationAsk escalates to the user: after a consistency review whose
// CRITICAL/HIGH issues the retry did not fix, or after every integration
// attempt failed validation.
func (s *Engine) integrationAsk() (stop, error) {
	q := integrationQuestion(s.st, s.cfg.MaxRetries)
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return waitIf(paused), err
	}
	opt, _ := q.Option(a.Key)
	if opt.Key == integKeyPause {
		// Offer the same decision again when the session resumes.
		s.st.Pending = append(s.st.Pending, q)
		recordDecision(s.st, s.at(), s.st.Round, "", q, a, opt.Label)
		return waitForAnswer, s.checkpoint()
	}
	form, why := integrationAnswered(s.st.Integration, opt.Key, s.cfg.MaxRetries)
	recordDecision(s.st, s.at(), s.st.Round, "", q, a, opt.Label)
	if form == "" {
		s.stage()
		return goOn, nil
	}
	return goOn, s.integrationDone(form, why)
}

// Answered applies the user's answer to the integration's escalation
// (any option but pause): the form final_spec.md takes and why, or no
// form when the Engineer integrates again.
func integrationAnswered(in *state.IntegrationState, key string, maxRetries int) (form, why string) {
	in.Asked++
	switch key {
	case IntegKeyAccept:
		in.KnownIssues = highIssues(in.Issues)
		return state.FinalSpecIntegrated, ""
	case IntegKeyRetry:
		in.EngineerFrom = len(in.Engineer)
		in.EngineerBudget = len(in.Engineer) + 1
		if in.Accepted == 0 {
			in.EngineerBudget += maxRetries
			// The run takes the last failed attempt in: the first new
			// attempt's retry notice says what failed (#40 item 2d).
			in.EngineerFrom--
		}
		in.Step = state.IntegEngineer
		return "", ""
	}
	why = "the user kept the appendix form"
	if in.Accepted == 0 {
		last := in.Engineer[len(in.Engineer)-1]
		why = fmt.Sprintf("the integration failed validation %d times (last: %s: %s) and %s", len(in.Engineer), last.FailureType, render.OneLine(last.Message), why)
	} else {
		why = fmt.Sprintf("the consistency review found %s and %s", issueList(highIssues(in.Issues)), why)
	}
	return state.FinalSpecAppendix, why
}

// integrationQuestion words the integration's escalation.
func integrationQuestion(st *state.State, maxRetries int) question.Question {
	if st.Integration.Accepted == 0 {
		return integrationFailedQuestion(st, maxRetries)
	}
	return integrationIssuesQuestion(st)
}

// integrationFailedQuestion asks what to do when every integration
// attempt failed validation.
func integrationFailedQuestion(st *state.State, maxRetries int) question.Question {
	in := st.Integration
	var b strings.Builder
	last := in.Engineer[len(in.Engineer)-1]
	fmt.Fprintf(&b, "The session ended %s. Writing the refined spec (integration) failed validation %d time(s); the last attempt failed with %s:\n\n> %s\n\n",
		st.Outcome, len(in.Engineer), last.FailureType, render.OneLine(last.Message))
	b.WriteString("final_spec.md holds the appendix form (the source spec with the accepted resolutions appended) until you decide.\n\n=== Options ===\n")
	opts := []question.Option{
		{Key: IntegKeyAppendix, Label: "Keep the appendix form", Effect: "final_spec.md stays the source spec with the resolutions appended, headed by a note on why", Recommended: true},
		{Key: IntegKeyRetry, Label: fmt.Sprintf("Retry the integration (%d more attempts)", 1+maxRetries), Effect: "The Engineer writes the spec again; a valid one is reviewed"},
		{Key: integKeyPause, Label: "Pause - decide later", Effect: "The session waits; the outcome stays " + string(st.Outcome)},
	}
	q := question.Question{ID: fmt.Sprintf("%s%d", integQuestionPrefix, in.Asked+1), Kind: question.KindEscalation, Round: st.Round, Title: "Integration of the final spec failed validation", Options: opts, Default: IntegKeyAppendix}
	q.Body = b.String() + question.Menu(opts)
	return q
}

// integrationIssuesQuestion asks what to do with the CRITICAL/HIGH issues
// a consistency review left.
func integrationIssuesQuestion(st *state.State) question.Question {
	in := st.Integration
	var b strings.Builder
	high := highIssues(in.Issues)
	fmt.Fprintf(&b, "The session ended %s. The refined spec was written (final/engineer.md), but its consistency review found %d CRITICAL/HIGH issue(s)", st.Outcome, len(high))
	if in.Retried {
		b.WriteString(" that one more integration attempt did not fix")
	}
	b.WriteString(":\n\n")
	for _, is := range high {
		fmt.Fprintf(&b, "- **%s** (%s): %s\n", is.ID, is.Severity, render.OneLine(is.Summary))
	}
	b.WriteString("\n=== Options ===\n")
	opts := []question.Option{
		{Key: IntegKeyAccept, Label: "Accept the integrated spec, listing these issues as known limitations", Effect: "final_spec.md is the integrated spec; the issues are listed under its Known Limitations", Recommended: true},
		{Key: IntegKeyRetry, Label: "Retry the integration once more with the issues attached", Effect: "The Engineer writes the spec again; the Reviewer checks it again"},
		{Key: IntegKeyAppendix, Label: "Keep the appendix form", Effect: "final_spec.md stays the source spec with the resolutions appended, headed by a note on why"},
		{Key: integKeyPause, Label: "Pause - decide later", Effect: "The session waits; the outcome stays " + string(st.Outcome)},
	}
	if in.Merged {
		// A spec integrated part by part is not integrated again with
		// the issues attached.
		opts = slices.DeleteFunc(opts, func(o question.Option) bool { return o.Key == IntegKeyRetry })
	}
	q := question.Question{ID: fmt.Sprintf("%s%d", integQuestionPrefix, in.Asked+1), Kind: question.KindEscalation, Round: st.Round, Title: "Integrated spec: the consistency review found issues", Options: opts, Default: IntegKeyAccept}
	q.Body = b.String() + question.Menu(opts)
	return q
}

func issueList(issues []conflict.Issue) string {
	ids := make([]string, len(issues))
	for i, is := range issues {
		ids[i] = is.ID + " (" + is.Severity.String() + ")"
	}
	return strings.Join(ids, ", ")
}
