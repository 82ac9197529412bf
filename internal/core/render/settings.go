package render

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
)

// SettingValue is one of a session's settings as status reports show it:
// its JSON name (as in Settings and `status --json`'s "settings") and
// its value as text.
type SettingValue struct {
	Name, Value string
}

// writeSettings writes status.md's "## Settings": the session's settings
// and each change made to them since it started (`refine resume
// --rollback-limit …`, Session.SetSettings), so what state.json holds is
// also what a person reads (#40).
func writeSettings(b *strings.Builder, settings []SettingValue, log []state.SettingsChange) {
	b.WriteString("\n## Settings\n\n| Setting | Value |\n|---------|-------|\n")
	for _, v := range settings {
		fmt.Fprintf(b, "| %s | %s |\n", v.Name, Cell(v.Value))
	}
	if len(log) == 0 {
		return
	}
	b.WriteString("\nChanged:\n")
	for _, c := range log {
		fmt.Fprintf(b, "- round %d, %s: %s\n", c.Round, c.At, Cell(strings.Join(c.Changes, "; ")))
	}
}
