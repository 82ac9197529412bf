package rollbacktext

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// SessionEndQuestion is the session-completion question about archives: the
// list with sizes and total, and the spec's four options. The automated
// default is the spec's option 4 (cold storage) when a cold-storage root
// is configured; without one, option 4 is not offered and the default is
// to keep the archives (nothing is lost). ok is false when there are no
// archives, so there is nothing to ask.
func SessionEndQuestion(archives []rollback.ArchiveInfo, coldRoot string) (p question.Question, ok bool) {
	if len(archives) == 0 {
		return question.Question{}, false
	}
	var b strings.Builder
	b.WriteString("Session complete. Rolled-back round archives found:\n")
	var total int64
	for _, a := range archives {
		fmt.Fprintf(&b, "- %s (%s)\n", a.Name, rollbackfmt.FormatSize(a.Size))
		total += a.Size
	}
	fmt.Fprintf(&b, "Total: %s\n", rollbackfmt.FormatSize(total))
	p = question.Question{
		Kind:  question.KindRollback,
		ID:    "rollback-archives",
		Title: "ARCHIVE CLEANUP",
		Body:  b.String(),
		Options: []question.Option{
			{Key: "1", Label: "Keep all archives (for debugging/analysis)", Effect: string(rollback.CleanupKeep)},
			{Key: "2", Label: "Delete all archives (clean finish)", Effect: string(rollback.CleanupDelete)},
			{Key: "3", Label: "Keep recent only (last 7 days of this session)", Effect: string(rollback.CleanupRecent)},
		},
		Default: "1",
	}
	if coldRoot != "" {
		p.Options = append(p.Options, question.Option{Key: "4", Label: fmt.Sprintf("Move to cold storage (%s)", coldRoot), Effect: string(rollback.CleanupCold)})
		p.Default = "4"
	}
	return p, true
}
