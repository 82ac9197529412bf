package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/refine-spec/refine"
)

// printSettings adds to `refine status` the settings the session runs
// with, as stored with it (changes made with `refine resume --FLAG` live
// only in state.json otherwise), and how to change them (#40).
func printSettings(w io.Writer, set refine.Settings, loc sessionLoc) {
	var parts []string
	for _, v := range set.View() {
		parts = append(parts, v.Name+" "+safeLine(v.Value))
	}
	fmt.Fprintf(w, "  settings: %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(w, "  (change one with refine resume %s --max-rounds N, --rollback-limit N, …: refine help resume lists them)\n", loc.flags())
}
