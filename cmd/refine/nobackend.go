package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/refine-spec/refine"
)

// errNoBackend is what a session resumed without a backend gets if it
// ever makes a role call; resumeWithoutBackend stops before any.
var errNoBackend = errors.New("no backend: resume with --llm (or --replay DIR)")

// noBackend is the Role of a session resumed only to take an answer.
type noBackend struct{}

func (noBackend) Respond(context.Context, refine.Request) (refine.Response, error) {
	return refine.Response{}, errNoBackend
}

// resumeWithoutBackend applies an answer to a session that names no
// backend (the demo's, or one started by a host program), and everything
// the answer sets off that needs no role call: a rollback is executed, a
// decision recorded, the next question asked. It stops before the first
// role call, with the session saved, and says how to go on.
func (c *cli) resumeWithoutBackend(ctx context.Context, st sessionStore, loc sessionLoc, answer string) int {
	return c.answerWithoutBackend(ctx, "resume", st, loc, answer)
}

// answerWithoutBackend is resumeWithoutBackend for the command cmd
// (resume, rollback), which its messages name (#40).
func (c *cli) answerWithoutBackend(ctx context.Context, cmd string, st sessionStore, loc sessionLoc, answer string) int {
	prefix := "refine " + cmd + ": "
	cfg := refine.DefaultConfig()
	cfg.Store = st
	cfg.Engineer, cfg.Reviewer = noBackend{}, noBackend{}
	cfg.Asker = refine.DeferAsker{}
	s, err := refine.Open(ctx, cfg)
	if errors.Is(err, refine.ErrNoSession) {
		err = loc.noSession()
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s%v\n", prefix, safeErr(err))
		return exitUsage
	}
	if code := c.answerFirst(ctx, cmd, s, answer); code != exitOK {
		return code
	}
	for {
		r, err := s.Next(ctx, refine.Play{})
		if len(r.Persist) > 0 {
			if cerr := st.Commit(ctx, r.Persist...); cerr != nil {
				fmt.Fprintf(c.stderr, "%s%v\n", prefix, safeErr(cerr))
				return exitFailed
			}
			if aerr := s.Advance(ctx); aerr != nil {
				fmt.Fprintf(c.stderr, "%s%v\n", prefix, safeErr(aerr))
				return exitFailed
			}
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "%s%v\nstate is saved; fix the cause and run: refine resume %s\n", prefix, safeErr(err), loc.flags())
			return exitFailed
		}
		out := r.Outcome
		switch {
		case len(r.Calls) > 0:
			if status, err := s.Status(context.WithoutCancel(ctx)); err == nil {
				printSummary(c.stdout, status, loc)
			}
			how := "--llm openai|anthropic|ollama|replay [--replay DIR] (or --engineer and --reviewer PROVIDER:MODEL)"
			if b := s.Settings().Backend; b.Kind != "" {
				how = "(with the session's " + safeLine(b.Kind) + " backend, or --llm …)"
			}
			fmt.Fprintf(c.stdout, "\nThe answer is applied; the session stops before its next role call (the %s). Go on with: refine resume %s %s\n",
				r.Calls[0].Role.Title(), loc.flags(), how)
			return exitPaused
		case out.Status == refine.StatusPaused || out.Status.Terminal():
			return c.report(ctx, s, loc, out, nil)
		}
	}
}

// applyAnswer answers the first pending question with "KEY" or
// "KEY:text", as given to --answer.
func (c *cli) applyAnswer(ctx context.Context, s *refine.Session, answer string) int {
	return c.answerFirst(ctx, "resume", s, answer)
}

// answerFirst is applyAnswer for the command cmd: its messages name cmd
// and the flag that gave the answer (--answer, or rollback's --option).
func (c *cli) answerFirst(ctx context.Context, cmd string, s *refine.Session, answer string) int {
	prefix, flagName := "refine "+cmd+": ", "--answer"
	if cmd == "rollback" {
		flagName = "--option"
	}
	status, err := s.Status(ctx)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s%v\n", prefix, safeErr(err))
		return exitFailed
	}
	if len(status.Pending) == 0 {
		fmt.Fprintf(c.stderr, "%s%s given but no question is pending\n", prefix, flagName)
		return exitUsage
	}
	key, text := parseAnswerFlag(answer)
	if err := s.Answer(ctx, status.Pending[0].ID, refine.Answer{Key: key, Text: text}); err != nil {
		fmt.Fprintf(c.stderr, "%s%s %s: %v\n", prefix, flagName, safeLine(answer), safeErr(err))
		return exitUsage
	}
	return exitOK
}
