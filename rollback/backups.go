package rollback

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// DefaultRetention is how many rounds of backups are kept (spec:
// backup_retention_rounds = 3), which is also how far back a multi-round
// rollback can go.
const DefaultRetention = 3

// The live session files a backup set snapshots: the status and decisions
// renderings and the session state (docs/workflow.md#session-folder).
const (
	StatusKey    = "status.md"
	DecisionsKey = "decisions.md"
	StateKey     = "state.json"
)

// BackupKind names one of the three files in a round's backup set.
type BackupKind string

// The three backup kinds. State is refine's addition to the spec's two:
// state.json is the source of truth, the markdown files are renderings of it.
const (
	statusBackup    BackupKind = "status"
	decisionsBackup BackupKind = "decisions"
	StateBackup     BackupKind = "state"
)

// backupKinds returns the three kinds in the order restores are listed.
func backupKinds() []BackupKind { return []BackupKind{statusBackup, decisionsBackup, StateBackup} }

// live returns the session key a backup of this kind restores to.
func (k BackupKind) live() string {
	switch k {
	case statusBackup:
		return StatusKey
	case decisionsBackup:
		return DecisionsKey
	case StateBackup:
		return StateKey
	}
	return ""
}

// key returns the backup key of this kind for round n.
func (k BackupKind) key(n int) string {
	switch k {
	case statusBackup:
		return statusBackupKey(n)
	case decisionsBackup:
		return decisionsBackupKey(n)
	case StateBackup:
		return StateBackupKey(n)
	}
	return ""
}

// statusBackupKey is the snapshot of status.md as it was after round n
// ("status_backup_round_3.md").
func statusBackupKey(n int) string { return fmt.Sprintf("status_backup_round_%d.md", n) }

// decisionsBackupKey is the snapshot of decisions.md after round n
// ("decisions_backup_round_3.md").
func decisionsBackupKey(n int) string { return fmt.Sprintf("decisions_backup_round_%d.md", n) }

// StateBackupKey is the snapshot of state.json after round n
// ("state_backup_round_3.json").
func StateBackupKey(n int) string { return fmt.Sprintf("state_backup_round_%d.json", n) }

// backupKeys returns the three backup keys of round n.
func backupKeys(n int) []string {
	return []string{statusBackupKey(n), decisionsBackupKey(n), StateBackupKey(n)}
}

// Round numbers are capped at six digits so parsing can never overflow.
var backupKeyPattern = regexp.MustCompile(`^(?:(status)_backup_round_(0|[1-9]\d{0,5})\.md|(decisions)_backup_round_(0|[1-9]\d{0,5})\.md|(state)_backup_round_(0|[1-9]\d{0,5})\.json)$`)

// ParseBackupKey recognises a backup key and returns its kind and round.
func ParseBackupKey(key string) (kind BackupKind, round int, ok bool) {
	m := backupKeyPattern.FindStringSubmatch(key)
	if m == nil {
		return "", 0, false
	}
	for i := 1; i+1 < len(m); i += 2 {
		if m[i] != "" {
			n, _ := strconv.Atoi(m[i+1])
			return BackupKind(m[i]), n, true
		}
	}
	return "", 0, false
}

// rotationOps says what to do before round `round` runs, as the spec's
// rotation does: snapshot the state after round-1, and delete the backup of
// round-1-retention (N-4 with the default 3), which leaves exactly the last
// `retention` rounds. retention <= 0 means DefaultRetention. Round 1
// snapshots round 0: the session as it was before any round, so the first
// round can be rolled back too.
func rotationOps(round, retention int) (snapshotRound int, deleteRounds []int) {
	if retention <= 0 {
		retention = DefaultRetention
	}
	if old := round - 1 - retention; old >= 0 {
		deleteRounds = []int{old}
	}
	return round - 1, deleteRounds
}

// Copy is one key-to-key copy (a snapshot or a restore).
type Copy struct {
	From string
	To   string
}

// Rotation is the store work at the start of a round.
type Rotation struct {
	// snapshot is the round whose end state is being backed up (round-1).
	snapshot int
	// Copies copy the live files to the snapshot's backup keys. state.json
	// is only copied when present in the keys given to Rotate (a brand-new
	// session may not have written it yet).
	Copies []Copy
	// Delete lists the backup keys to remove: every backup older than the
	// retention window (not just N-4, so a lowered retention or a missed
	// rotation converges), and any backup of round >= the snapshot's
	// successor, which can only be left over from an undone timeline.
	Delete []string
}

// Rotate computes the rotation at the start of round `round` from the keys
// present in the Store. Apply the deletes and copies in one commit (the spec
// orders delete-then-create; in one atomic commit the order is immaterial).
func Rotate(round, retention int, keys []string) Rotation {
	snap, _ := rotationOps(round, retention)
	if retention <= 0 {
		retention = DefaultRetention
	}
	present := make(map[string]bool, len(keys))
	for _, k := range keys {
		present[k] = true
	}
	r := Rotation{snapshot: snap}
	for _, kind := range backupKinds() {
		if kind == StateBackup && !present[StateKey] {
			continue
		}
		r.Copies = append(r.Copies, Copy{From: kind.live(), To: kind.key(snap)})
	}
	oldest := snap - retention + 1
	for _, k := range keys {
		if _, n, ok := ParseBackupKey(k); ok && (n < oldest || n > snap) {
			r.Delete = append(r.Delete, k)
		}
	}
	slices.Sort(r.Delete)
	return r
}
