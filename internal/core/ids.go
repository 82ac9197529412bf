package core

// IDSource makes identifiers for sessions.
type IDSource interface {
	NewID() string
}
