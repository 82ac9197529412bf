package postgres

import (
	"context"

	"github.com/refine-spec/refine/internal/sqlkv"
)

// dialect is this package's SQL. Row locks keep concurrent writers on
// other machines apart, always taken in the order sqlkv.Driver documents:
// the session row (FOR KEY SHARE to open, FOR NO KEY UPDATE to commit,
// FOR UPDATE to delete), then the lease row, then the entries, so no two
// transactions wait for each other in a circle. FOR KEY SHARE, which
// opening takes, does not conflict with a commit's FOR NO KEY UPDATE, so
// refine status and resume do not hold up a running session's commits.
func dialect() *sqlkv.Dialect {
	return &sqlkv.Dialect{
		Name:             "postgres",
		SessionExists:    `SELECT 1 FROM refine_sessions WHERE id = $1`,
		SessionForWrite:  `SELECT 1 FROM refine_sessions WHERE id = $1 FOR KEY SHARE`,
		LockSession:      `SELECT 1 FROM refine_sessions WHERE id = $1 FOR NO KEY UPDATE`,
		SessionForDelete: `SELECT 1 FROM refine_sessions WHERE id = $1 FOR UPDATE`,
		InsertSession:    `INSERT INTO refine_sessions (id, created_at, updated_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
		// Entries and lease go with the session row (ON DELETE CASCADE).
		DeleteSession: []string{`DELETE FROM refine_sessions WHERE id = $1`},
		ListSessions: `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
			FROM refine_sessions ORDER BY updated_at DESC, id`,
		PageFirst: `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
			FROM refine_sessions ORDER BY updated_at DESC, id LIMIT $1`,
		PageAfter: `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
			FROM refine_sessions WHERE updated_at <= $1 AND (updated_at < $2 OR id > $3) ORDER BY updated_at DESC, id LIMIT $4`,
		PageBefore: `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
			FROM refine_sessions WHERE updated_at >= $1 AND (updated_at > $2 OR id < $3) ORDER BY updated_at ASC, id DESC LIMIT $4`,
		TouchSession: `UPDATE refine_sessions SET updated_at = $1 WHERE id = $2 AND NOT has_summary`,
		ClearSummary: `UPDATE refine_sessions SET has_summary = FALSE, updated_at = $1, round = 0, outcome = '', pending = 0, open_gaps = '{}', activity = '' WHERE id = $2`,
		SetSummary:   `UPDATE refine_sessions SET has_summary = TRUE, created_at = COALESCE($1, created_at), updated_at = $2, round = $3, outcome = $4, pending = $5, open_gaps = $6, activity = $7 WHERE id = $8`,
		// The row lock of the upsert makes taking the lease atomic across
		// processes.
		TakeLease: `INSERT INTO refine_leases (session_id, holder, token, expires_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at, seq = 0
			WHERE refine_leases.expires_at <= $5 OR refine_leases.token = $3
			RETURNING token`,
		CommitLease:        `UPDATE refine_leases SET expires_at = $1, seq = seq + 1 WHERE session_id = $2 AND token = $3 RETURNING seq`,
		ReadToken:          `SELECT token FROM refine_leases WHERE session_id = $1`,
		ReadLease:          `SELECT holder, expires_at FROM refine_leases WHERE session_id = $1`,
		ReadLeaseForDelete: `SELECT holder, expires_at FROM refine_leases WHERE session_id = $1 FOR UPDATE`,
		RenewLease:         `UPDATE refine_leases SET expires_at = $1 WHERE session_id = $2 AND token = $3`,
		ReleaseLease:       `DELETE FROM refine_leases WHERE session_id = $1 AND token = $2`,
		GetEntry:           `SELECT value FROM refine_entries WHERE session_id = $1 AND key = $2`,
		ListEntries:        `SELECT key FROM refine_entries WHERE session_id = $1 ORDER BY key`,
		ListRange:          `SELECT key FROM refine_entries WHERE session_id = $1 AND key >= $2 AND key < $3 ORDER BY key`,
		PutEntry: `INSERT INTO refine_entries (session_id, key, value) VALUES ($1, $2, $3)
			ON CONFLICT (session_id, key) DO UPDATE SET value = EXCLUDED.value`,
		DeleteEntry: `DELETE FROM refine_entries WHERE session_id = $1 AND key = $2`,
		AppendEntry: `INSERT INTO refine_entries (session_id, key, value) VALUES ($1, $2, $3)
			ON CONFLICT (session_id, key) DO UPDATE SET value = refine_entries.value || EXCLUDED.value`,
		CopyEntry: `INSERT INTO refine_entries (session_id, key, value)
			SELECT session_id, $2::text, value FROM refine_entries WHERE session_id = $1 AND key = $3
			ON CONFLICT (session_id, key) DO UPDATE SET value = EXCLUDED.value`,
		Lookup: func(tx sqlkv.Querier, id string) sqlkv.Lookup { return lookup{tx, id} },
	}
}

// lookup answers sqlkv.CheckFolders from inside the commit's transaction,
// one query each whatever the commit's size (arrays, not one parameter a
// key).
type lookup struct {
	tx sqlkv.Querier
	id string
}

func (l lookup) Existing(ctx context.Context, keys []string) ([]string, error) {
	return sqlkv.QueryKeys(ctx, l.tx, `SELECT key FROM refine_entries WHERE session_id = $1 AND key = ANY($2)`, l.id, keys)
}

func (l lookup) Below(ctx context.Context, prefixes []string, limit int) ([]string, error) {
	ends := make([]string, len(prefixes))
	for i, p := range prefixes {
		ends[i] = sqlkv.PrefixEnd(p)
	}
	return sqlkv.QueryKeys(ctx, l.tx, `SELECT e.key FROM refine_entries e JOIN unnest($2::text[], $3::text[]) AS r (lo, hi)
		ON e.key >= r.lo COLLATE "C" AND e.key < r.hi COLLATE "C" WHERE e.session_id = $1 LIMIT $4`,
		l.id, prefixes, ends, limit)
}
