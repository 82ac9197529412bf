package rollback

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// Execution is what executing a Plan needs besides the plan.
type Execution struct {
	// Files holds the bytes of every key in Plan.Reads().
	Files map[string][]byte
	At    time.Time
	// Reason, Mode, Trigger and Adjustments go into every archive's
	// metadata and every history record. Mode is the effective mode
	// (Step.Mode); Adjustments are one-line summaries.
	Reason      string
	Mode        Mode
	Trigger     Trigger
	Adjustments []string
	// Decisions are the decisions made in each undone round, keyed by round.
	Decisions map[int][]RoundDecision
	// Analyses are optional analysis.md reports, keyed by round.
	Analyses map[int]string
	// Patterns are the patterns detected in each undone round, for history.
	Patterns map[int][]Pattern
}

// fileData is a key and its bytes.
type fileData struct {
	Key  string
	Data []byte
}

// Result is an executed plan: everything to write, as data. The engine
// must replace State with the restored state that carries the session's
// History plus Records, then commit Ops() at once; one whose status.md and
// decisions.md are renderings of the state may put its own in their place.
type Result struct {
	// archives are the new archive files, in plan order (newest round first).
	archives []fileData
	// status is the target's status.md backup with a "## Rollback Notice"
	// block appended; decisions the decisions.md backup with one such notice per
	// undone round, ascending; State the state.json backup, verbatim.
	status, decisions, State []byte
	// delete are the keys to remove (Plan.Delete).
	delete []string
	// Records are the history records of this rollback, in plan order.
	Records []Record
}

// Op is one write of the rollback commit: a put, or a delete when Delete is set.
type Op struct {
	Key    string
	Value  []byte
	Delete bool
}

// Ops returns the whole rollback as one ordered list of writes for a single
// atomic Store commit: deletes first, then the archives, then status.md,
// decisions.md and state.json (each only when non-nil).
func (r Result) Ops() []Op {
	var ops []Op
	for _, k := range r.delete {
		ops = append(ops, Op{Key: k, Delete: true})
	}
	for _, a := range r.archives {
		ops = append(ops, Op{Key: a.Key, Value: a.Data})
	}
	for _, f := range [...]fileData{{StatusKey, r.status}, {DecisionsKey, r.decisions}, {StateKey, r.State}} {
		if f.Data != nil {
			ops = append(ops, Op{Key: f.Key, Value: f.Data})
		}
	}
	return ops
}

// errMissingFile is returned by Execute when Files lacks a key the plan reads.
var errMissingFile = errors.New("file needed by the rollback plan is missing")

// Execute carries out a plan in memory: it builds each undone round's
// archive (round folder, metadata, archived decisions, optional analysis),
// restores the three backups with the rollback notices appended, and
// returns the history records. Nothing is written; see Result.Ops.
func (p Plan) Execute(e Execution) (Result, error) {
	if e.At.IsZero() {
		return Result{}, errors.New("rollback: execute: the rollback time is unset")
	}
	for _, k := range p.Reads() {
		if _, ok := e.Files[k]; !ok {
			return Result{}, fmt.Errorf("rollback: execute: %w: %s", errMissingFile, k)
		}
	}
	mode := e.Mode
	if !mode.Valid() {
		mode = DefaultMode
	}
	res := Result{delete: slices.Clone(p.Delete)}
	var archives []string
	var attempts []int
	for _, rp := range p.Rounds {
		files := make(map[string][]byte, len(rp.Keys))
		for _, k := range rp.Keys {
			files[k] = e.Files[k]
		}
		meta := Metadata{
			OriginalRound: rp.Round, RollbackTimestamp: e.At, Reason: e.Reason,
			AttemptNumber: rp.Attempt, UserAdjustments: slices.Clone(e.Adjustments),
			Mode: mode, Trigger: e.Trigger, TargetRound: p.To,
		}
		var opts []ArchiveOption
		if a := e.Analyses[rp.Round]; a != "" {
			opts = append(opts, withAnalysis(a))
		}
		decisions := e.Decisions[rp.Round]
		data, err := BuildArchive(files, meta, DecisionsFromRound(rp.Round, decisions), opts...)
		if err != nil {
			return Result{}, fmt.Errorf("rollback: execute: round %d: %w", rp.Round, err)
		}
		res.archives = append(res.archives, fileData{Key: rp.Archive, Data: data})
		res.Records = append(res.Records, Record{
			Round: rp.Round, Attempt: rp.Attempt, Target: p.To, At: e.At.UTC(),
			Reason: e.Reason, Mode: mode, Trigger: e.Trigger,
			Patterns: slices.Clone(e.Patterns[rp.Round]), Adjustments: slices.Clone(e.Adjustments),
			Decisions: slices.Clone(decisions), Archive: rp.Archive,
		})
		archives = append(archives, rp.Archive)
		attempts = append(attempts, rp.Attempt)
	}

	for _, c := range p.Restore {
		data := e.Files[c.From]
		switch c.To {
		case StatusKey:
			res.status = rollbackfmt.AppendBlock(data, rollbackfmt.StatusNotice(p.undone(), attempts, p.To, e.At, e.Reason, archives))
		case DecisionsKey:
			out := slices.Clone(data)
			if out == nil {
				out = []byte{}
			}
			for _, r := range p.undone() {
				out = rollbackfmt.AppendBlock(out, rollbackfmt.DecisionsNotice(r, e.At, e.Reason, ArchiveFolder(r)+"/"+DecisionsFileName(r)))
			}
			res.decisions = out
		case StateKey:
			res.State = append([]byte{}, data...)
		}
	}
	return res, nil
}
