// Package state holds what a refine session knows: its facts (the gap
// ledger, the rounds played, the attempts and what they came to, the
// questions asked and the decisions taken, the rollbacks, the integration
// step's progress), as state.json keeps them, and the Store keys of its
// artifacts.
//
// It decides nothing: the decisions (package core) change the state, the
// renderings (package render) and the journal's format (package statedoc)
// read it. Its types are plain data with the queries every side asks of
// them; nothing here does I/O.
package state
