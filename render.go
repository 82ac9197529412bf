package refine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/rollback"
)

// ts formats a time as the spec's ISO 8601 UTC timestamp (round-09 §6).
func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// renderStatus renders status.md from state: gaps, validation log, errors,
// and usage. It is a rendering only; nothing is parsed back from it.
func (s *Session) renderStatus() string {
	st := s.st
	var b strings.Builder
	fmt.Fprintf(&b, "# Session Status\n\n")
	fmt.Fprintf(&b, "- **Session:** %s\n- **Round:** %d completed", st.SessionID, st.Round)
	if st.Current != nil {
		fmt.Fprintf(&b, " (round %d in progress: %s)", st.Current.N, st.Current.Phase)
	}
	outcome := string(st.Outcome)
	if outcome == "" {
		outcome = "RUNNING"
	}
	switch {
	case onlyCleanupPending(st):
		outcome += " (the archive cleanup question waits for an answer)"
	case len(st.Pending) > 0:
		outcome = "PAUSED (waiting for an answer)"
	}
	fmt.Fprintf(&b, "\n- **Outcome:** %s\n", outcome)
	if st.OutcomeReason != "" {
		fmt.Fprintf(&b, "- **Reason:** %s\n", st.OutcomeReason)
	}
	fmt.Fprintf(&b, "- **Updated:** %s\n", ts(st.UpdatedAt))

	open := len(st.Ledger.Open())
	fmt.Fprintf(&b, "\n## Gaps\n\n%d open, %d closed\n\n| ID | Title | Severity | State | Since |\n|----|-------|----------|-------|-------|\n", open, len(st.Ledger.Gaps)-open)
	for _, g := range st.Ledger.Gaps {
		since := "round 0"
		if n := len(g.History); n > 0 {
			since = fmt.Sprintf("round %d", g.History[n-1].Round)
		} else if g.Round > 0 {
			since = fmt.Sprintf("round %d", g.Round)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", g.ID, cell(g.Title), g.Severity, g.State, since)
	}

	if len(st.Pending) > 0 {
		b.WriteString("\n## Pending Questions\n\n")
		for _, q := range st.Pending {
			renderQuestion(&b, q)
		}
	}

	recent := s.recentFrom()
	if recent > 1 {
		fmt.Fprintf(&b, "\nRounds 1-%d are summarised in round_NNN/summary.md; the tables below show the last %d rounds.\n", recent-1, statusRecentRounds)
	}
	if len(st.Rounds) > 0 {
		b.WriteString("\n## Rounds\n\n| Round | Assigned | Engineer | Reviewer | Verdict | Accepted | Needs revision | New gaps |\n|-------|----------|----------|----------|---------|----------|----------------|----------|\n")
		for _, r := range st.Rounds {
			if r.N < recent {
				continue
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", r.N, dash(joinIDs(r.Assigned)), r.Engineer, r.Reviewer, dash(r.Verdict),
				dash(joinIDs(r.Accepted)), dash(joinIDs(append(append([]gap.ID{}, r.Revise...), r.Reopened...))), dash(joinIDs(r.NewGaps)))
		}
	}

	if st.Tracker != nil && len(st.Tracker.Rows()) > 0 {
		fmt.Fprintf(&b, "\n## Convergence Tracking\n\nCurrent state: **%s**\n\n", st.Tracker.Current())
		if note := noProgressNote(st.Tracker.Rows(), st.Round); note != "" {
			b.WriteString(note + "\n\n")
		}
		rows := st.Tracker.Rows()
		for len(rows) > 0 && rows[0].Round < recent {
			rows = rows[1:]
		}
		fmt.Fprintf(&b, "%s\n![Open gaps and weighted open load per round](convergence.svg)\n", convergence.Table(rows))
	}

	vrows, rrows := st.validationRows(recent, 0), st.retryRows()
	for _, n := range roundsWith(vrows) {
		if n >= recent {
			s.renderValidationLog(&b, n, vrows, rrows)
		}
	}
	errs := st.errorRows()
	for _, n := range roundsOf(errs) {
		if n < recent {
			continue
		}
		fmt.Fprintf(&b, "\n## Round %d Errors\n\n| Timestamp | Role | Event | Details |\n|-----------|------|-------|---------|\n", n)
		for _, e := range errs {
			if e.Round == n {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", ts(e.At), e.Role, e.Event, cell(e.Details))
			}
		}
	}

	if log := slices.DeleteFunc(slices.Clone(st.ExampleLog), func(e exemplar.LogEntry) bool { return e.Round < recent }); len(log) > 0 {
		b.WriteString("\n" + exemplar.RenderLog(log))
	}
	if len(st.Conflicts) > 0 {
		b.WriteString("\n## Conflicts\n\n| Issue | Type | Severity | Gap | Round | Status | Decision |\n|-------|------|----------|-----|-------|--------|----------|\n")
		for _, c := range st.Conflicts {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %s |\n", c.IssueID, c.Type, c.Issue.Severity, dash(string(c.Issue.Gap)), c.Round, c.Status, dash(c.DecisionID))
		}
	}
	for _, a := range st.AutoRetries {
		b.WriteString("\n" + rollbacktext.AutoRetryBlock(a))
	}
	renderRollbackNotices(&b, st.Rollbacks.Records)
	if len(st.Rollbacks.Records) > 0 {
		b.WriteString("\n" + rollbacktext.RenderHistory(st.Rollbacks, s.rollbackLimit()))
	}

	renderIntegration(&b, st.Integration) // integrate.go
	renderUsage(&b, st.Usage, s.cfg.Backend)
	return b.String()
}

// renderUsage writes the "## Usage" table: tokens by role and in total,
// with the prompt-cache columns once the backend reported cached tokens,
// and which provider and model play each role when the session knows.
func renderUsage(b *strings.Builder, u usageTotals, backend BackendInfo) {
	cached := u.Total.CachedPromptTokens > 0 || u.Total.CacheWriteTokens > 0
	if cached {
		b.WriteString("\n## Usage\n\n| Role | Prompt tokens | Cached (read) | Cache writes | Completion tokens |\n|------|---------------|---------------|--------------|-------------------|\n")
	} else {
		b.WriteString("\n## Usage\n\n| Role | Prompt tokens | Completion tokens |\n|------|---------------|-------------------|\n")
	}
	row := func(name string, v Usage) {
		if cached {
			fmt.Fprintf(b, "| %s | %d | %d | %d | %d |\n", name, v.PromptTokens, v.CachedPromptTokens, v.CacheWriteTokens, v.CompletionTokens)
		} else {
			fmt.Fprintf(b, "| %s | %d | %d |\n", name, v.PromptTokens, v.CompletionTokens)
		}
	}
	for _, r := range []RoleName{Engineer, Reviewer} {
		row(r.Title(), u.ByRole[string(r)])
	}
	row(fmt.Sprintf("**Total** (%d calls)", u.Calls), u.Total)
	var models []string
	for _, r := range []RoleName{Engineer, Reviewer} {
		rb := backend.Role(r)
		label := rb.Kind
		if rb.Model != "" {
			label = strings.TrimPrefix(label+":"+rb.Model, ":")
		}
		if label != "" {
			models = append(models, r.Title()+": "+label)
		}
	}
	if len(models) > 0 {
		b.WriteString("\nModels: " + strings.Join(models, "; ") + "\n")
	}
}

// statusRecentRounds is how many rounds status.md shows in its per-round
// tables (rounds, convergence, validation logs, errors, examples): the
// file is rewritten every round, so it must not grow with the session.
// Each round's summary.md keeps that round's details.
const statusRecentRounds = 5

// recentFrom returns the first round status.md's per-round tables show.
func (s *Session) recentFrom() int {
	last := s.st.Round
	if s.st.Current != nil {
		last = s.st.Current.N
	}
	return max(1, last-statusRecentRounds+1)
}

// renderRollbackNotices writes the restore protocol's rollback notice for
// every rollback carried out: one per rollback, so the rounds of one
// multi-round rollback (records with the same time and target) share a
// "Rounds 6-8" notice.
func renderRollbackNotices(b *strings.Builder, recs []rollback.Record) {
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].At.Equal(recs[i].At) && recs[j].Target == recs[i].Target {
			j++
		}
		var rounds, attempts []int
		var archives []string
		for _, r := range recs[i:j] {
			rounds, attempts, archives = append(rounds, r.Round), append(attempts, r.Attempt), append(archives, r.Archive)
		}
		b.WriteString("\n" + rollbacktext.StatusNotice(rounds, attempts, recs[i].Target, recs[i].At, recs[i].Reason, archives))
		i = j
	}
}

// renderValidationLog writes the "## Round N Validation Log" of spec
// round-09 §9 from the session's validation and retry rows.
func (s *Session) renderValidationLog(b *strings.Builder, n int, rows []validationEntry, retries []retryDetail) {
	fmt.Fprintf(b, "\n## Round %d Validation Log\n\n### Validation Summary\n| Role | Outcome | Attempts | Final Failure Type |\n|------|---------|----------|-------------------|\n", n)
	for _, role := range []RoleName{Engineer, Reviewer} {
		attempts, outcome, final := 0, "", "N/A"
		lastFail := ""
		passed := false
		for _, v := range rows {
			if v.Round != n || v.Role != role {
				continue
			}
			if v.Tier == tierEscalation {
				continue // the spent budget, not an attempt
			}
			if v.Tier == "Structure" || v.Result == "FAIL" {
				attempts++
			}
			if v.Result == "FAIL" {
				lastFail = string(v.FailureType)
				if lastFail == "" { // a legacy row
					lastFail = v.Tier
					for _, a := range s.attemptsOf(n, role) {
						if a.N == v.Attempt && !a.Success {
							lastFail = string(a.FailureType)
						}
					}
				}
			}
			if v.Result == "PASS" && v.Tier == "Content" {
				passed = true
			}
		}
		if attempts == 0 {
			continue
		}
		switch {
		case passed && attempts > 1:
			outcome, final = "SUCCESS", "N/A (passed on retry)"
		case passed:
			outcome = "SUCCESS"
		default:
			outcome, final = "FAILED", lastFail
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s |\n", role.Title(), outcome, attempts, final)
	}
	b.WriteString("\n### Detailed Log\n\n| Timestamp | Role | Attempt | Validation | Result | Message |\n|-----------|------|---------|------------|--------|---------|\n")
	for _, v := range rows {
		if v.Round != n {
			continue
		}
		who := v.Role.Title()
		if v.Part != "" {
			who += " (" + v.Part + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s |\n", ts(v.At), who, v.Attempt, v.Tier, v.Result, cell(v.Message))
	}
	first := true
	for _, r := range retries {
		if r.Round != n {
			continue
		}
		if first {
			b.WriteString("\n### Retry Details\n")
			first = false
		}
		who := r.Role.Title()
		if r.Part != "" {
			who += " (" + r.Part + ")"
		}
		fmt.Fprintf(b, "\n#### %s Retry %d (%s)\n- **Failure Type:** %s\n- **Prompt Modification:** %s\n- **Example Attached:** %s\n- **Outcome:** %s\n",
			who, r.Retry, ts(r.At), r.FailureType, r.Modification, r.Example, r.Outcome)
	}
}

// attemptsOf returns the recorded attempts of a role in round n, if that
// round's detail is still in state.
func (s *Session) attemptsOf(n int, role RoleName) []attemptRec {
	if s.st.Current != nil && s.st.Current.N == n {
		return s.st.Current.role(role).Attempts
	}
	return nil
}

// roundsWith returns the rounds the validation rows belong to, in order.
func roundsWith(rows []validationEntry) []int {
	var out []int
	for _, v := range rows {
		if !containsInt(out, v.Round) {
			out = append(out, v.Round)
		}
	}
	return out
}

// roundsOf returns the rounds the error rows belong to, in order.
func roundsOf(rows []errorEntry) []int {
	var out []int
	for _, e := range rows {
		if !containsInt(out, e.Round) {
			out = append(out, e.Round)
		}
	}
	return out
}

// renderDecisions renders decisions.md from state.
func (s *Session) renderDecisions() string {
	var b strings.Builder
	b.WriteString("# Decisions\n\nDecisions recorded during this session. Later prompts carry them; they are not re-argued.\n")
	if len(s.st.Decisions) == 0 && len(s.st.ConflictDecisions) == 0 {
		b.WriteString("\nNo decisions recorded yet.\n")
	}
	round := -1
	for _, d := range s.st.Decisions {
		if d.Round != round {
			round = d.Round
			fmt.Fprintf(&b, "\n## Round %d\n", round)
		}
		title := d.Question
		if d.Issue != "" {
			title = d.Issue + ": " + title
		}
		fmt.Fprintf(&b, "\n### %s — %s\n\n**Decision ID:** %s\n**Date:** %s\n**Chosen Option:** %s\n**Decision:** %s\n", d.ID, title, d.ID, ts(d.At), d.Option, d.Decision)
		if d.Text != "" {
			fmt.Fprintf(&b, "**User note:** %s\n", d.Text)
		}
	}
	if len(s.st.ConflictDecisions) > 0 {
		b.WriteString("\n## Conflict Resolutions\n\n" + conflict.RenderDecisions(s.st.ConflictDecisions))
	}
	for _, r := range s.st.Rollbacks.Records {
		b.WriteString("\n" + rollbacktext.DecisionsNoticeIn(r.Round, r.At, r.Reason, r.Archive))
	}
	if len(s.st.Adjustments) > 0 {
		b.WriteString("\n## Standing Adjustments\n\n")
		for _, a := range s.st.Adjustments {
			fmt.Fprintf(&b, "- %s\n", a)
		}
	}
	return b.String()
}

// renderSummary renders round_NNN/summary.md, the Mediator's synthesis.
func (s *Session) renderSummary(r roundRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Round %d Summary\n\n- **Started:** %s\n- **Finished:** %s\n- **Assigned:** %s\n- **Engineer:** %s\n- **Reviewer:** %s\n",
		r.N, ts(r.StartedAt), ts(r.FinishedAt), dash(joinIDs(r.Assigned)), r.Engineer, r.Reviewer)
	if r.Verdict != "" {
		fmt.Fprintf(&b, "- **Verdict:** %s\n", r.Verdict)
	}
	if len(r.Unreviewed) > 0 {
		fmt.Fprintf(&b, "- **Unreviewed:** %s (the Reviewer was skipped; these proposals stay PROPOSED, marked \"unreviewed\", and go to the next Reviewer)\n", joinIDs(r.Unreviewed))
	}
	fmt.Fprintf(&b, "\n## Gap Changes\n\n| Gap | From | To | Reason |\n|-----|------|----|--------|\n")
	for _, g := range s.st.Ledger.Gaps {
		for _, t := range g.History {
			if t.Round == r.N {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g.ID, t.From, t.To, cell(t.Reason))
			}
		}
	}
	var issues []issueRecord
	for _, is := range s.st.Issues {
		if is.Round == r.N {
			issues = append(issues, is)
		}
	}
	if len(issues) > 0 {
		b.WriteString("\n## Reviewer Issues\n\n| Issue | Severity | Gap | Summary |\n|-------|----------|-----|---------|\n")
		for _, is := range issues {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", is.ID, is.Severity, dash(string(is.Gap)), cell(is.Summary))
		}
	}
	if len(r.NewGaps) > 0 {
		fmt.Fprintf(&b, "\n## New Gaps\n\n")
		for _, id := range r.NewGaps {
			g, _ := s.st.Ledger.Get(id)
			fmt.Fprintf(&b, "- %s (%s): %s\n", id, g.Severity, g.Title)
		}
	}
	if s.st.Tracker != nil {
		if note := noProgressNote(s.st.Tracker.Rows(), r.N); note != "" {
			fmt.Fprintf(&b, "\n## Convergence\n\n%s\n", note)
		}
	}
	var warnings []string
	for _, v := range s.st.validationRows(r.N, r.N) {
		if v.Result == resultWarn {
			warnings = append(warnings, fmt.Sprintf("%s: %s", v.Role.Title(), v.Message))
		}
	}
	if len(warnings) > 0 {
		b.WriteString("\n## Validation Warnings\n\n")
		for _, w := range warnings {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	fmt.Fprintf(&b, "\n## Open Gaps After Round %d\n\n", r.N)
	open := s.st.Ledger.Open()
	if len(open) == 0 {
		b.WriteString("None.\n")
	}
	for _, g := range open {
		fmt.Fprintf(&b, "- %s (%s) %s\n", g.ID, g.Severity, g.State)
	}
	return b.String()
}

// cell makes text safe for one markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(oneLine(s), "|", "\\|")
	if s == "" {
		return "-"
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// resultWarn marks a validation-log row that is a warning of a valid
// output (THIN_CONTENT, missing Trade-offs, a repeated rejected position).
const resultWarn = "WARN"

// noProgressNote is the round summary's line for a round that made no net
// progress (STALLED(k)): "No net progress this round".
func noProgressNote(rows []convergence.Row, round int) string {
	for _, r := range rows {
		if r.Round == round && r.WeightedNet <= 0 {
			return fmt.Sprintf("No net progress this round (round %d: weighted net %+d, state %s).", round, r.WeightedNet, r.State)
		}
	}
	return ""
}

// renderQuestion writes a pending question whole: title, ID, body,
// options with their effects, which need text, and the default.
func renderQuestion(b *strings.Builder, q Question) {
	fmt.Fprintf(b, "### %s (`%s`)\n\n", q.Title, q.ID)
	if body := strings.TrimSpace(q.Body); body != "" {
		b.WriteString("~~~text\n" + strings.ReplaceAll(body, "~~~", "~ ~ ~") + "\n~~~\n\n")
	}
	for _, o := range q.Options {
		fmt.Fprintf(b, "- **%s.** %s", o.Key, o.Label)
		if o.Recommended {
			b.WriteString(" (recommended)")
		}
		if slices.Contains(q.TextRequired, o.Key) {
			b.WriteString(" (needs text: `KEY: your text`)")
		}
		if o.Effect != "" {
			fmt.Fprintf(b, " — %s", o.Effect)
		}
		b.WriteString("\n")
	}
	if q.Default != "" {
		fmt.Fprintf(b, "\nDefault (automated mode): **%s**\n", q.Default)
	}
	b.WriteString("\nAnswer with `refine resume --dir DIR --answer KEY[:text]`.\n\n")
}
