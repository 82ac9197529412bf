package rollbacktext

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// SplitDecision words a split for rollback.Record.UserDecision, as the spec's
// history does: "Split gap into 007a, 007b, 007c".
func SplitDecision(children []gap.ID) string {
	short := make([]string, len(children))
	for i, id := range children {
		short[i] = fmt.Sprintf("%03d%s", id.Number(), id.Suffix())
	}
	return "Split gap into " + strings.Join(short, ", ")
}
