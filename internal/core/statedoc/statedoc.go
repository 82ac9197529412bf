package statedoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/journal"
)

// The state document, as the journal compares it and snapshots store it.
//
// Most of a long session's state is its history: the Reviewer's issues,
// the round records, the attempt log and the questions asked. The engine
// changes an entry of these only while its round is in flight (reviewGaps
// links this round's issues to review gaps; an attempt's fact gets its
// retry), so once a round has ended its entries are frozen: each durable
// point encodes only the entries added since the last round ended and
// reuses the bytes of the rest, and the journal's split of the document
// is built from its parts rather than scanned. Without this, every
// durable point re-encoded the whole history, and a round late in a long
// session cost a few times one early in it. Test binaries (not
// benchmarks) check the reused bytes against a whole encoding at every
// durable point.

// historyLog is one of the state's history members.
type historyLog struct {
	key string
	len func(*state.State) int
	// from returns the entries from i on, for json.Marshal.
	from func(st *state.State, i int) any
}

// historyLogs are the members encoded apart, appended after the others
// (their omitempty tags keep them out of the rest's encoding when nil).
var historyLogs = [...]historyLog{
	{"issues", func(st *state.State) int { return len(st.Issues) }, func(st *state.State, i int) any { return st.Issues[i:] }},
	{"rounds", func(st *state.State) int { return len(st.Rounds) }, func(st *state.State, i int) any { return st.Rounds[i:] }},
	{"attempt_log", func(st *state.State) int { return len(st.AttemptLog) }, func(st *state.State, i int) any { return st.AttemptLog[i:] }},
	{"asked", func(st *state.State) int { return len(st.Asked) }, func(st *state.State, i int) any { return st.Asked[i:] }},
}

// withoutHistory returns a shallow copy of st without its history logs
// and its ledger (encoded apart, a gap at a time).
func withoutHistory(st *state.State) *state.State {
	core := *st
	core.Issues, core.Rounds, core.AttemptLog, core.Asked = nil, nil, nil, nil
	core.Ledger, core.Tracker = gap.Ledger{}, nil
	return &core
}

// gapVersion identifies what a gap's encoding depends on, given that its
// history only grows (the ledger appends transitions, never edits one):
// its fields, the length of its history and its last transition.
type gapVersion struct {
	id                 gap.ID
	title              string
	severity           gap.Severity
	state              gap.State
	blocking           bool
	parent             gap.ID
	location, why      string
	round, transitions int
	lastFrom, lastTo   gap.State
	lastRound          int
	lastAt             time.Time
	lastReason         string
}

func versionOf(g *gap.Gap) gapVersion {
	v := gapVersion{id: g.ID, title: g.Title, severity: g.Severity, state: g.State, blocking: g.Blocking, parent: g.Parent, location: g.Location, why: g.Why, round: g.Round, transitions: len(g.History)}
	if n := len(g.History); n > 0 {
		t := g.History[n-1]
		v.lastFrom, v.lastTo, v.lastRound, v.lastAt, v.lastReason = t.From, t.To, t.Round, t.At, t.Reason
	}
	return v
}

// encodedGap is one gap's encoding and the version it encodes.
type encodedGap struct {
	v   gapVersion
	enc []byte
}

// encodeLedger encodes l as json.Marshal would, reusing the encoding of
// every gap unchanged since the last call: a long session's ledger
// (every gap's transitions) was the largest part of the state encoded
// whole at every durable point. It writes the encoding into buf, where
// the gaps up to the first that changed since buf was last written are
// in place already: a new buffer the size of the ledger at each change
// (three a round, 42 KiB at round 90) fed the collector.
//
// It also returns the encoding's split for the journal's diff (the gaps
// array and its elements), so that a durable point does not scan the
// whole ledger to find the gap that changed.
func encodeLedger(l gap.Ledger, cache map[gap.ID]encodedGap, buf *ledgerBuf) ([]byte, *journal.Split, error) {
	const open = `{"gaps":[`
	elems := make([][]byte, 0, len(l.Gaps))
	size := len(open) + len(l.Gaps) + 2
	for i := range l.Gaps {
		g := &l.Gaps[i]
		v := versionOf(g)
		e, ok := cache[g.ID]
		if !ok || e.v != v {
			enc, err := json.Marshal(g)
			if err != nil {
				return nil, nil, fmt.Errorf("encode state: ledger: %s: %w", g.ID, err)
			}
			e = encodedGap{v: v, enc: enc}
			cache[g.ID] = e
		}
		elems = append(elems, e.enc)
		size += len(e.enc)
	}
	// buf holds open and its elems, joined by commas: keep those that are
	// this ledger's too (the same encodings, compared by identity).
	out := buf.b[:0]
	kept := 0
	if len(buf.b) >= len(open) {
		n := len(open)
		for kept < len(elems) && kept < len(buf.elems) && sameBytes(buf.elems[kept], elems[kept]) {
			if kept > 0 {
				n++
			}
			n += len(elems[kept])
			kept++
		}
		out = buf.b[:n]
	} else {
		out = append(out, open...)
	}
	out = slices.Grow(out, size-len(out))
	for i := kept; i < len(elems); i++ {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, elems[i]...)
	}
	out = append(out, "]}"...)
	buf.b, buf.elems = out, elems
	gaps := out[len(open)-1 : len(out)-1]
	return out, &journal.Split{Keys: [][]byte{[]byte("gaps")}, Vals: [][]byte{gaps}, Subs: []*journal.Split{{Vals: elems}}}, nil
}

// ledgerBuf is a buffer for the ledger's encoding and the gap encodings
// it holds, in order.
type ledgerBuf struct {
	b     []byte
	elems [][]byte
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// encodedEntries are the first n entries of a history log, encoded and
// joined by commas (no brackets).
type encodedEntries struct {
	N   int
	enc []byte
}

// HistoryCache holds the encoded history of one state.
type HistoryCache struct {
	// Check makes each reused encoding checked against a whole one
	// (Options.SelfCheck).
	Check bool
	st    *state.State
	// frozen are the entries as of the last round end; last as of the
	// last encoding.
	Frozen, last [len(historyLogs)]encodedEntries
	// gaps holds each gap's last encoding (encodeLedger).
	gaps map[gap.ID]encodedGap
	// ledgerVer, ledgerEnc and ledgerSplit are the whole ledger's last
	// encoding and the versions of its gaps: most durable points change
	// no gap, and joining the gaps' encodings copied the whole ledger.
	ledgerVer   []gapVersion
	ledgerEnc   []byte
	ledgerSplit *journal.Split
	// ledgerBufs are two buffers the ledger's encodings take turns to
	// write to (as bufs below): the last encoding is in one.
	ledgerBufs [2]ledgerBuf
	ledgerTurn int
	// vers is scratch space for the gaps' versions (swapped with ledgerVer).
	vers []gapVersion
	// rate re-encodes only the rate history's records that changed.
	rate conflict.RateEncoder
	// tracker re-encodes only the convergence tracker's rows that
	// changed: a row a round, 14 KiB at round 90, was encoded whole.
	tracker convergence.Encoder
	// bufs are two buffers per history log that encodings take turns to
	// write to: the last encoding (the journal's previous version, which
	// the next diff reads) is in one, the next goes to the other, where
	// the frozen entries are usually in place already. Building a
	// history member anew at every durable point copied a long session's
	// whole history. The caller keeps only the last encoding (see
	// StateJournal.record).
	bufs [len(historyLogs)][2]historyBuf
	turn [len(historyLogs)]int
}

// historyBuf is a buffer for a history log's encoding: '[' and the frozen
// entries from, then whatever the encoding that wrote it added.
type historyBuf struct {
	b    []byte
	from []byte // the frozen entries its prefix holds (compared by identity)
	ok   bool
}

// buffer returns log i's next buffer holding '[' and frozen, to append
// the rest of the encoding to.
func (c *HistoryCache) buffer(i int, frozen []byte) []byte {
	h := &c.bufs[i][c.turn[i]]
	c.turn[i] ^= 1
	same := h.ok && len(h.from) == len(frozen) && (len(frozen) == 0 || &h.from[0] == &frozen[0])
	if !same {
		// frozen may lie in h.b itself, at the same offset: the copy is
		// then onto itself.
		h.b = append(append(h.b[:0], '['), frozen...)
		h.from, h.ok = frozen, true
	}
	return h.b[:1+len(frozen)]
}

// Freeze marks every history entry of st as of its last encoding as no
// longer changing: a round has just ended.
func (c *HistoryCache) Freeze(st *state.State) {
	if c.st == st {
		c.Frozen = c.last
	}
}

// EncodeState encodes st compactly and splits it for the journal's diff,
// reusing c's frozen history entries.
func EncodeState(st *state.State, c *HistoryCache) (journal.Version, error) {
	if c.st != st { // a new or replaced state (opened, rolled back)
		*c = HistoryCache{st: st, Check: c.Check}
	}
	base, err := c.base(st)
	if err != nil {
		return journal.Version{}, err
	}
	var m members
	for i, h := range historyLogs {
		val, err := c.history(st, i)
		if err != nil {
			return journal.Version{}, err
		}
		if val != nil {
			m.add(h.key, val, nil)
		}
	}
	if st.Ledger.Gaps != nil { // the zero ledger is omitted, as omitzero does
		val, split, err := c.ledger(st)
		if err != nil {
			return journal.Version{}, err
		}
		m.add("ledger", val, split)
	}
	if st.Tracker != nil {
		val, split, err := c.convergence(st)
		if err != nil {
			return journal.Version{}, err
		}
		m.add("convergence", val, split)
	}
	return base.AppendMembers(m.keys, m.vals, m.subs), nil
}

// base encodes st without the members encoded apart and appended after
// it, split at the top level. The rate history (a record a round, 4.6 KiB
// at round 90) keeps its place among the other members: it is encoded
// by c.rate, which re-encodes only the records that changed, and set in
// the place of the empty history the rest was encoded with.
func (c *HistoryCache) base(st *state.State) (journal.Version, error) {
	if len(st.RateHistory.Records) < rateSpliceMin {
		// A short history costs less in place than set apart.
		b, err := json.Marshal(withoutHistory(st))
		if err != nil {
			return journal.Version{}, fmt.Errorf("encode state: %w", err)
		}
		return journal.NewVersion(b), nil
	}
	core := withoutHistory(st)
	core.RateHistory = conflict.RateHistory{}
	b, err := json.Marshal(core)
	if err != nil {
		return journal.Version{}, fmt.Errorf("encode state: %w", err)
	}
	rate, err := c.rate.Encode(st.RateHistory)
	if err != nil {
		return journal.Version{}, fmt.Errorf("encode state: %w", err)
	}
	v, ok := journal.NewVersion(b).SetMember("rate_history", rate)
	if !ok { // never: the member is always there
		b, err := json.Marshal(withoutHistory(st))
		if err != nil {
			return journal.Version{}, fmt.Errorf("encode state: %w", err)
		}
		return journal.NewVersion(b), nil
	}
	if c.Check {
		if want, err := json.Marshal(withoutHistory(st)); err != nil || !bytes.Equal(v.Bytes(), want) {
			return journal.Version{}, fmt.Errorf("state: the rate history set in place gives another document:\nset   %s\nwhole %s (%v)", v.Bytes(), want, err)
		}
	}
	return v, nil
}

// rateSpliceMin is the rate history length (a record a round) from which
// base encodes it apart: below it, setting it in place costs more than
// encoding it with the rest (a twentieth of a 5-round session's bytes).
const rateSpliceMin = 16

// members are the state's members encoded apart, with their splits for
// the journal's diff (journal.Version.AppendMembers).
type members struct {
	keys []string
	vals [][]byte
	subs []*journal.Split
}

func (m *members) add(key string, val []byte, split *journal.Split) {
	m.keys, m.vals, m.subs = append(m.keys, key), append(m.vals, val), append(m.subs, split)
}

// history encodes history log i of st, reusing its entries frozen at the
// last round end; nil when the log is empty (omitted).
func (c *HistoryCache) history(st *state.State, i int) ([]byte, error) {
	h, f := historyLogs[i], &c.Frozen[i]
	n := h.len(st)
	if n < f.N {
		*f = encodedEntries{} // cut short: nothing to reuse
	}
	if n == 0 {
		c.last[i] = encodedEntries{}
		return nil, nil
	}
	var tail []byte // the entries since the freeze, bracketed
	if n > f.N {
		var err error
		if tail, err = json.Marshal(h.from(st, f.N)); err != nil {
			return nil, fmt.Errorf("encode state: %s: %w", h.key, err)
		}
	}
	val := c.buffer(i, f.enc)
	if len(tail) > 0 {
		if f.N > 0 {
			val = append(val, ',')
		}
		val = append(val, tail[1:len(tail)-1]...)
	}
	val = append(val, ']')
	c.bufs[i][c.turn[i]^1].b = val // keep what it grew to
	c.last[i] = encodedEntries{N: n, enc: val[1 : len(val)-1]}
	if c.Check {
		if err := checkHistory(st, h, val); err != nil {
			return nil, err
		}
	}
	return val, nil
}

// ledger encodes st's ledger, reusing the encoding of every gap that did
// not change (encodeLedger).
func (c *HistoryCache) ledger(st *state.State) ([]byte, *journal.Split, error) {
	if c.gaps == nil {
		c.gaps = map[gap.ID]encodedGap{}
	}
	vers := c.vers[:0]
	for i := range st.Ledger.Gaps {
		vers = append(vers, versionOf(&st.Ledger.Gaps[i]))
	}
	c.vers = vers
	val, split := c.ledgerEnc, c.ledgerSplit
	if c.ledgerEnc == nil || !slices.Equal(vers, c.ledgerVer) {
		var err error
		if val, split, err = encodeLedger(st.Ledger, c.gaps, &c.ledgerBufs[c.ledgerTurn]); err != nil {
			return nil, nil, err
		}
		c.ledgerTurn ^= 1
		c.ledgerVer, c.vers, c.ledgerEnc, c.ledgerSplit = vers, c.ledgerVer, val, split
	}
	if c.Check {
		if want, err := json.Marshal(st.Ledger); err != nil || !bytes.Equal(val, want) {
			return nil, nil, fmt.Errorf("state ledger: a gap was changed without changing its version (encodeLedger reuses its encoding):\nreused %s\nwhole  %s (%v)", val, want, err)
		}
	}
	return val, split, nil
}

// convergence encodes st's convergence tracker, re-encoding only what
// changed since the last encoding (convergence.Encoder), and splits it
// for the journal's diff (its members and its rows).
func (c *HistoryCache) convergence(st *state.State) ([]byte, *journal.Split, error) {
	enc, err := c.tracker.Encode(st.Tracker)
	if err != nil {
		return nil, nil, fmt.Errorf("encode state: %w", err)
	}
	keys := make([][]byte, len(enc.Keys))
	subs := make([]*journal.Split, len(enc.Keys))
	for i, k := range enc.Keys {
		keys[i] = []byte(k)
		if k == "rows" {
			subs[i] = &journal.Split{Vals: enc.Rows}
		}
	}
	if c.Check {
		if want, err := json.Marshal(st.Tracker); err != nil || !bytes.Equal(enc.JSON, want) {
			return nil, nil, fmt.Errorf("state convergence: the tracker's encoding differs from json.Marshal's:\nreused %s\nwhole  %s (%v)", enc.JSON, want, err)
		}
	}
	return enc.JSON, &journal.Split{Keys: keys, Vals: enc.Vals, Subs: subs}, nil
}

// checkHistory reports a history member whose reused bytes differ from
// its whole encoding: an entry of a round that had ended was changed,
// which the journal would not record.
func checkHistory(st *state.State, h historyLog, got []byte) error {
	want, err := json.Marshal(h.from(st, 0))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("state %s: an entry of an ended round was changed in place (the journal reuses their encoding):\nreused %s\nwhole  %s", h.key, got, want)
	}
	return nil
}

// sameOp reports whether two journal operations are the same.
func sameOp(a, b journal.Op) bool {
	return a.Op == b.Op && slices.Equal(a.Path, b.Path) && bytes.Equal(a.Value, b.Value)
}
