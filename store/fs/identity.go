package fs

import "path/filepath"

// SessionID returns the session folder's name: a Backend's session ID
// (ROOT/ID), or the folder given to Open. It implements store.Identified,
// so a session started on this Store takes the folder's name as its ID.
func (s *Store) SessionID() string { return filepath.Base(s.dir) }
