package rollback

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// Planning errors; PlanRollback wraps them in *rangeError, *LimitError and
// *UnavailableError values that carry the details.
var (
	// ErrOutOfRange: the target is not a round before the current one.
	ErrOutOfRange = errors.New("rollback target out of range")
	// ErrLimit: the session rollback limit is reached (or would be exceeded).
	ErrLimit = errors.New("session rollback limit reached")
	// ErrTargetUnavailable: the target's backups were rotated out.
	ErrTargetUnavailable = errors.New("rollback target unavailable")
)

// rangeError reports a target outside [0, current).
type rangeError struct{ To, Current int }

// Error says which target was asked for and what the valid range is.
func (e *rangeError) Error() string {
	return fmt.Sprintf("rollback: cannot roll back to round %d from round %d: the target must be in [0, %d)", e.To, e.Current, e.Current)
}

// Unwrap makes errors.Is(err, ErrOutOfRange) hold.
func (e *rangeError) Unwrap() error { return ErrOutOfRange }

// LimitError reports the session limit: Used rollbacks so far, Needed more
// for this request (one per undone round), Limit in total.
type LimitError struct{ Used, needed, Limit int }

// Error says how many rollbacks were used, needed and allowed.
func (e *LimitError) Error() string {
	if e.Used >= e.Limit {
		return fmt.Sprintf("rollback: session rollback limit reached: used %d of %d", e.Used, e.Limit)
	}
	return fmt.Sprintf("rollback: session rollback limit: undoing %d rounds needs %d rollbacks, %d of %d remain", e.needed, e.needed, e.Limit-e.Used, e.Limit)
}

// Unwrap makes errors.Is(err, ErrLimit) hold.
func (e *LimitError) Unwrap() error { return ErrLimit }

// UnavailableError reports a target whose backups are gone, with the
// targets that remain (newest first).
type UnavailableError struct {
	to, current int
	available   []int
	retention   int
}

// Error names the target and lists the targets still available.
func (e *UnavailableError) Error() string {
	avail := "none"
	if len(e.available) > 0 {
		avail = rollbackfmt.JoinInts(e.available)
	}
	return fmt.Sprintf("rollback: round %d cannot be restored from round %d: its backups were rotated out (only the last %d rounds are kept); available targets: %s", e.to, e.current, e.retention, avail)
}

// Unwrap makes errors.Is(err, ErrTargetUnavailable) hold.
func (e *UnavailableError) Unwrap() error { return ErrTargetUnavailable }

// Request asks for a rollback plan.
type Request struct {
	// Current is the round the session is at: the last round that ran or
	// is running. To is the target: the session is restored to the state
	// after round To, undoing rounds To+1 … Current.
	Current, To int
	// Keys are every key in the session Store (Store.List("")).
	Keys []string
	// History is the session's rollback history (for the limit and the
	// per-round attempt numbers).
	History History
	// Limit is the session rollback limit (<= 0: DefaultLimit) and
	// Retention the backup retention (<= 0: DefaultRetention; used in messages).
	Limit, Retention int
}

// Plan is a checked rollback: what to archive, restore and delete.
type Plan struct {
	Current, To int
	// Rounds are the undone rounds, newest first (the order the spec's
	// Example 2 archives them in).
	Rounds []RoundPlan
	// Restore copies the target's backups to the live files.
	Restore []Copy
	// Delete lists the keys removed: the undone rounds' folders, backups of
	// undone rounds (they describe the discarded timeline and would
	// otherwise be offered as targets or restored later), and
	// final_spec.md / final_summary.md (with the integration step's trace
	// and final/ folder) of a finished session being reopened.
	Delete []string
}

// RoundPlan is the archiving of one undone round.
type RoundPlan struct {
	Round int
	// Attempt is this round's rollback number K, 1-based.
	Attempt int
	// Archive is the archive key, ArchiveName(Round, Attempt).
	Archive string
	// Keys are the round folder's keys (under RoundPrefix(Round)), sorted.
	Keys []string
}

// Keys written when a session terminates; a rollback reopens the session.
// The integration step's trace and its calls' journal (under final/) go
// with them.
var finalKeys = [...]string{"final_spec.md", "final_summary.md", "final_spec_trace.json"}

// finalPrefix holds the integration step's prompts and responses.
const finalPrefix = "final/"

// PlanRollback checks a rollback request and plans it. Checks, in order:
// the target must be in [0, Current) (ErrOutOfRange); the session must have
// a rollback left for every undone round (ErrLimit; with the defaults the
// 8th is refused); the target's status, decisions and state backups must
// all be present (ErrTargetUnavailable, listing the available targets).
//
// K for each round is one more than the larger of its history count and the
// highest K among its archives present, so archive names never collide even
// if history and Store disagree.
func PlanRollback(req Request) (Plan, error) {
	if req.To < 0 || req.To >= req.Current {
		return Plan{}, &rangeError{To: req.To, Current: req.Current}
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	retention := req.Retention
	if retention <= 0 {
		retention = DefaultRetention
	}
	needed := req.Current - req.To
	if used := req.History.Used(); used+needed > limit {
		return Plan{}, &LimitError{Used: used, needed: needed, Limit: limit}
	}
	avail := AvailableTargets(req.Current, req.Keys)
	if !slices.Contains(avail, req.To) {
		return Plan{}, &UnavailableError{to: req.To, current: req.Current, available: avail, retention: retention}
	}

	p := Plan{Current: req.Current, To: req.To}
	maxK := map[int]int{}
	for _, k := range req.Keys {
		if r, n, ok := ParseArchiveName(k); ok {
			maxK[r] = max(maxK[r], n)
		}
	}
	for r := req.Current; r > req.To; r-- {
		rp := RoundPlan{Round: r, Attempt: max(maxK[r], req.History.Attempts(r)) + 1}
		rp.Archive = ArchiveName(r, rp.Attempt)
		for _, k := range req.Keys {
			if strings.HasPrefix(k, RoundPrefix(r)) {
				rp.Keys = append(rp.Keys, k)
			}
		}
		slices.Sort(rp.Keys)
		p.Rounds = append(p.Rounds, rp)
		p.Delete = append(p.Delete, rp.Keys...)
	}
	for _, kind := range backupKinds() {
		p.Restore = append(p.Restore, Copy{From: kind.key(req.To), To: kind.live()})
	}
	for _, k := range req.Keys {
		if _, n, ok := ParseBackupKey(k); ok && n > req.To {
			p.Delete = append(p.Delete, k)
		}
		if slices.Contains(finalKeys[:], k) || strings.HasPrefix(k, finalPrefix) {
			p.Delete = append(p.Delete, k)
		}
	}
	return p, nil
}

// Reads returns every key whose bytes Execute needs: the undone round
// folders' files and the target's backups, sorted.
func (p Plan) Reads() []string {
	var out []string
	for _, rp := range p.Rounds {
		out = append(out, rp.Keys...)
	}
	for _, c := range p.Restore {
		out = append(out, c.From)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// undone returns the undone rounds, ascending.
func (p Plan) undone() []int {
	out := make([]int, 0, len(p.Rounds))
	for _, rp := range p.Rounds {
		out = append(out, rp.Round)
	}
	slices.Sort(out)
	return out
}
