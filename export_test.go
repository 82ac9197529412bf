package refine

// StateJSONForTest returns the session's whole state as a state.json
// snapshot would hold it, so a test can build a stored session the engine
// cannot reach through its API (one saved by an older refine, say).
func (s *Session) StateJSONForTest() ([]byte, error) { return s.core.StateDoc() }
