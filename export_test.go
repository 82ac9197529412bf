package refine

import "github.com/refine-spec/refine/internal/core"

// StateJSONForTest returns the session's whole state as a state.json
// snapshot would hold it, so a test can build a stored session the engine
// cannot reach through its API (one saved by an older refine, say). It
// encodes with a cache of its own, leaving the journal's untouched.
func (s *Session) StateJSONForTest() ([]byte, error) {
	v, err := core.EncodeState(s.core.St, &core.HistoryCache{})
	return v.Bytes(), err
}
