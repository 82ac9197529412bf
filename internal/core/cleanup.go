package core

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
)

// sessionEnd offers, once a session has finished, what to do with its
// rollback archives (FLOW-007 archive cleanup): keep, delete, keep recent,
// or move to cold storage when Config.ColdStore is set.
func (s *Engine) sessionEnd() (bool, error) {
	if s.st.CleanupDone {
		return false, nil
	}
	q, infos, ok, err := cleanupQuestion(s.out, &s.cfg, s.st.Rollbacks)
	if err != nil {
		return false, err
	}
	if !ok {
		s.st.CleanupDone = true
		s.stage()
		return false, nil
	}
	q.Round = s.st.Round
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return paused, err
	}
	opt, _ := q.Option(a.Key)
	mode, now := rollback.Cleanup(opt.Effect), s.at()
	if mode == rollback.CleanupCold {
		cold, err := coldOps(s.out, s.out.ColdBase, coldSessionID(s.st.SessionID), now, infos)
		if err != nil {
			return false, err
		}
		s.out.Cold = append(s.out.Cold, cold...)
	}
	ops := CleanupDeletes(mode, infos, now)
	s.st.CleanupDone = true
	recordProcedural(s.st, s.at(), s.st.Round, "", q, a, fmt.Sprintf("%s (%d archive(s) removed from the session)", opt.Label, len(ops)))
	return false, s.checkpoint(ops...)
}

// CleanupDeletes returns the deletions of the archives that the
// session-end cleanup in mode removes from the session at now: all of
// them when they were moved to cold storage.
func CleanupDeletes(mode rollback.Cleanup, infos []rollback.ArchiveInfo, now time.Time) []store.Op {
	var ops []store.Op
	if mode == rollback.CleanupCold {
		for _, a := range infos {
			ops = append(ops, store.Delete(a.Name))
		}
		return ops
	}
	_, remove := rollback.CleanupPlan(mode, infos, now, 0)
	for _, k := range remove {
		ops = append(ops, store.Delete(k))
	}
	return ops
}

// cleanupQuestion lists the rollback archives in store and returns the
// session-end question about them; ok is false when there is nothing to
// ask (no archive). h is the session's rollback history, cfg its
// configuration (the cold store).
func cleanupQuestion(sv view, cfg *Params, h rollback.History) (q question.Question, infos []rollback.ArchiveInfo, ok bool, err error) {
	infos, err = archiveInfos(sv, h)
	if err != nil {
		return question.Question{}, nil, false, err
	}
	q, ok = rollbacktext.SessionEndQuestion(infos, coldStoreName(cfg))
	return q, infos, ok, nil
}

// coldStoreName is how the session-end question names the cold store:
// "" when there is none.
func coldStoreName(cfg *Params) string {
	switch {
	case !cfg.HasColdStore:
		return ""
	case cfg.ColdStorage != "":
		return cfg.ColdStorage // where the host says it is
	}
	return "the configured cold store"
}

// archiveInfos lists the rollback archives in store, each with when the
// rollback in h that made it happened.
func archiveInfos(sv view, h rollback.History) ([]rollback.ArchiveInfo, error) {
	keys, err := sv.List("")
	if err != nil {
		return nil, fmt.Errorf("archive cleanup: %w", err)
	}
	var infos []rollback.ArchiveInfo
	for _, k := range keys {
		r, n, ok := rollback.ParseArchiveName(k)
		if !ok {
			continue
		}
		b, err := sv.Get(k)
		if err != nil {
			return nil, fmt.Errorf("archive cleanup: read %s: %w", k, err)
		}
		info := rollback.ArchiveInfo{Name: k, Size: int64(len(b)), Round: r, Attempt: n}
		// An archive that does not read back safely (a link, a path out of
		// its folder, too large unpacked) is never removed or moved to
		// cold storage: it stays for a person to look at.
		if _, _, err := rollback.ReadArchive(b, rollback.Limits{}); err != nil { // zero Limits: the defaults
			info.Unsafe = err.Error()
		}
		for _, rec := range h.Records {
			if rec.Archive == k {
				info.At = rec.At
			}
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// coldOps are the writes that copy the archives from store into cold
// under spec_refinement_workflow/<date>_session_<id>/, update
// manifest.json and append to cleanup_log.txt: one commit of the cold
// store, which the driver makes before the commit that deletes the
// archives from the session (Ready.Cold). It only reads cold.
func coldOps(sv, cold view, sessionID string, now time.Time, infos []rollback.ArchiveInfo) ([]store.Op, error) {
	manifestKey := path.Join(rollback.ColdWorkflowDir, rollback.ManifestName)
	existing, err := cold.Get(manifestKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("cold storage: read manifest: %w", err)
	}
	plan, err := rollback.ColdPlan(existing, infos, sessionID, ".", now)
	if err != nil {
		return nil, fmt.Errorf("cold storage: %w", err)
	}
	key := func(p string) string { return strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, "\\", "/")), "./") }
	var ops []store.Op
	for _, m := range plan.Moves {
		b, err := sv.Get(m.Key)
		if err != nil {
			return nil, fmt.Errorf("cold storage: read %s: %w", m.Key, err)
		}
		ops = append(ops, store.Put(key(m.Path), b))
	}
	log, err := cold.Get(key(plan.LogPath))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("cold storage: read log: %w", err)
	}
	ops = append(ops, store.Put(key(plan.ManifestPath), plan.Manifest), store.Put(key(plan.LogPath), append(log, plan.LogLine...)))
	return ops, nil
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
