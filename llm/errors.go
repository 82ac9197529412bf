package llm

import "errors"

// ErrNoResponse: a Role has no response for a call (a replay recording or a
// test script ran out). A round fails on it like on any permanent Role
// error; the integration step falls back to the appendix form. The root
// package refine re-exports it under the same name and value.
var ErrNoResponse = errors.New("the role has no response for this call")
