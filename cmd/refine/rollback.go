package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
)

// offlineRole stands in for the LLM roles in commands that never call one
// (rollback, archives): a call is a bug, and says so.
var offlineRole = refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
	return refine.Response{}, errors.New("refine: this command does not call an LLM role")
})

// firstAnswer answers the first question with ans (checked against the
// options it offers) and hands the later ones to next.
type firstAnswer struct {
	ans  refine.Answer
	w    io.Writer
	used bool
	next refine.Asker
}

func (a *firstAnswer) Ask(ctx context.Context, q refine.Question) (refine.Answer, error) {
	if a.used {
		return a.next.Ask(ctx, q)
	}
	a.used = true
	printQuestion(a.w, q)
	if err := q.Check(a.ans); err != nil {
		return refine.Answer{}, fmt.Errorf("--option: %w", err)
	}
	fmt.Fprintf(a.w, "  answer (--option): %s\n", safeLine(formatAnswer(a.ans)))
	return a.ans, nil
}

func cmdRollback(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine rollback", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	var at locFlags
	at.register(fl, "session folder (required unless --store)", "session ID in --store")
	to := fl.Int("to", -1, "restore the state after this round, undoing the rounds after it (required)")
	reason := fl.String("reason", "", "why the rounds are rolled back (required; recorded in the archive)")
	var adjust multiFlag
	fl.Var(&adjust, "adjust", "an instruction for the retried rounds (repeatable)")
	option := fl.String("option", "", "answer the rollback's question with this option: N or N:text (e.g. 2, or 3:context for the retried round), or cancel (no rollback: the session stays as it was)")
	answers := fl.String("answers", "", "file of answers for the rollback's questions, one per line: KEY or KEY: text")
	auto := fl.Bool("auto", false, "answer the rollback's questions with their documented defaults")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *answers != "" && *auto {
		fmt.Fprintln(c.stderr, "refine rollback: use --answers or --auto, not both")
		return exitUsage
	}
	if at.missing() || *to < 0 || strings.TrimSpace(*reason) == "" {
		fmt.Fprintln(c.stderr, "refine rollback: --dir (or --store with --session), --to N (0 or more) and --reason are required")
		return exitUsage
	}
	if _, err := os.Stat(filepath.Join(at.dir, "state.json")); at.store == "" && err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %s holds no session (no state.json)\n", at.dir)
		return exitUsage
	}
	st, loc, err := c.openLoc(ctx, at.dir, at.store, at.session, openWrite)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %v\n", err)
		return exitUsage
	}
	defer st.Close()
	cfg := refine.DefaultConfig()
	cfg.Store, cfg.Engineer, cfg.Reviewer = st, offlineRole, offlineRole
	// The rollback's own questions (options, repeated rollback, limit) are
	// answered here: --option for the first, then --answers or --auto, or
	// a terminal; otherwise deferred.
	asker, err := c.asker(&sessionFlags{auto: *auto, answers: *answers})
	if err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %v\n", safeErr(err))
		return exitUsage
	}
	if *option != "" {
		key, text, _ := strings.Cut(*option, ":")
		asker = &firstAnswer{ans: refine.Answer{Key: strings.TrimSpace(key), Text: strings.TrimSpace(text)}, w: c.stdout, next: asker}
	}
	cfg.Asker = asker
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %v\n", err)
		return exitUsage
	}
	before, _ := s.Status(ctx)
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: *to, Reason: *reason, Adjustments: adjust})
	if pe := (*refine.PendingRollbackError)(nil); errors.As(err, &pe) {
		// Another rollback waits: this command's --to, --reason and
		// --adjust are not that one's, and must not be taken for them.
		same := rollbackFlags(loc, pe.To, pe.Reason, pe.Adjustments)
		fmt.Fprintf(c.stderr, "refine rollback: the rollback of round %d to round %d (--reason %s) waits for its answer (question %s); nothing was changed.\n"+
			"Answer it: %s --option KEY[:text]\nor drop it: %s --option cancel\nthen ask for this rollback again.\n",
			pe.Round, pe.To, safeLine(shellQuote(pe.Reason)), safeLine(pe.Question), same, same)
		return exitUsage
	}
	if waiting := len(rep.Pending) > 0 && errors.Is(err, refine.ErrDeferred) && slices.ContainsFunc(before.Pending, func(q refine.Question) bool {
		return q.ID == rep.Pending[0].ID
	}); waiting && (*option != "" || *auto) {
		// This rollback waits at this question: answer it, carry it out
		// and stop before the first role call.
		ans := *option
		if ans == "" {
			ans = rep.Pending[0].Default
		}
		fmt.Fprintf(c.stdout, "The rollback of round %d waits for its answer; answering it with %s.\n", rep.Pending[0].Round, safeLine(ans))
		return c.answerWithoutBackend(ctx, "rollback", st, loc, ans)
	}
	if len(rep.Pending) > 0 {
		// The rollback mode asks first (the options, the repeated-rollback
		// or the limit question) and nobody answered: nothing is rolled
		// back until it is answered.
		for _, q := range rep.Pending {
			printQuestion(c.stdout, q)
		}
		same := rollbackFlags(loc, *to, *reason, adjust)
		fmt.Fprintf(c.stdout, "\nThe rollback waits for this answer: %s --option KEY[:text] (or --auto) answers it and stops; --option cancel drops it; refine resume %s --answer KEY[:text] answers it and goes on\n", same, loc.flags())
		return exitPaused
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %v\n", err)
		if errors.Is(err, refine.ErrRollbackLimit) {
			fmt.Fprintf(c.stderr, "The session rollback limit is reached: finish the session (refine approve|abandon %s), or raise the limit with refine resume %s --rollback-limit N.\n", loc.flags(), loc.flags())
		}
		if errors.Is(err, refine.ErrInvalidAnswer) {
			return exitUsage
		}
		return exitFailed
	}
	if rep.Cancelled {
		fmt.Fprintf(c.stdout, "Cancelled: no rollback; the session is as it was before the request.\n")
		return exitOK
	}
	if len(rep.Undone) == 0 {
		fmt.Fprintf(c.stdout, "No rollback: %s\n", rep.Decision)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "Rolled back to round %d: undid round(s) %s.\n", rep.Round, joinInts(rep.Undone))
	for _, a := range rep.Archives {
		fmt.Fprintf(c.stdout, "  archived: %s\n", filepath.Join(loc.dir, a))
	}
	if len(rep.Adjustments) > 0 {
		if rep.AutoApplied {
			fmt.Fprintln(c.stdout, "Adjustments applied to the retried rounds (from the detected patterns):")
		} else {
			fmt.Fprintln(c.stdout, "Recommended adjustments (pass them with --adjust to apply; from the detected patterns):")
		}
		for _, a := range rep.Adjustments {
			fmt.Fprintf(c.stdout, "  - %s\n", a)
		}
	}
	if rep.Analysis != "" {
		fmt.Fprintf(c.stdout, "\n%s\n", strings.TrimSpace(rep.Analysis))
	}
	fmt.Fprintf(c.stdout, "%d rollback(s) left in this session. Continue with: refine resume %s --llm …\n", rep.Remaining, loc.flags())
	return exitOK
}

func cmdArchives(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine archives", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	var at locFlags
	at.register(fl, "session folder (required unless only --expire is asked, or --store)", "session ID in --store")
	cleanup := fl.String("cleanup", "", "keep, delete, recent (last 7 days) or cold (move to --cold-dir)")
	coldDir := fl.String("cold-dir", "", "cold-storage root (for --cleanup cold and --expire)")
	expire := fl.Bool("expire", false, "delete cold-stored archives older than --retention (the retention job)")
	retention := fl.Duration("retention", 30*24*time.Hour, "how long cold-stored archives are kept")
	includeUnsafe := fl.Bool("include-unsafe", false, "let --cleanup delete or move archives that do not read back safely (listed as UNSAFE)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *expire {
		return c.expireCold(*coldDir, *retention)
	}
	if at.missing() {
		fmt.Fprintln(c.stderr, "refine archives: --dir (or --store with --session) is required")
		return exitUsage
	}
	var mode rollback.Cleanup
	if *cleanup != "" {
		m, err := rollback.ParseCleanup(*cleanup)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine archives: --cleanup: %v\n", err)
			return exitUsage
		}
		mode = m
		if mode == rollback.CleanupCold && *coldDir == "" {
			fmt.Fprintln(c.stderr, "refine archives: --cleanup cold needs --cold-dir DIR")
			return exitUsage
		}
	}
	var st refine.Store
	if at.store != "" {
		om := openWrite
		if mode == "" {
			om = openRead
		}
		s, _, err := c.openLoc(ctx, at.dir, at.store, at.session, om)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine archives: %v\n", safeErr(err))
			return exitUsage
		}
		defer s.Close()
		st = s
	} else if mode == "" {
		ro, err := fs.OpenReadOnly(at.dir)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine archives: %v\n", safeErr(err))
			return exitUsage
		}
		defer ro.Close()
		st = ro
	} else {
		rw, err := c.openStore(at.dir)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine archives: %v\n", safeErr(err))
			return exitUsage
		}
		defer rw.Close()
		st = rw
	}
	infos, err := archiveInfos(ctx, st)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", safeErr(err))
		return exitUsage
	}
	if len(infos) == 0 {
		fmt.Fprintln(c.stdout, "No rollback archives in this session.")
		return exitOK
	}
	fmt.Fprintf(c.stdout, "%-36s %5s %7s %10s  %-20s  %s\n", "ARCHIVE", "ROUND", "ATTEMPT", "SIZE", "ROLLED BACK", "SAFETY")
	for _, a := range infos {
		at, verdict := "-", "ok"
		if !a.At.IsZero() {
			at = rollbackfmt.FormatTimestamp(a.At)
		}
		if a.Unsafe != "" {
			verdict = "UNSAFE: " + safeLine(a.Unsafe)
		}
		fmt.Fprintf(c.stdout, "%-36s %5d %7d %10s  %-20s  %s\n", a.Name, a.Round, a.Attempt, rollbackfmt.FormatSize(a.Size), at, verdict)
	}
	if mode == "" {
		return exitOK
	}
	safe, unsafe := rollback.SplitUnsafe(infos)
	if len(unsafe) > 0 && mode != rollback.CleanupKeep {
		if *includeUnsafe {
			for i := range infos {
				infos[i].Unsafe = ""
			}
			safe = infos
		} else {
			fmt.Fprintf(c.stderr, "refine archives: left %d archive(s) that do not read back safely in the session (listed as UNSAFE); inspect them, or pass --include-unsafe to %s them too\n",
				len(unsafe), map[rollback.Cleanup]string{rollback.CleanupCold: "move", rollback.CleanupDelete: "delete", rollback.CleanupRecent: "clean up"}[mode])
		}
	}
	now := time.Now().UTC()
	if mode == rollback.CleanupCold {
		if len(safe) == 0 {
			fmt.Fprintln(c.stdout, "Moved 0 archive(s) to cold storage.")
			return exitOK
		}
		return c.moveCold(ctx, st, safe, *coldDir, now)
	}
	_, remove := rollback.CleanupPlan(mode, infos, now, 0)
	var ops []store.Op
	for _, k := range remove {
		ops = append(ops, store.Delete(k))
	}
	if err := st.Commit(ctx, ops...); err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", safeErr(err))
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "%s: deleted %d archive(s), kept %d.\n", mode, len(remove), len(infos)-len(remove))
	return exitOK
}

// archiveInfos lists a session's archives with their metadata, and why an
// archive that does not read back safely was refused (ArchiveInfo.Unsafe).
func archiveInfos(ctx context.Context, st refine.Store) ([]rollback.ArchiveInfo, error) {
	keys, err := st.List(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []rollback.ArchiveInfo
	for _, k := range keys {
		r, n, ok := rollback.ParseArchiveName(k)
		if !ok {
			continue
		}
		b, err := st.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k, err)
		}
		info := rollback.ArchiveInfo{Name: k, Size: int64(len(b)), Round: r, Attempt: n}
		if _, meta, err := rollback.ReadArchive(b, rollback.Limits{}); err != nil {
			info.Unsafe = err.Error()
		} else {
			info.At = meta.RollbackTimestamp
		}
		out = append(out, info)
	}
	return out, nil
}

// moveCold copies the archives to cold storage, writes the manifest and
// the log, and only then removes them from the session. No link under the
// cold root is followed (see coldRoot).
func (c *cli) moveCold(ctx context.Context, st refine.Store, infos []rollback.ArchiveInfo, coldDir string, now time.Time) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(c.stderr, "refine archives: "+format+"\n", args...)
		return code
	}
	status, err := refine.Inspect(ctx, st)
	if err != nil {
		return fail(exitUsage, "%v", safeErr(err))
	}
	cold, err := openColdRoot(coldDir)
	if err != nil {
		return fail(exitFailed, "%v", safeErr(err))
	}
	defer cold.Close()
	manifestRel := filepath.Join(rollback.ColdWorkflowDir, rollback.ManifestName)
	existing, err := cold.readFile(manifestRel)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(exitFailed, "%v (nothing was moved)", safeErr(err))
	}
	plan, err := rollback.ColdPlan(existing, infos, status.SessionID, cold.dir, now)
	if err != nil {
		return fail(exitFailed, "%v", safeErr(err))
	}
	logRel, err := cold.rel(plan.LogPath)
	if err == nil {
		// Checked before anything is written: a planted link fails the
		// move while the session still holds every archive.
		err = cold.noLinks(logRel)
	}
	if err != nil {
		return fail(exitFailed, "%v", safeErr(err))
	}
	var ops []store.Op
	for _, m := range plan.Moves {
		rel, err := cold.rel(m.Path)
		var b []byte
		if err == nil {
			b, err = st.Get(ctx, m.Key)
		}
		if err == nil {
			err = cold.writeDurable(rel, b)
		}
		if err != nil {
			return fail(exitFailed, "move %s: %v (nothing was removed from the session)", m.Key, safeErr(err))
		}
		ops = append(ops, store.Delete(m.Key))
	}
	if err := cold.writeDurable(manifestRel, plan.Manifest); err != nil {
		return fail(exitFailed, "write manifest: %v (nothing was removed from the session)", safeErr(err))
	}
	if err := cold.appendText(logRel, plan.LogLine); err != nil {
		return fail(exitFailed, "write log: %v (nothing was removed from the session)", safeErr(err))
	}
	if err := st.Commit(ctx, ops...); err != nil {
		return fail(exitFailed, "%v", safeErr(err))
	}
	fmt.Fprintf(c.stdout, "Moved %d archive(s) to %s\n", len(plan.Moves), plan.Dir)
	return exitOK
}

// expireCold is the 30-day retention job over a cold-storage root. No link
// under the root is followed (see coldRoot).
func (c *cli) expireCold(coldDir string, retention time.Duration) int {
	if coldDir == "" {
		fmt.Fprintln(c.stderr, "refine archives: --expire needs --cold-dir DIR")
		return exitUsage
	}
	if retention <= 0 {
		// The library reads 0 as its default (30 days): a 0s given here
		// would silently expire nothing.
		fmt.Fprintf(c.stderr, "refine archives: --retention %v: want a positive duration (default 720h, 30 days; 1s expires every archive moved more than a second ago)\n", retention)
		return exitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", safeErr(err))
		return exitFailed
	}
	if _, err := os.Stat(coldDir); err != nil {
		return fail(err)
	}
	cold, err := openColdRoot(coldDir)
	if err != nil {
		return fail(err)
	}
	defer cold.Close()
	manifestRel := filepath.Join(rollback.ColdWorkflowDir, rollback.ManifestName)
	b, err := cold.readFile(manifestRel)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(c.stdout, "No cold-storage manifest: nothing to expire.")
		return exitOK
	}
	if err != nil {
		return fail(err)
	}
	ex, err := rollback.Expired(b, time.Now().UTC(), retention)
	if err != nil {
		return fail(err)
	}
	logRel := rollback.CleanupLogName
	if ex.Log != "" {
		if err := cold.noLinks(logRel); err != nil {
			return fail(err)
		}
	}
	for _, e := range ex.Expired {
		rel, err := cold.rel(rollback.ColdPath(cold.dir, e.Path))
		if err == nil {
			err = cold.remove(rel)
		}
		if err != nil {
			return fail(err)
		}
	}
	for _, d := range ex.EmptyDirs {
		_ = cold.remove(filepath.Join(rollback.ColdWorkflowDir, d)) // only if empty
	}
	if err := cold.writeDurable(manifestRel, ex.Manifest); err != nil {
		return fail(err)
	}
	if ex.Log != "" {
		if err := cold.appendText(logRel, ex.Log); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(c.stdout, "Expired %d archive(s).\n", len(ex.Expired))
	return exitOK
}

// rollbackFlags is the `refine rollback` command line of the rollback to
// round to with reason and adjustments, for the session at loc.
func rollbackFlags(loc sessionLoc, to int, reason string, adjustments []string) string {
	cmd := fmt.Sprintf("refine rollback %s --to %d --reason %s", loc.flags(), to, shellQuote(reason))
	for _, a := range adjustments {
		cmd += " --adjust " + shellQuote(a)
	}
	return safeLine(cmd)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func joinInts(ns []int) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, ", ")
}
