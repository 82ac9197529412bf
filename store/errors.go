package store

import "errors"

// Sentinel errors of the Store and Backend contract. A Store or Backend
// wraps one of these with where it happened; match with errors.Is. The root
// package refine re-exports each under the same name and value.
var (
	// ErrNotFound: a Store has no value at the key, or a Backend no
	// session with the ID.
	ErrNotFound = errors.New("not found")
	// ErrInvalidKey: a Store key or List prefix breaks the key rules (see
	// ValidKey), or a commit would make a key also a folder.
	ErrInvalidKey = errors.New("invalid store key")
	// ErrLocked: another process holds the session's lock.
	ErrLocked = errors.New("session is locked by another process")
	// ErrSessionExists: a session with that ID is already there (a
	// NamedCreator's CreateNamed, or refine.New on a Store that holds a
	// session: use Open).
	ErrSessionExists = errors.New("session already exists in store")
	// ErrCorrupt: stored data (state.json, a Store's commit record, an
	// archive) cannot be read; nothing is overwritten.
	ErrCorrupt = errors.New("corrupt session state")
)
