// Package statedoc is the format a session's state is kept in: the state
// document (state.json's JSON, encoded with the history a round froze
// reused), the journal of its changes between snapshots, the snapshots
// and round backups that refer to them, and the checksum seal every
// snapshot carries.
//
// The decisions (package core) commit through a StateJournal; the driver
// reads a stored session back with SnapshotBases, NewestComplete and
// Replay. It reads the Store only through a Get/List view and writes
// nothing: what it returns are the writes to commit.
package statedoc
