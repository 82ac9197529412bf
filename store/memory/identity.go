package memory

// SessionID returns the ID the Backend gave this session. It implements
// store.Identified, so the session's state carries the Backend's ID.
func (h *handle) SessionID() string { return h.id }
