package validate

import (
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// checkRefs fails with INCONSISTENT_REFS when a gap ID outside code is
// neither known nor introduced as new by the same output. The message
// lists the invalid IDs as the spec does, sorted, with the line of the
// first one met in the text.
func checkRefs(d *markdown.Doc, known, isNew map[gap.ID]bool) (Result, bool) {
	var bad []gap.ID
	seen := map[gap.ID]bool{}
	firstLine := 0
	for _, m := range findGapIDs(d.Prose) {
		id := gap.ID(m.ID)
		if known[id] || isNew[id] || seen[id] {
			continue
		}
		seen[id] = true
		if firstLine == 0 {
			firstLine = d.LineOf(m.Start)
		}
		bad = append(bad, id)
	}
	if len(bad) == 0 {
		return Result{}, true
	}
	sortIDs(bad)
	names := make([]string, len(bad))
	for i, id := range bad {
		names[i] = string(id)
	}
	r := failAt(InconsistentRefs, firstLine, "Invalid gap references: [%s]. These do not exist in status.md.", strings.Join(names, ", "))
	return r, false
}
