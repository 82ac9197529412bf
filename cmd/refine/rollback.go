package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store/fs"
)

// offlineRole stands in for the LLM roles in commands that never call one
// (rollback, archives): a call is a bug, and says so.
var offlineRole = refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
	return refine.Response{}, errors.New("refine: this command does not call an LLM role")
})

func cmdRollback(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine rollback", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	dir := fl.String("dir", "", "session folder (required)")
	to := fl.Int("to", -1, "restore the state after this round, undoing the rounds after it (required)")
	reason := fl.String("reason", "", "why the rounds are rolled back (required; recorded in the archive)")
	var adjust multiFlag
	fl.Var(&adjust, "adjust", "an instruction for the retried rounds (repeatable)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *dir == "" || *to < 0 || strings.TrimSpace(*reason) == "" {
		fmt.Fprintln(c.stderr, "refine rollback: --dir, --to N (0 or more) and --reason are required")
		return exitUsage
	}
	if _, err := os.Stat(filepath.Join(*dir, "state.json")); err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %s holds no session (no state.json)\n", *dir)
		return exitUsage
	}
	st, err := fs.Open(*dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %v\n", err)
		return exitUsage
	}
	defer st.Close()
	cfg := refine.DefaultConfig()
	cfg.Store, cfg.Engineer, cfg.Reviewer, cfg.Asker = st, offlineRole, offlineRole, refine.DeferAsker{}
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %v\n", err)
		return exitUsage
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: *to, Reason: *reason, Adjustments: adjust})
	if err != nil {
		fmt.Fprintf(c.stderr, "refine rollback: %v\n", err)
		if errors.Is(err, refine.ErrRollbackLimit) {
			fmt.Fprintln(c.stderr, "The session rollback limit is reached: finish the session, or raise the limit in a host program (Config.RollbackLimit).")
		}
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "Rolled back to round %d: undid round(s) %s.\n", rep.Round, joinInts(rep.Undone))
	for _, a := range rep.Archives {
		fmt.Fprintf(c.stdout, "  archived: %s\n", filepath.Join(*dir, a))
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
	fmt.Fprintf(c.stdout, "%d rollback(s) left in this session. Continue with: refine resume --dir %s --llm …\n", rep.Remaining, *dir)
	return exitOK
}

func cmdArchives(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine archives", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	dir := fl.String("dir", "", "session folder (required unless only --expire is asked)")
	cleanup := fl.String("cleanup", "", "keep, delete, recent (last 7 days) or cold (move to --cold-dir)")
	coldDir := fl.String("cold-dir", "", "cold-storage root (for --cleanup cold and --expire)")
	expire := fl.Bool("expire", false, "delete cold-stored archives older than --retention (the retention job)")
	retention := fl.Duration("retention", 30*24*time.Hour, "how long cold-stored archives are kept")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *expire {
		return c.expireCold(*coldDir, *retention)
	}
	if *dir == "" {
		fmt.Fprintln(c.stderr, "refine archives: --dir is required")
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
	if mode == "" {
		ro, err := fs.OpenReadOnly(*dir)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
			return exitUsage
		}
		defer ro.Close()
		st = ro
	} else {
		rw, err := fs.Open(*dir)
		if err != nil {
			fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
			return exitUsage
		}
		defer rw.Close()
		st = rw
	}
	infos, err := archiveInfos(ctx, st)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitUsage
	}
	if len(infos) == 0 {
		fmt.Fprintln(c.stdout, "No rollback archives in this session.")
		return exitOK
	}
	fmt.Fprintf(c.stdout, "%-36s %5s %7s %10s  %s\n", "ARCHIVE", "ROUND", "ATTEMPT", "SIZE", "ROLLED BACK")
	for _, a := range infos {
		fmt.Fprintf(c.stdout, "%-36s %5d %7d %10s  %s\n", a.Name, a.Round, a.Attempt, rollback.FormatSize(a.Size), rollback.FormatTimestamp(a.At))
	}
	if mode == "" {
		return exitOK
	}
	now := time.Now().UTC()
	if mode == rollback.CleanupCold {
		return c.moveCold(ctx, st, infos, *dir, *coldDir, now)
	}
	_, remove := rollback.CleanupPlan(mode, infos, now, 0)
	var ops []refine.Op
	for _, k := range remove {
		ops = append(ops, refine.Delete(k))
	}
	if err := st.Commit(ctx, ops...); err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "%s: deleted %d archive(s), kept %d.\n", mode, len(remove), len(infos)-len(remove))
	return exitOK
}

// archiveInfos lists a session's archives with their metadata.
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
		if _, meta, err := rollback.ReadArchive(b, rollback.Limits{}); err == nil {
			info.At = meta.RollbackTimestamp
		}
		out = append(out, info)
	}
	return out, nil
}

// moveCold copies the archives to cold storage, writes the manifest and
// the log, and only then removes them from the session.
func (c *cli) moveCold(ctx context.Context, st refine.Store, infos []rollback.ArchiveInfo, dir, coldDir string, now time.Time) int {
	status, err := refine.Inspect(ctx, st)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitUsage
	}
	manifestPath := filepath.Join(coldDir, rollback.ColdWorkflowDir, rollback.ManifestName)
	existing, err := os.ReadFile(manifestPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitFailed
	}
	plan, err := rollback.ColdPlan(existing, infos, status.SessionID, coldDir, now)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitFailed
	}
	if err := os.MkdirAll(plan.Dir, 0o700); err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitFailed
	}
	var ops []refine.Op
	for _, m := range plan.Moves {
		b, err := st.Get(ctx, m.Key)
		if err == nil {
			err = writeDurable(m.Path, b)
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "refine archives: move %s: %v (nothing was removed from the session)\n", m.Key, err)
			return exitFailed
		}
		ops = append(ops, refine.Delete(m.Key))
	}
	if err := writeDurable(plan.ManifestPath, plan.Manifest); err != nil {
		fmt.Fprintf(c.stderr, "refine archives: write manifest: %v (nothing was removed from the session)\n", err)
		return exitFailed
	}
	if err := appendLine(plan.LogPath, plan.LogLine); err != nil {
		fmt.Fprintf(c.stderr, "refine archives: write log: %v\n", err)
		return exitFailed
	}
	if err := st.Commit(ctx, ops...); err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "Moved %d archive(s) to %s\n", len(plan.Moves), plan.Dir)
	return exitOK
}

// expireCold is the 30-day retention job over a cold-storage root.
func (c *cli) expireCold(coldDir string, retention time.Duration) int {
	if coldDir == "" {
		fmt.Fprintln(c.stderr, "refine archives: --expire needs --cold-dir DIR")
		return exitUsage
	}
	manifestPath := filepath.Join(coldDir, rollback.ColdWorkflowDir, rollback.ManifestName)
	b, err := os.ReadFile(manifestPath)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(c.stdout, "No cold-storage manifest: nothing to expire.")
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitFailed
	}
	ex, err := rollback.Expired(b, time.Now().UTC(), retention)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitFailed
	}
	for _, e := range ex.Expired {
		if err := os.Remove(rollback.ColdPath(coldDir, e.Path)); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
			return exitFailed
		}
	}
	for _, d := range ex.EmptyDirs {
		_ = os.Remove(filepath.Join(coldDir, rollback.ColdWorkflowDir, d)) // only if empty
	}
	if err := writeDurable(manifestPath, ex.Manifest); err != nil {
		fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
		return exitFailed
	}
	if ex.Log != "" {
		if err := appendLine(filepath.Join(coldDir, rollback.CleanupLogName), ex.Log); err != nil {
			fmt.Fprintf(c.stderr, "refine archives: %v\n", err)
			return exitFailed
		}
	}
	fmt.Fprintf(c.stdout, "Expired %d archive(s).\n", len(ex.Expired))
	return exitOK
}

// writeDurable writes path atomically (temp file, fsync, rename), mode 0600.
func writeDurable(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func appendLine(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
