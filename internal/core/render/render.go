package render

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// Timestamp formats a time as the spec's ISO 8601 UTC timestamp (round-09 §6).
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// Setup is what status.md shows of a session's configuration besides
// its state.
type Setup struct {
	// Settings are the session's settings as they stand, in the order
	// shown (core.Settings.View).
	Settings []SettingValue
	// RollbackLimit is the session's effective rollback limit.
	RollbackLimit int
	// Models says which provider and model play each role
	// ("Engineer: anthropic:claude-…"), for the roles the session knows.
	Models []string
}

// Status renders status.md from state: gaps, validation log, errors,
// and usage. It is a rendering only; nothing is parsed back from it. Of
// the configuration it shows the session's settings (with their changes),
// its effective rollback limit and the backend that plays each role.
func Status(st *state.State, set Setup) string {
	var b strings.Builder
	recent := recentFrom(st)
	writeStatusHeader(&b, st)
	writeGaps(&b, &st.Ledger)
	writeWhereOpen(&b, &st.Ledger) // discovery.go
	writeDiscovery(&b, st.Discovery)
	writePending(&b, st.Pending)
	writeRounds(&b, st.Rounds, recent)
	writeConvergence(&b, st.Tracker, st.Round, recent)
	writeValidationLogs(&b, st, recent)
	writeNormalized(&b, NormalizedCounts(st))
	writeErrors(&b, ErrorRows(st), recent)
	writeExampleLog(&b, st.ExampleLog, recent)
	writeConflicts(&b, st.Conflicts)
	writeRollbacks(&b, st, set.RollbackLimit)
	renderIntegration(&b, st.Integration) // integration.go
	writeSettings(&b, set.Settings, st.SettingsLog)
	renderUsage(&b, st.Usage, set.Models)
	return b.String()
}

// writeStatusHeader writes status.md's title and the session's round,
// outcome, reason and last update.
func writeStatusHeader(b *strings.Builder, st *state.State) {
	fmt.Fprintf(b, "# Session Status\n\n")
	fmt.Fprintf(b, "- **Session:** %s\n- **Round:** %d completed", st.SessionID, st.Round)
	if st.Current != nil {
		fmt.Fprintf(b, " (round %d in progress: %s)", st.Current.N, st.Current.Phase)
	}
	fmt.Fprintf(b, "\n- **Outcome:** %s\n", statusOutcome(st))
	if st.OutcomeReason != "" {
		fmt.Fprintf(b, "- **Reason:** %s\n", st.OutcomeReason)
	}
	fmt.Fprintf(b, "- **Updated:** %s\n", Timestamp(st.UpdatedAt))
}

// statusOutcome is status.md's outcome line: the session's outcome,
// RUNNING while it has none, PAUSED while a question waits; a finished
// session keeps its outcome and notes that a question waits (the
// integration's, a rollback's dialog, the archive cleanup).
func statusOutcome(st *state.State) string {
	outcome := string(st.Outcome)
	if outcome == "" {
		outcome = "RUNNING"
	}
	switch {
	case st.OnlyCleanupPending():
		outcome += " (the archive cleanup question waits for an answer)"
	case len(st.Pending) > 0 && st.Outcome.Terminal():
		outcome += " (a question waits for an answer)"
	case len(st.Pending) > 0:
		outcome = "PAUSED (waiting for an answer)"
	}
	return outcome
}

// writeGaps writes the "## Gaps" table: every gap with the round it
// entered its state.
func writeGaps(b *strings.Builder, l *gap.Ledger) {
	open := len(l.Open())
	fmt.Fprintf(b, "\n## Gaps\n\n%d open, %d closed\n\n| ID | Title | Severity | State | Since |\n|----|-------|----------|-------|-------|\n", open, len(l.Gaps)-open)
	for _, g := range l.Gaps {
		since := "round 0"
		if n := len(g.History); n > 0 {
			since = fmt.Sprintf("round %d", g.History[n-1].Round)
		} else if g.Round > 0 {
			since = fmt.Sprintf("round %d", g.Round)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", g.ID, Cell(g.Title), g.Severity, g.State, since)
	}
}

// writePending writes the "## Pending Questions", each whole.
func writePending(b *strings.Builder, pending []question.Question) {
	if len(pending) == 0 {
		return
	}
	b.WriteString("\n## Pending Questions\n\n")
	for _, q := range pending {
		renderQuestion(b, q)
	}
}

// writeRounds writes the note on the rounds left to their summaries and
// the "## Rounds" table of the recent rounds.
func writeRounds(b *strings.Builder, rounds []state.RoundRecord, recent int) {
	if recent > 1 {
		fmt.Fprintf(b, "\nRounds 1-%d are summarised in round_NNN/summary.md; the tables below show the last %d rounds.\n", recent-1, statusRecentRounds)
	}
	if len(rounds) == 0 {
		return
	}
	b.WriteString("\n## Rounds\n\n| Round | Assigned | Engineer | Reviewer | Verdict | Accepted | Needs revision | New gaps |\n|-------|----------|----------|----------|---------|----------|----------------|----------|\n")
	for _, r := range rounds {
		if r.N < recent {
			continue
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", r.N, Dash(JoinIDs(r.Assigned)), r.Engineer, r.Reviewer, Dash(r.Verdict),
			Dash(JoinIDs(r.Accepted)), Dash(JoinIDs(append(append([]gap.ID{}, r.Revise...), r.Reopened...))), Dash(JoinIDs(r.NewGaps)))
	}
}

// writeConvergence writes the "## Convergence Tracking" section: the
// tracker's state, the no-progress note of round, and the recent rows.
func writeConvergence(b *strings.Builder, tr *convergence.Tracker, round, recent int) {
	if tr == nil || tr.Len() == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Convergence Tracking\n\nCurrent state: **%s**\n\n", tr.Current())
	if note := noProgressNote(tr.RowsFrom(round), round); note != "" {
		b.WriteString(note + "\n\n")
	}
	rows := tr.RowsFrom(recent)
	fmt.Fprintf(b, "%s\n![Open gaps and weighted open load per round](convergence.svg)\n", convergence.Table(rows))
}

// writeExampleLog writes the examples log of the recent rounds.
func writeExampleLog(b *strings.Builder, log []exemplar.LogEntry, recent int) {
	if log := slices.DeleteFunc(slices.Clone(log), func(e exemplar.LogEntry) bool { return e.Round < recent }); len(log) > 0 {
		b.WriteString("\n" + exemplar.RenderLog(log))
	}
}

// writeConflicts writes the "## Conflicts" table.
func writeConflicts(b *strings.Builder, conflicts []conflict.Conflict) {
	if len(conflicts) == 0 {
		return
	}
	b.WriteString("\n## Conflicts\n\n| Issue | Type | Severity | Gap | Round | Status | Decision |\n|-------|------|----------|-----|-------|--------|----------|\n")
	for _, c := range conflicts {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s | %s |\n", c.IssueID, c.Type, c.Issue.Severity, Dash(string(c.Issue.Gap)), c.Round, c.Status, Dash(c.DecisionID))
	}
}

// writeRollbacks writes the automatic retries, the rollback notices and
// the rollback history against the session's rollback limit.
func writeRollbacks(b *strings.Builder, st *state.State, rollbackLimit int) {
	for _, a := range st.AutoRetries {
		b.WriteString("\n" + rollbacktext.AutoRetryBlock(a))
	}
	renderRollbackNotices(b, st.Rollbacks.Records)
	if len(st.Rollbacks.Records) > 0 {
		b.WriteString("\n" + rollbacktext.RenderHistory(st.Rollbacks, rollbackLimit))
	}
}

// renderUsage writes the "## Usage" table: tokens by role and in total,
// with the prompt-cache columns once the backend reported cached tokens,
// and which provider and model play each role when the session knows.
func renderUsage(b *strings.Builder, u state.UsageTotals, models []string) {
	cached := u.Total.CachedPromptTokens > 0 || u.Total.CacheWriteTokens > 0
	if cached {
		b.WriteString("\n## Usage\n\n| Role | Prompt tokens | Cached (read) | Cache writes | Completion tokens |\n|------|---------------|---------------|--------------|-------------------|\n")
	} else {
		b.WriteString("\n## Usage\n\n| Role | Prompt tokens | Completion tokens |\n|------|---------------|-------------------|\n")
	}
	row := func(name string, v llm.Usage) {
		if cached {
			fmt.Fprintf(b, "| %s | %d | %d | %d | %d |\n", name, v.PromptTokens, v.CachedPromptTokens, v.CacheWriteTokens, v.CompletionTokens)
		} else {
			fmt.Fprintf(b, "| %s | %d | %d |\n", name, v.PromptTokens, v.CompletionTokens)
		}
	}
	for _, r := range []llm.RoleName{llm.Engineer, llm.Reviewer} {
		row(r.Title(), u.ByRole[string(r)])
	}
	row(fmt.Sprintf("**Total** (%d calls)", u.Calls), u.Total)
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
func recentFrom(st *state.State) int {
	last := st.Round
	if st.Current != nil {
		last = st.Current.N
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

// Cell makes text safe for one markdown table cell.
func Cell(s string) string {
	s = strings.ReplaceAll(OneLine(s), "|", "\\|")
	if s == "" {
		return "-"
	}
	return s
}

func Dash(s string) string {
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
func renderQuestion(b *strings.Builder, q question.Question) {
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
