package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
)

// NormalizedCount is how often one kind of quirk was read onto the
// canonical form in one role's answers over the session (DESIGN §18): a
// host sees which model needs a better prompt.
type NormalizedCount struct {
	Role llm.RoleName `json:"role"`
	Kind string       `json:"kind"`
	// Count is how many places were mapped; Answers how many answers had
	// at least one.
	Count   int `json:"count"`
	Answers int `json:"answers"`
}

// NormalizedCounts adds up the normalizations of every answer the session
// read (its rounds' attempts and the integration step's), by role and
// kind, in role then kind order.
func NormalizedCounts(st *state.State) []NormalizedCount {
	type key struct {
		role llm.RoleName
		kind string
	}
	sums := map[key]*NormalizedCount{}
	add := func(role llm.RoleName, qs []state.NormalizedQuirk) {
		for _, q := range qs {
			k := key{role, q.Kind}
			c := sums[k]
			if c == nil {
				c = &NormalizedCount{Role: role, Kind: q.Kind}
				sums[k] = c
			}
			c.Count += q.Count
			c.Answers++
		}
	}
	for _, f := range st.AttemptLog {
		add(f.Role, f.Normalized)
	}
	if in := st.Integration; in != nil {
		for _, rec := range in.Engineer {
			add(llm.Engineer, rec.Normalized)
		}
		for _, rec := range in.Reviewer {
			add(llm.Reviewer, rec.Normalized)
		}
	}
	if d := st.Discovery; d != nil {
		for _, rec := range d.Attempts {
			add(llm.Reviewer, rec.Normalized) // the discovery call is the Reviewer's
		}
	}
	if len(sums) == 0 {
		return nil
	}
	out := make([]NormalizedCount, 0, len(sums))
	for _, c := range sums {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b NormalizedCount) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// writeNormalized writes status.md's "## Normalized Answers" table, when
// any answer needed its quirks read onto the canonical form.
func writeNormalized(b *strings.Builder, counts []NormalizedCount) {
	if len(counts) == 0 {
		return
	}
	b.WriteString("\n## Normalized Answers\n\nQuirks of form read as the canonical format (docs/workflow.md#what-is-normalized); no retry was spent on them.\n\n| Role | Kind | Places | Answers |\n|------|------|--------|---------|\n")
	for _, c := range counts {
		fmt.Fprintf(b, "| %s | %s | %d | %d |\n", c.Role, c.Kind, c.Count, c.Answers)
	}
}
