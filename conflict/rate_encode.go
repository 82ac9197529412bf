package conflict

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// RateEncoder encodes a RateHistory as json.Marshal does, reusing the
// encoding of the records unchanged since its last call: a session adds
// a record a round, and a state document that holds the history was
// re-encoding all of them at every durable point. Each call compares the
// whole history with what it encoded last, so what it returns is always
// the history's encoding, whatever changed. The zero RateEncoder is
// ready to use; the bytes it returns are valid until its next call.
type RateEncoder struct {
	recs    []rateRecord // what enc encodes
	null    bool         // Records was nil
	alerted int
	enc     []byte
	ends    []int // ends[i]: the end of record i's encoding in enc
	ok      bool
}

// rateOpen starts a history's encoding, up to its first record.
const rateOpen = `{"records":[`

// Encode returns h's encoding.
func (e *RateEncoder) Encode(h RateHistory) ([]byte, error) {
	null := h.Records == nil
	if e.ok && null == e.null && h.Alerted == e.alerted && slices.Equal(h.Records, e.recs) {
		return e.enc, nil
	}
	if null {
		b, err := json.Marshal(h)
		if err != nil {
			return nil, fmt.Errorf("conflict: encode rate history: %w", err)
		}
		*e = RateEncoder{null: true, alerted: h.Alerted, enc: b, ok: true}
		return b, nil
	}
	kept := 0
	if e.ok && !e.null {
		for kept < len(h.Records) && kept < len(e.recs) && h.Records[kept] == e.recs[kept] {
			kept++
		}
	}
	b := append(e.enc[:0], rateOpen...)
	if kept > 0 {
		b = e.enc[:e.ends[kept-1]]
	}
	ends := e.ends[:kept]
	for i := kept; i < len(h.Records); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		r, err := json.Marshal(&h.Records[i])
		if err != nil {
			return nil, fmt.Errorf("conflict: encode rate history: round %d: %w", h.Records[i].Round, err)
		}
		b = append(b, r...)
		ends = append(ends, len(b))
	}
	b = append(b, ']')
	if h.Alerted != 0 {
		b = strconv.AppendInt(append(b, `,"alerted":`...), int64(h.Alerted), 10)
	}
	b = append(b, '}')
	e.recs = append(e.recs[:0], h.Records...)
	e.null, e.alerted, e.enc, e.ends, e.ok = false, h.Alerted, b, ends, true
	return b, nil
}
