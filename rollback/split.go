package rollback

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// errSplit is wrapped by ApplySplit's errors.
var errSplit = errors.New("cannot split gap")

// ApplySplit splits gap parent into sub-gaps with the given titles
// (supplied by the caller or the user): children parent.Child('a'),
// 'b', … are added OPEN with the parent's severity and blocking flag, a link
// to the parent and the current round, and the parent moves to SUPERSEDED
// with the reason recorded. It needs 2 to 26 non-empty titles, an open
// parent without a split suffix (IDs carry one letter) and no existing
// child ID. It is all-or-nothing: on error the ledger is unchanged.
func ApplySplit(l *gap.Ledger, parent gap.ID, titles []string, round int, at time.Time, reason string) ([]gap.ID, error) {
	fail := func(format string, args ...any) ([]gap.ID, error) {
		return nil, fmt.Errorf("rollback: %w %s: %s", errSplit, parent, fmt.Sprintf(format, args...))
	}
	p, ok := l.Get(parent)
	if !ok {
		return nil, fmt.Errorf("rollback: %w %s: %w", errSplit, parent, gap.ErrUnknownGap)
	}
	if parent.Suffix() != "" {
		return fail("it is already a sub-gap of %s", parent.Parent())
	}
	if len(titles) < 2 || len(titles) > 26 {
		return fail("%d sub-gap titles given, want 2 to 26", len(titles))
	}
	if err := gap.CheckTransition(p.State, gap.Superseded); err != nil {
		return nil, fmt.Errorf("rollback: %w %s: %w", errSplit, parent, err)
	}
	c := l.Clone()
	ids := make([]gap.ID, len(titles))
	for i, t := range titles {
		t = rollbackfmt.OneLine(t)
		if t == "" {
			return fail("sub-gap title %d is empty", i+1)
		}
		ids[i] = parent.Child(byte('a' + i))
		err := c.Add(gap.Gap{
			ID: ids[i], Title: t, Severity: p.Severity, State: gap.Open,
			Blocking: p.Blocking, Parent: parent, Round: round,
		})
		if err != nil {
			return nil, fmt.Errorf("rollback: %w %s: %w", errSplit, parent, err)
		}
	}
	if reason == "" {
		reason = "split into " + joinIDs(ids)
	}
	if err := c.Transition(parent, gap.Superseded, round, at, reason); err != nil {
		return nil, fmt.Errorf("rollback: %w %s: %w", errSplit, parent, err)
	}
	*l = *c
	return ids, nil
}

// ParseSplitTitles reads sub-gap titles from an answer's free text: one per
// line (or separated by ";" on a single line), with list markers, a leading
// "GAP-…:" label and surrounding quotes removed, and an optional trailing
// "(note)" kept as part of the title.
func ParseSplitTitles(text string) []string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) == 1 {
		lines = strings.Split(lines[0], ";")
	}
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if m := listMarker.FindString(l); m != "" {
			l = l[len(m):]
		}
		if id := gap.FirstID(l); id != "" && strings.HasPrefix(l, string(id)) {
			l = strings.TrimLeft(l[len(id):], ": ")
		}
		l = strings.TrimSpace(l)
		if len(l) >= 2 && l[0] == '"' {
			if end := strings.IndexByte(l[1:], '"'); end >= 0 {
				l = l[1:1+end] + l[2+end:]
			}
		}
		if l = rollbackfmt.OneLine(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
