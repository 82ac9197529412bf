// Package render writes what a session shows people from its state:
// status.md (gaps, rounds, convergence, validation logs, error tables,
// examples, conflicts, rollbacks, the final spec's form, settings and
// usage), decisions.md, each round's summary.md, the summary a Backend
// lists sessions by, and the validation records and normalization counts
// Status reports.
//
// Renderings are pure functions of the state (package state): they decide
// nothing and nothing is parsed back from them.
package render
