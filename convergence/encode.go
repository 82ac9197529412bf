package convergence

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Encoder encodes a Tracker as json.Marshal does (MarshalJSON), reusing
// the encoding of every row, the settings and the events unchanged since
// its last call: a tracker gains a row a round and amends or rewinds only
// its last rows, so a long session's durable points re-encoded a history
// that had not changed. Each call compares the whole tracker with what it
// encoded last, so what it returns is always the tracker's encoding,
// whatever changed.
//
// The zero Encoder is ready to use. An Encoder writes to two buffers in
// turn: the bytes of an Encoded stay valid until the second call after
// the one that returned them re-encodes (a call that finds nothing
// changed returns the last encoding again and writes nothing).
type Encoder struct {
	last Encoded // nil JSON: none yet
	// What last encodes, as it was.
	rows         []Row
	settings     Settings
	settingsEnc  []byte
	events       []Event
	eventsEnc    []byte
	stall, quiet int
	bufs         [2][]byte
	turn         int
}

// Encoded is a tracker's encoding and where its parts lie in it.
type Encoded struct {
	// JSON is the encoding, as json.Marshal writes it.
	JSON []byte
	// Keys and Vals are the object's members in order: Vals[i] is the
	// bytes of member Keys[i]'s value within JSON.
	Keys []string
	Vals [][]byte
	// Rows are the encodings of the rows within the "rows" member.
	Rows [][]byte
}

// trackerKeys are trackerJSON's members in order.
var trackerKeys = [...]string{"settings", "rows", "events", "stall", "quiet_through"}

// Encode returns t's encoding.
func (e *Encoder) Encode(t *Tracker) (Encoded, error) {
	s := t.Settings()
	kept := 0 // rows whose encoding is reused
	for kept < len(t.rows) && kept < len(e.rows) && t.rows[kept] == e.rows[kept] {
		kept++
	}
	if e.last.JSON != nil && kept == len(t.rows) && kept == len(e.rows) && s == e.settings &&
		slices.Equal(t.events, e.events) && t.stall == e.stall && t.quietThrough == e.quiet {
		return e.last, nil
	}
	if e.settingsEnc == nil || s != e.settings {
		enc, err := json.Marshal(s)
		if err != nil {
			return Encoded{}, fmt.Errorf("convergence: encode tracker settings: %w", err)
		}
		e.settings, e.settingsEnc = s, enc
	}
	if e.eventsEnc == nil || !slices.Equal(t.events, e.events) {
		events := t.events
		if events == nil {
			events = []Event{} // as MarshalJSON writes it
		}
		enc, err := json.Marshal(events)
		if err != nil {
			return Encoded{}, fmt.Errorf("convergence: encode tracker events: %w", err)
		}
		e.events, e.eventsEnc = slices.Clone(t.events), enc
	}
	if e.last.JSON == nil {
		kept = 0
	}

	// The last encoding lies in the other buffer: this one is free. The
	// parts are noted as offsets and cut once b has its final array.
	b := e.bufs[e.turn][:0]
	var vals [len(trackerKeys)][2]int
	rows := make([][2]int, len(t.rows))
	b = append(b, '{')
	for k, key := range trackerKeys {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), key...), '"', ':')
		vals[k][0] = len(b)
		switch k {
		case 0:
			b = append(b, e.settingsEnc...)
		case 1:
			b = append(b, '[')
			for i := range t.rows {
				if i > 0 {
					b = append(b, ',')
				}
				rows[i][0] = len(b)
				if i < kept {
					b = append(b, e.last.Rows[i]...)
				} else {
					enc, err := json.Marshal(&t.rows[i])
					if err != nil {
						return Encoded{}, fmt.Errorf("convergence: encode tracker row %d: %w", t.rows[i].Round, err)
					}
					b = append(b, enc...)
				}
				rows[i][1] = len(b)
			}
			b = append(b, ']')
		case 2:
			b = append(b, e.eventsEnc...)
		case 3:
			b = strconv.AppendInt(b, int64(t.stall), 10)
		case 4:
			b = strconv.AppendInt(b, int64(t.quietThrough), 10)
		}
		vals[k][1] = len(b)
	}
	b = append(b, '}')
	out := Encoded{JSON: b, Keys: trackerKeys[:], Vals: make([][]byte, len(vals)), Rows: make([][]byte, len(rows))}
	for k, v := range vals {
		out.Vals[k] = b[v[0]:v[1]:v[1]]
	}
	for i, r := range rows {
		out.Rows[i] = b[r[0]:r[1]:r[1]]
	}
	e.bufs[e.turn], e.turn = b, e.turn^1
	e.rows = append(e.rows[:0], t.rows...)
	e.stall, e.quiet = t.stall, t.quietThrough
	e.last = out
	return out, nil
}
