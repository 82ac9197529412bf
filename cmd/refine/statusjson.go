package main

import (
	"io"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
)

// writeStatusJSON prints the `refine status --json` document; its shape
// lives in internal/statusjson, shared with the web console's API.
func writeStatusJSON(w io.Writer, st refine.Status) error {
	return statusjson.Write(w, st)
}
