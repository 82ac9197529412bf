package coretest

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
)

// printReady prints a Ready as the scripts expect it: the error, the
// writes (each one with writes, else their number), the calls, the
// questions to ask, the outcome with its pending questions, and what a
// Step or a Rollback reported.
func printReady(r core.Ready, err error, writes bool, lastReport core.RoundReport) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error: %s\n", errText(err))
	}
	if n := len(r.Persist); n > 0 {
		fmt.Fprintf(&b, "persist: %d writes in %s\n", n, plural(max(r.Commits, 1), "commit"))
		if writes {
			for _, op := range r.Persist {
				b.WriteString("  " + printOp(op) + "\n")
			}
		}
	}
	if n := len(r.Cold); n > 0 {
		fmt.Fprintf(&b, "cold: %d writes\n", n)
		if writes {
			for _, op := range r.Cold {
				b.WriteString("  " + printOp(op) + "\n")
			}
		}
	}
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "call: %s call %d round %d attempt %d gaps %v", c.Role, c.Call, c.Round, c.Attempt, c.Gaps)
		if c.Discovery {
			b.WriteString(" discovery")
		}
		if c.MaxTokens > 0 {
			fmt.Fprintf(&b, " max-tokens %d", c.MaxTokens)
		}
		fmt.Fprintf(&b, "\n  %s\n", promptLine(c))
	}
	for _, q := range r.Ask {
		b.WriteString("ask: " + printQuestion(q))
		if _, why, ok := strings.Cut(q.Body, "(Previous answer rejected: "); ok {
			fmt.Fprintf(&b, "  rejected: %s\n", strings.TrimSuffix(strings.TrimSpace(why), ")"))
		}
	}
	if rep := r.Report; (rep.Engineer != "" || rep.Reviewer != "") && !sameReport(rep, lastReport) {
		fmt.Fprintf(&b, "report: round %d engineer %q reviewer %q", rep.Round, rep.Engineer, rep.Reviewer)
		if rep.Verdict != "" {
			fmt.Fprintf(&b, " verdict %s", rep.Verdict)
		}
		if len(rep.Accepted) > 0 {
			fmt.Fprintf(&b, " accepted %v", rep.Accepted)
		}
		if len(rep.Revise) > 0 {
			fmt.Fprintf(&b, " revise %v", rep.Revise)
		}
		if len(rep.NewGaps) > 0 {
			fmt.Fprintf(&b, " new %v", rep.NewGaps)
		}
		b.WriteString("\n")
	}
	if rb := r.Rollback; len(rb.Undone) > 0 || rb.Cancelled || rb.Analysis != "" || rb.RootCause != "" || len(rb.Adjustments) > 0 {
		b.WriteString(printRollback(rb))
	}
	o := r.Outcome
	fmt.Fprintf(&b, "outcome: %s round %d", o.Status, o.Round)
	if o.Reason != "" && o.Status != core.StatusRunning {
		fmt.Fprintf(&b, " (%s)", o.Reason)
	}
	b.WriteString("\n")
	for _, q := range o.Pending {
		b.WriteString("pending: " + printQuestion(q))
	}
	if r.Stale {
		b.WriteString("stale: what the decisions hold was never stored; load\n")
	}
	return b.String()
}

// printRollback prints what a Rollback did.
func printRollback(rb core.RollbackReport) string {
	var b strings.Builder
	if rb.Cancelled {
		fmt.Fprintf(&b, "rollback: cancelled (%s)\n", rb.Decision)
		return b.String()
	}
	if len(rb.Undone) > 0 {
		fmt.Fprintf(&b, "rollback: to round %d, undone %v, archives %v, %d left\n", rb.Round, rb.Undone, rb.Archives, rb.Remaining)
	}
	if rb.RootCause != "" {
		line, _, _ := strings.Cut(rb.RootCause, "\n")
		fmt.Fprintf(&b, "  root cause: %s\n", line)
	}
	if len(rb.Adjustments) > 0 {
		applied := "recommended"
		if rb.AutoApplied {
			applied = "applied"
		}
		fmt.Fprintf(&b, "  adjustments (%s): %s\n", applied, strings.Join(rb.Adjustments, "; "))
	}
	return b.String()
}

// printOp names a write's kind, key and size.
func printOp(op store.Op) string {
	switch op.Kind {
	case store.OpPut:
		return fmt.Sprintf("put %s (%d bytes)", op.Key, len(op.Value))
	case store.OpAppend:
		return fmt.Sprintf("append %s (%d bytes)", op.Key, len(op.Value))
	case store.OpDelete:
		return "delete " + op.Key
	case store.OpCopy:
		return fmt.Sprintf("copy %s from %s", op.Key, op.From)
	}
	return fmt.Sprintf("op %d %s", op.Kind, op.Key)
}

// printQuestion prints a question: ID, kind, title, option keys (the
// default marked *).
func printQuestion(q question.Question) string {
	keys := make([]string, 0, len(q.Options))
	for _, o := range q.Options {
		k := o.Key
		if k == q.Default {
			k += "*"
		}
		keys = append(keys, k)
	}
	return fmt.Sprintf("%s (%s) %q [%s]\n", q.ID, q.Kind, q.Title, strings.Join(keys, " "))
}

// printStatus prints what Status reports that a script checks.
func printStatus(st core.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s round %d phase %q, %d calls", st.Outcome, st.Round, st.Phase, st.Calls)
	if len(st.Rollbacks) > 0 {
		fmt.Fprintf(&b, ", %d rollbacks", len(st.Rollbacks))
	}
	if st.FinalSpec != "" {
		fmt.Fprintf(&b, ", final spec %s", st.FinalSpec)
	}
	b.WriteString("\n")
	if st.Outcome.Terminal() && st.Reason != "" {
		fmt.Fprintf(&b, "  reason: %s\n", st.Reason)
	}
	for _, g := range st.Gaps {
		fmt.Fprintf(&b, "  %s %s %s\n", g.ID, g.Severity, g.State)
	}
	for _, d := range st.Decisions {
		issue := d.Issue
		if issue == "" {
			issue = "-"
		}
		fmt.Fprintf(&b, "  decision %s %s %s\n", d.ID, issue, d.Option)
	}
	for _, c := range st.Conflicts {
		fmt.Fprintf(&b, "  conflict %s %s round %d %s %s\n", c.IssueID, c.Type, c.Round, c.Issue.Severity, c.Status)
	}
	for _, q := range st.Pending {
		b.WriteString("  pending: " + printQuestion(q))
	}
	return b.String()
}

// printValidation prints the session's validation log.
func printValidation(st core.Status) string {
	var b strings.Builder
	for _, v := range st.Validation {
		fmt.Fprintf(&b, "round %d %s attempt %d %s %s", v.Round, v.Role, v.Attempt, v.Tier, v.Result)
		if v.FailureType != "" {
			fmt.Fprintf(&b, " %s", v.FailureType)
		}
		fmt.Fprintf(&b, ": %s\n", v.Message)
	}
	if b.Len() == 0 {
		return "no validation records"
	}
	return b.String()
}

// printNormalized prints what the session's answers were read through.
func printNormalized(st core.Status) string {
	var b strings.Builder
	for _, n := range st.Normalized {
		fmt.Fprintf(&b, "%s %s: %d in %d answers\n", n.Role, n.Kind, n.Count, n.Answers)
	}
	if b.Len() == 0 {
		return "nothing normalized"
	}
	return b.String()
}

// printEvent prints one event: its kind and what it names.
func printEvent(e core.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s round %d", e.Kind, e.Round)
	if e.Phase != "" && string(e.Phase) != string(e.Role) {
		fmt.Fprintf(&b, " phase %s", e.Phase)
	}
	if e.Role != "" {
		fmt.Fprintf(&b, " %s", e.Role)
	}
	if e.Call > 0 {
		fmt.Fprintf(&b, " call %d", e.Call)
	}
	if e.Attempt > 0 {
		fmt.Fprintf(&b, " attempt %d", e.Attempt)
	}
	if e.Gap != "" {
		fmt.Fprintf(&b, " gap %s", e.Gap)
	}
	if e.FailureType != "" {
		fmt.Fprintf(&b, " %s", e.FailureType)
	}
	if e.Question != nil {
		fmt.Fprintf(&b, " question %s", e.Question.ID)
	}
	if e.Answer != nil {
		fmt.Fprintf(&b, " answer %s", e.Answer.Key)
	}
	if e.Outcome != "" {
		fmt.Fprintf(&b, " outcome %s", e.Outcome)
	}
	if e.Message != "" {
		msg, _, _ := strings.Cut(e.Message, "\n")
		fmt.Fprintf(&b, ": %s", msg)
	}
	return b.String()
}

// promptLine is the first line with a word in it of the call's last
// message: what this call asks, after the stable prefix (system text,
// spec, decisions), and past banner rules.
func promptLine(r llm.Request) string {
	if len(r.Messages) == 0 {
		return "(no prompt)"
	}
	for _, l := range strings.Split(r.Messages[len(r.Messages)-1].Content, "\n") {
		if strings.IndexFunc(l, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) >= 0 {
			return strings.TrimSpace(l)
		}
	}
	return "(no words in the prompt)"
}

// errText is an error's message, with its sentinel's name when it wraps
// one a script checks for.
func errText(err error) string {
	for _, s := range []struct {
		name string
		err  error
	}{
		{"ErrNotPersisted", core.ErrNotPersisted}, {"ErrUnknownCall", core.ErrUnknownCall},
		{"ErrFinished", core.ErrFinished}, {"ErrCorrupt", store.ErrCorrupt},
		{"ErrUnknownQuestion", core.ErrUnknownQuestion}, {"ErrInvalidAnswer", question.ErrInvalidAnswer},
		{"ErrDeferred", core.ErrDeferred}, {"ErrRollbackLimit", rollback.ErrLimit},
		{"ErrContextWindow", core.ErrContextWindow}, {"ErrOutOfRange", rollback.ErrOutOfRange},
		{"ErrNoResponse", llm.ErrNoResponse}, {"ErrBlocked", core.ErrBlocked},
	} {
		if errors.Is(err, s.err) {
			return s.name + ": " + err.Error()
		}
	}
	var pending *core.PendingRollbackError
	if errors.As(err, &pending) {
		return "PendingRollbackError: " + err.Error()
	}
	return err.Error()
}

// plural is n with noun, plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// sameReport says whether a and b are the same round report: a Ready
// repeats its run's last one until the next run.
func sameReport(a, b core.RoundReport) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}
