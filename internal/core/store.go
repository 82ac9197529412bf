package core

import "github.com/refine-spec/refine/store"

// The Store contract lives in package store, so that Store implementations
// and the conformance suite depend on it and not on the engine. The names
// below are aliases and forwards: refine.Store is store.Store, and code
// written against either name works with both.

// Store is [store.Store], the small transactional key/value store a session
// lives in.
type Store = store.Store

// OpKind is [store.OpKind]: what an Op does.
type OpKind = store.OpKind

// The kinds of Op ([store.OpPut] and the others).
const (
	OpPut    = store.OpPut
	OpDelete = store.OpDelete
	OpAppend = store.OpAppend
	OpCopy   = store.OpCopy
)

// Op is [store.Op]: one write in a Commit.
type Op = store.Op

// Put returns an Op that stores value at key ([store.Put]).
func Put(key string, value []byte) Op { return store.Put(key, value) }

// Delete returns an Op that removes key ([store.Delete]).
func Delete(key string) Op { return store.Delete(key) }

// Append returns an Op that adds value at the end of key's value
// ([store.Append]). Only an Appender accepts it.
func Append(key string, value []byte) Op { return store.Append(key, value) }

// Copy returns an Op that sets key to the value from holds at that point of
// the commit ([store.Copy]). Only a Copier accepts it.
func Copy(key, from string) Op { return store.Copy(key, from) }

// Appender is [store.Appender]: a Store whose Commit accepts OpAppend ops.
type Appender = store.Appender

// Copier is [store.Copier]: a Store whose Commit accepts OpCopy ops.
type Copier = store.Copier

// Identified is [store.Identified]: a Store that knows which session it
// holds. New takes its SessionID as the session's ID.
type Identified = store.Identified

// Repair is [store.Repair]: a value the Store found damaged and wrote
// again from its own log.
type Repair = store.Repair

// Repairer is [store.Repairer]: a Store that reports the repairs it made
// when it opened.
type Repairer = store.Repairer

// MaxKeyLen is the longest key a Store accepts, in bytes ([store.MaxKeyLen]).
const MaxKeyLen = store.MaxKeyLen

// ValidKey checks a Store key against the rules every Store enforces
// ([store.ValidKey]). The error wraps ErrInvalidKey.
func ValidKey(key string) error { return store.ValidKey(key) }

// ValidPrefix checks a List prefix ([store.ValidPrefix]). The error wraps
// ErrInvalidKey.
func ValidPrefix(prefix string) error { return store.ValidPrefix(prefix) }

// ValidOps checks every key of ops and that each op is a put or a delete
// ([store.ValidOps]).
func ValidOps(ops []Op) error { return store.ValidOps(ops) }

// ValidAppendOps is ValidOps for an Appender ([store.ValidAppendOps]).
func ValidAppendOps(ops []Op) error { return store.ValidAppendOps(ops) }

// ValidStoreOps is ValidOps for a Store that accepts appends, copies or both
// ([store.ValidStoreOps]).
func ValidStoreOps(ops []Op, appendOK, copyOK bool) error {
	return store.ValidStoreOps(ops, appendOK, copyOK)
}

// StoreCaps are the capabilities of a session's Store the decisions'
// writes may use: appends (Appender) and copies (Copier).
type StoreCaps struct{ Appends, Copies bool }

// CapsOf returns st's capabilities.
func CapsOf(st Store) StoreCaps { return StoreCaps{Appends: Appends(st), Copies: copies(st)} }

// Appends reports whether st accepts OpAppend.
func Appends(st Store) bool {
	a, ok := st.(Appender)
	return ok && a.Appends()
}

// copies reports whether st accepts OpCopy.
func copies(st Store) bool {
	c, ok := st.(Copier)
	return ok && c.Copies()
}

// StoreSessionID returns the session ID st knows, if any and valid.
func StoreSessionID(st Store) (string, bool) {
	i, ok := st.(Identified)
	if !ok {
		return "", false
	}
	id := i.SessionID()
	return id, id != "" && ValidSessionID(id) == nil
}
