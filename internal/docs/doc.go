// Package docs holds the test that keeps the README and docs/*.md true to
// the code: the command blocks marked for it run (with the refine built
// from this tree, replayed roles and loopback only), the README's Go
// program is examples/readme/main.go, CI runs the README's test command,
// and every benchmark command names benchmarks that exist.
//
// A command block is marked by the line
//
//	<!-- doc-test -->
//
// right before its fence. Its lines run in order in a shell, in a fresh
// folder that links the repository's top-level entries (so repository
// paths work and what the commands write stays out of the clone);
// `go run ./cmd/refine` and `refine` run the refine built from this tree.
// The README's test command is never run from here (it runs this test).
package docs
