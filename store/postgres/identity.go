package postgres

// SessionID returns the session's ID, as ID does. It implements
// store.Identified, so the session's state carries the database's ID.
func (s *Store) SessionID() string { return s.ID() }
