package core

import (
	"maps"
	"slices"
)

// Clone copies st so that nothing in the copy shares memory with st: the
// session keeps one published Status (Session.publish) and hands each
// caller its own copy, which the caller may change.
func (st Status) Clone() Status {
	st.Gaps = slices.Clone(st.Gaps)
	for i := range st.Gaps {
		st.Gaps[i].History = slices.Clone(st.Gaps[i].History)
	}
	st.Decisions = slices.Clone(st.Decisions)
	st.Convergence = slices.Clone(st.Convergence)
	st.Conflicts = slices.Clone(st.Conflicts)
	for i := range st.Conflicts {
		c := &st.Conflicts[i]
		c.Heuristics, c.Options = slices.Clone(c.Heuristics), slices.Clone(c.Options)
		if c.Synthesis != nil {
			syn := *c.Synthesis
			c.Synthesis = &syn
		}
	}
	st.Repairs = slices.Clone(st.Repairs)
	st.Rollbacks = slices.Clone(st.Rollbacks)
	for i := range st.Rollbacks {
		r := &st.Rollbacks[i]
		r.Patterns, r.Adjustments, r.Decisions = slices.Clone(r.Patterns), slices.Clone(r.Adjustments), slices.Clone(r.Decisions)
		if r.Analysis != nil {
			a := *r.Analysis
			r.Analysis = &a
		}
		if r.Split != nil {
			sp := *r.Split
			sp.Children = slices.Clone(sp.Children)
			r.Split = &sp
		}
	}
	st.Pending = slices.Clone(st.Pending)
	for i := range st.Pending {
		q := &st.Pending[i]
		q.Options, q.TextRequired = slices.Clone(q.Options), slices.Clone(q.TextRequired)
	}
	st.Validation = slices.Clone(st.Validation)
	st.Normalized = slices.Clone(st.Normalized)
	st.Responses = maps.Clone(st.Responses)
	return st
}
