package main

import (
	"io"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
)

// writeStatusJSON prints the `refine status --json` document; its shape
// lives in internal/statusjson, shared with the web console's API.
// running says a run (another process) drives the session now.
func writeStatusJSON(w io.Writer, st refine.Status, running bool) error {
	doc := statusjson.From(st)
	doc.Running = running
	return statusjson.WriteDoc(w, doc)
}
