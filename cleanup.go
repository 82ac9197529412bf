package refine

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/rollback"
)

// sessionEnd offers, once a session has finished, what to do with its
// rollback archives (FLOW-007 archive cleanup): keep, delete, keep recent,
// or move to cold storage when Config.ColdStore is set.
func (s *Session) sessionEnd(ctx context.Context) (bool, error) {
	if s.st.CleanupDone {
		return false, nil
	}
	q, infos, ok, err := cleanupQuestion(ctx, s.cfg, s.st)
	if err != nil {
		return false, err
	}
	if !ok {
		s.st.CleanupDone = true
		s.stage()
		return false, nil
	}
	q.Round = s.st.Round
	a, paused, err := s.ask(ctx, q)
	if err != nil || paused {
		return paused, err
	}
	opt, _ := q.Option(a.Key)
	mode, now := rollback.Cleanup(opt.Effect), s.now()
	if mode == rollback.CleanupCold {
		if err := moveToCold(ctx, s.cfg, coldSessionID(s.st.SessionID), now, infos); err != nil {
			return false, err
		}
	}
	ops := cleanupOps(mode, infos, now)
	s.st.CleanupDone = true
	s.recordProcedural(s.st.Round, "", q, a, fmt.Sprintf("%s (%d archive(s) removed from the session)", opt.Label, len(ops)))
	return false, s.commit(ctx, ops...)
}

// cleanupOps remove the archives the user's cleanup choice takes out of
// the session: all of them when they went to cold storage.
func cleanupOps(mode rollback.Cleanup, infos []rollback.ArchiveInfo, now time.Time) []Op {
	var ops []Op
	if mode == rollback.CleanupCold {
		for _, a := range infos {
			ops = append(ops, Delete(a.Name))
		}
		return ops
	}
	_, remove := rollback.CleanupPlan(mode, infos, now, 0)
	for _, k := range remove {
		ops = append(ops, Delete(k))
	}
	return ops
}

// cleanupQuestion lists the rollback archives in cfg.Store and returns
// the session-end question about them; ok is false when there is nothing
// to ask (no archive).
func cleanupQuestion(ctx context.Context, cfg Config, st *state) (q Question, infos []rollback.ArchiveInfo, ok bool, err error) {
	keys, err := cfg.Store.List(ctx, "")
	if err != nil {
		return Question{}, nil, false, fmt.Errorf("archive cleanup: %w", err)
	}
	for _, k := range keys {
		r, n, ok := rollback.ParseArchiveName(k)
		if !ok {
			continue
		}
		b, err := cfg.Store.Get(ctx, k)
		if err != nil {
			return Question{}, nil, false, fmt.Errorf("archive cleanup: read %s: %w", k, err)
		}
		info := rollback.ArchiveInfo{Name: k, Size: int64(len(b)), Round: r, Attempt: n}
		// An archive that does not read back safely (a link, a path out of
		// its folder, too large unpacked) is never removed or moved to
		// cold storage: it stays for a person to look at.
		if _, _, err := rollback.ReadArchive(b, rollback.Limits{}); err != nil { // zero Limits: the defaults
			info.Unsafe = err.Error()
		}
		for _, rec := range st.Rollbacks.Records {
			if rec.Archive == k {
				info.At = rec.At
			}
		}
		infos = append(infos, info)
	}
	coldName := ""
	if cfg.ColdStore != nil {
		coldName = "the configured cold store"
		if cfg.ColdStorage != "" {
			coldName = cfg.ColdStorage // where the host says it is
		}
	}
	q, ok = rollbacktext.SessionEndQuestion(infos, coldName)
	return q, infos, ok, nil
}

// moveToCold copies the archives from cfg.Store into cfg.ColdStore under
// spec_refinement_workflow/<date>_session_<id>/, updates manifest.json and
// appends to cleanup_log.txt, all in one commit of the cold store; the
// caller then deletes the archives from the session.
func moveToCold(ctx context.Context, cfg Config, id string, now time.Time, infos []rollback.ArchiveInfo) error {
	manifestKey := path.Join(rollback.ColdWorkflowDir, rollback.ManifestName)
	existing, err := cfg.ColdStore.Get(ctx, manifestKey)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("cold storage: read manifest: %w", err)
	}
	plan, err := rollback.ColdPlan(existing, infos, id, ".", now)
	if err != nil {
		return fmt.Errorf("cold storage: %w", err)
	}
	key := func(p string) string { return strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, "\\", "/")), "./") }
	var ops []Op
	for _, m := range plan.Moves {
		b, err := cfg.Store.Get(ctx, m.Key)
		if err != nil {
			return fmt.Errorf("cold storage: read %s: %w", m.Key, err)
		}
		ops = append(ops, Put(key(m.Path), b))
	}
	log, err := cfg.ColdStore.Get(ctx, key(plan.LogPath))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("cold storage: read log: %w", err)
	}
	ops = append(ops, Put(key(plan.ManifestPath), plan.Manifest), Put(key(plan.LogPath), append(log, plan.LogLine...)))
	if err := cfg.ColdStore.Commit(ctx, ops...); err != nil {
		return fmt.Errorf("cold storage: %w", err)
	}
	return nil
}

// coldSessionID makes a session ID usable in cold-storage folder names.
func coldSessionID(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "session"
	}
	return b.String()
}
