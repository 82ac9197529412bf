package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
)

// cmdApprove ends a session now as USER_APPROVED (`refine approve`).
func cmdApprove(ctx context.Context, c *cli, args []string) int {
	return c.endSession(ctx, "approve", args)
}

// cmdAbandon ends a session now as ABANDONED (`refine abandon`).
func cmdAbandon(ctx context.Context, c *cli, args []string) int {
	return c.endSession(ctx, "abandon", args)
}

// endSession is approve and abandon: both open the session without roles
// and end it at once, whatever round it is in.
func (c *cli) endSession(ctx context.Context, verb string, args []string) int {
	fl := flag.NewFlagSet("refine "+verb, flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	dir := fl.String("dir", "", "session folder (required)")
	note := fl.String("note", "", "why (recorded in decisions.md and as the outcome's reason)")
	ack := false
	if verb == "approve" {
		fl.BoolVar(&ack, "acknowledge-high", false, "approve although HIGH conflicts are unresolved (they become known limitations)")
	}
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *dir == "" {
		fmt.Fprintf(c.stderr, "refine %s: --dir is required\n", verb)
		return exitUsage
	}
	st, err := c.openSession(*dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine %s: %v\n", verb, safeErr(err))
		return exitUsage
	}
	defer st.Close()
	cfg := refine.DefaultConfig()
	cfg.Store, cfg.Engineer, cfg.Reviewer, cfg.Asker = st, offlineRole, offlineRole, refine.DeferAsker{}
	s, err := refine.Open(ctx, cfg)
	if errors.Is(err, refine.ErrNoSession) {
		err = noSession(*dir)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine %s: %v\n", verb, safeErr(err))
		return exitUsage
	}
	if verb == "approve" {
		err = s.Approve(ctx, refine.ApproveRequest{Note: strings.TrimSpace(*note), AcknowledgeHigh: ack})
	} else {
		err = s.Abandon(ctx, strings.TrimSpace(*note))
	}
	if errors.Is(err, refine.ErrBlocked) {
		// The library's error names its request's fields; this one names
		// the commands and flags that unblock it (#40).
		fmt.Fprintf(c.stderr, "refine %s: %s\n", verb, blockedText(ctx, s, *dir))
		return exitFailed
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine %s: %v\n", verb, safeErr(err))
		return exitFailed // ErrFinished names the outcome
	}
	if st, err := s.Status(ctx); err == nil && st.FinalSpec == refine.FinalSpecPending {
		// The integration step calls the roles, which this command has not.
		fmt.Fprintf(c.stdout, "Session ended as %s after round %d: %s\n", st.Outcome, st.Round, safeLine(st.Reason))
		fmt.Fprintf(c.stdout, "final_spec.md holds the appendix form for now; write the refined spec (v1.0) with: refine resume --dir %s (or keep the appendix form: refine resume --dir %s --no-integrate)\n", *dir, *dir)
		return exitOK
	}
	// The archive cleanup question (if any archives exist) comes with the next run.
	out, err := s.Run(ctx)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine %s: %v\n", verb, safeErr(err))
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "Session ended as %s after round %d: %s\n", out.Status, out.Round, safeLine(out.Reason))
	for _, q := range out.Pending {
		printQuestion(c.stdout, q)
		fmt.Fprintf(c.stdout, "\nThis question waits: refine resume --dir %s --answer KEY --llm replay --replay %s\n", *dir, *dir)
	}
	return exitOK
}

// blockedText says why approving is refused and what unblocks it: the
// unresolved CRITICAL conflicts (answer them), or the HIGH ones (answer
// them, or approve with --acknowledge-high).
func blockedText(ctx context.Context, s *refine.Session, dir string) string {
	var crit, high []string
	if st, err := s.Status(ctx); err == nil {
		for _, cf := range st.Conflicts {
			switch {
			case !cf.Open():
			case cf.Issue.Severity == gap.Critical:
				crit = append(crit, cf.IssueID)
			case cf.Issue.Severity.AtLeastHigh():
				high = append(high, cf.IssueID)
			}
		}
	}
	answer := fmt.Sprintf("answer their questions with refine resume --dir %s --answer KEY", shellQuote(dir))
	if len(crit) > 0 {
		return fmt.Sprintf("unresolved CRITICAL conflict(s) %s block every ending but abandoning: %s (or end the session with refine abandon --dir %s)", safeLine(strings.Join(crit, ", ")), answer, shellQuote(dir))
	}
	return fmt.Sprintf("unresolved HIGH conflict(s) %s: %s, or approve anyway with refine approve --dir %s --acknowledge-high (they become known limitations)", safeLine(strings.Join(high, ", ")), answer, shellQuote(dir))
}
