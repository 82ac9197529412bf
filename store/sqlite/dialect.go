package sqlite

import (
	"context"
	"strings"

	"github.com/refine-spec/refine/internal/sqlkv"
)

// dialect is this package's SQL for the database file at path. Writes
// need no row locks: every transaction takes the database's write lock
// at BEGIN (_txlock=immediate).
func dialect(path string) *sqlkv.Dialect {
	return &sqlkv.Dialect{
		Name:             "sqlite",
		Target:           path,
		SessionExists:    `SELECT 1 FROM refine_sessions WHERE id = ?`,
		SessionForWrite:  `SELECT 1 FROM refine_sessions WHERE id = ?`,
		SessionForDelete: `SELECT 1 FROM refine_sessions WHERE id = ?`,
		InsertSession:    `INSERT INTO refine_sessions (id, created_at, updated_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		DeleteSession: []string{
			`DELETE FROM refine_entries WHERE session_id = ?`,
			`DELETE FROM refine_leases WHERE session_id = ?`,
			`DELETE FROM refine_sessions WHERE id = ?`,
		},
		ListSessions: `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
			FROM refine_sessions ORDER BY updated_at DESC, id`,
		PageFirst: `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
			FROM refine_sessions ORDER BY updated_at DESC, id LIMIT ?`,
		PageAfter: `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
			FROM refine_sessions WHERE updated_at <= ? AND (updated_at < ? OR id > ?) ORDER BY updated_at DESC, id LIMIT ?`,
		PageBefore: `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
			FROM refine_sessions WHERE updated_at >= ? AND (updated_at > ? OR id < ?) ORDER BY updated_at ASC, id DESC LIMIT ?`,
		TouchSession: `UPDATE refine_sessions SET updated_at = ? WHERE id = ? AND has_summary = 0`,
		ClearSummary: `UPDATE refine_sessions SET has_summary = 0, updated_at = ?, round = 0, outcome = '', pending = 0, open_gaps = '{}', activity = '' WHERE id = ?`,
		SetSummary:   `UPDATE refine_sessions SET has_summary = 1, created_at = COALESCE(?, created_at), updated_at = ?, round = ?, outcome = ?, pending = ?, open_gaps = ?, activity = ? WHERE id = ?`,
		TakeLease: `INSERT INTO refine_leases (session_id, holder, token, expires_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, token = excluded.token, expires_at = excluded.expires_at
			WHERE refine_leases.expires_at <= ?
			RETURNING token`,
		ReadLease:          `SELECT holder, expires_at FROM refine_leases WHERE session_id = ?`,
		ReadLeaseForDelete: `SELECT holder, expires_at FROM refine_leases WHERE session_id = ?`,
		RenewLease:         `UPDATE refine_leases SET expires_at = ? WHERE session_id = ? AND token = ?`,
		ReleaseLease:       `DELETE FROM refine_leases WHERE session_id = ? AND token = ?`,
		GetEntry:           `SELECT value FROM refine_entries WHERE session_id = ? AND key = ?`,
		ListEntries:        `SELECT key FROM refine_entries WHERE session_id = ? ORDER BY key`,
		ListRange:          `SELECT key FROM refine_entries WHERE session_id = ? AND key >= ? AND key < ? ORDER BY key`,
		PutEntry: `INSERT INTO refine_entries (session_id, key, value) VALUES (?, ?, ?)
			ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value`,
		DeleteEntry: `DELETE FROM refine_entries WHERE session_id = ? AND key = ?`,
		// || makes TEXT of its operands, byte for byte; the CAST keeps the
		// value a BLOB.
		AppendEntry: `INSERT INTO refine_entries (session_id, key, value) VALUES (?, ?, ?)
			ON CONFLICT (session_id, key) DO UPDATE SET value = CAST(refine_entries.value || excluded.value AS BLOB)`,
		// The WHERE clause keeps the parser from reading ON CONFLICT as a
		// join's ON.
		CopyEntry: `INSERT INTO refine_entries (session_id, key, value)
			SELECT session_id, ?2, value FROM refine_entries WHERE session_id = ?1 AND key = ?3
			ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value`,
		Lookup: func(tx sqlkv.Querier, id string) sqlkv.Lookup { return lookup{tx, id} },
	}
}

// lookup answers sqlkv.CheckFolders from inside the commit's transaction.
type lookup struct {
	tx sqlkv.Querier
	id string
}

func (l lookup) Existing(ctx context.Context, keys []string) ([]string, error) {
	q := `SELECT key FROM refine_entries WHERE session_id = ? AND key IN (?` + strings.Repeat(", ?", len(keys)-1) + `)`
	args := []any{l.id}
	for _, k := range keys {
		args = append(args, k)
	}
	return sqlkv.QueryKeys(ctx, l.tx, q, args...)
}

func (l lookup) Below(ctx context.Context, prefixes []string, limit int) ([]string, error) {
	const chunk = 200 // well under SQLite's limit on bound parameters
	var found []string
	for len(prefixes) > 0 && len(found) < limit {
		n := min(chunk, len(prefixes))
		var q strings.Builder
		q.WriteString(`SELECT key FROM refine_entries WHERE session_id = ? AND (`)
		args := []any{l.id}
		for i, p := range prefixes[:n] {
			if i > 0 {
				q.WriteString(" OR ")
			}
			q.WriteString("(key >= ? AND key < ?)")
			args = append(args, p, sqlkv.PrefixEnd(p))
		}
		q.WriteString(") LIMIT ?")
		args = append(args, limit-len(found))
		keys, err := sqlkv.QueryKeys(ctx, l.tx, q.String(), args...)
		if err != nil {
			return nil, err
		}
		found = append(found, keys...)
		prefixes = prefixes[n:]
	}
	return found, nil
}
