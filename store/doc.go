// Package store is the storage contract of refine: the interfaces a host's
// storage implements and the engine relies on, with the rules every
// implementation keeps.
//
// A session lives in a [Store], a small transactional key/value store whose
// keys are the session folder's file layout; a Commit of [Op] values is
// all-or-nothing. Optional capabilities are found by type assertion, as
// io/fs finds ReadDirFS: [Appender], [Copier], [Identified]. A [Backend]
// holds many sessions, each a Store, and lists them from their
// [SessionSummary] records, a page at a time through [ListSessions].
// [ValidKey], [ValidPrefix], [ValidStoreOps] and [ValidSessionID] check what
// every implementation must reject, with errors wrapping the sentinels
// ([ErrInvalidKey], [ErrNotFound], [ErrLocked], …).
//
// This package holds only the contract, so that implementations depend on
// it and not on the engine: the subpackages fs, memory, sqlite and postgres
// implement it, and package storetest checks an implementation against it.
// The root package refine re-exports every name here as an alias
// (refine.Store is store.Store, refine.ErrNotFound is store.ErrNotFound), so
// code written against either name works with both.
package store
