package sqlkv

// Dialect is what a backend package says in its own SQL. Each statement
// takes the arguments listed, in that order; times are Unix nanoseconds.
// The tables are refine_sessions (one row a session, with the summary
// columns), refine_entries (session_id, key, value) and refine_leases
// (session_id, holder, token, expires_at).
type Dialect struct {
	// Name starts every error message ("sqlite", "postgres").
	Name string
	// Target names the database in some error messages (a file path);
	// "" names none.
	Target string

	// SessionExists selects 1 for a session (id).
	SessionExists string
	// SessionForWrite is SessionExists that also keeps the row from
	// being deleted until the transaction ends (id).
	SessionForWrite string
	// LockSession locks the session row for a commit, before the lease
	// row (see the lock order at Driver); "" when the database locks as a
	// whole (id).
	LockSession string
	// SessionForDelete is SessionExists that locks the row for a delete
	// (id).
	SessionForDelete string
	// InsertSession adds a session row, changing nothing when the id is
	// taken (id, created_at, updated_at).
	InsertSession string
	// DeleteSession removes a session with its entries and lease, one
	// statement after another (id).
	DeleteSession []string
	// ListSessions selects id, created_at, updated_at, round, outcome,
	// pending, open_gaps, activity of every session, newest activity
	// first.
	ListSessions string
	// PageFirst, PageAfter and PageBefore select ListSessions's columns
	// for one page by the index on (updated_at DESC, id): the first
	// (limit), the one after a session (updated_at, updated_at, id,
	// limit) and the one before it, in reverse order (updated_at,
	// updated_at, id, limit).
	PageFirst, PageAfter, PageBefore string
	// TouchSession sets updated_at of a session without a summary
	// (updated_at, id).
	TouchSession string
	// ClearSummary clears the summary columns (updated_at, id).
	ClearSummary string
	// SetSummary sets the summary columns; a NULL created_at keeps the
	// row's (created_at, updated_at, round, outcome, pending, open_gaps,
	// activity, id).
	SetSummary string

	// TakeLease inserts or takes over an expired lease, or one that
	// already has the token (a retried attempt that landed), resets its
	// commit sequence and returns its token; no row when a live lease
	// stands (id, holder, token, expires_at, now).
	TakeLease string
	// ReadLease selects holder, expires_at of a session's lease (id).
	ReadLease string
	// ReadLeaseForDelete is ReadLease that locks the row for a delete
	// (id).
	ReadLeaseForDelete string
	// RenewLease sets expires_at if the lease is still the token's
	// (expires_at, id, token).
	RenewLease string
	// CommitLease is RenewLease that also counts the commit: it adds one
	// to the lease row's commit sequence and returns it; no row when the
	// lease is no longer the token's (expires_at, id, token). "" uses
	// RenewLease, and a commit whose COMMIT failed is not retried.
	CommitLease string
	// ReadToken selects the token of a session's lease (id).
	ReadToken string
	// ReleaseLease deletes the lease if it is still the token's (id,
	// token).
	ReleaseLease string

	// GetEntry selects the value at a key (id, key).
	GetEntry string
	// ListEntries selects every key of a session, sorted (id).
	ListEntries string
	// ListRange selects the keys in [lo, hi) of a session, sorted (id,
	// lo, hi).
	ListRange string
	// PutEntry inserts or replaces a value (id, key, value).
	PutEntry string
	// DeleteEntry deletes a key (id, key).
	DeleteEntry string
	// AppendEntry adds bytes at the end of a key's value, in the database
	// (the value is not sent again), inserting the key when absent (id,
	// key, value). "" makes the Store no store.Appender.
	AppendEntry string
	// CopyEntry sets a key to another key's value, in the database (the
	// value is not sent again), changing nothing when that key is absent
	// (id, key, from). "" makes the Store no store.Copier.
	CopyEntry string

	// Lookup answers CheckFolders, and whether the keys a commit copies
	// are stored, for session id from inside the commit's transaction tx.
	Lookup func(tx Querier, id string) Lookup
}

func (d *Dialect) closedMsg() string {
	if d.Target == "" {
		return "the database connection is closed"
	}
	return "the database " + d.Target + " is closed"
}

// in is " in TARGET", or "" when there is no target.
func (d *Dialect) in() string {
	if d.Target == "" {
		return ""
	}
	return " in " + d.Target
}
