package exemplar

import "github.com/refine-spec/refine/gap"

// The Tier 3 templates, verbatim from GAP-FLOW-008 §4. They are compiled in
// (the spec: "hardcoded ... to guarantee availability") so that a session
// always has an example, even before its workflow spec is loaded.
const (
	// EngineerTemplate is the Tier 3 structural template for Engineer output.
	EngineerTemplate = `## Gap Resolution: [GAP-ID]

**Confidence:** [HIGH | MEDIUM | LOW]

### Proposed Solution

[Describe your solution here. Be specific and concrete.]

### Examples

[Provide at least one concrete example showing the solution in action.]

### Trade-offs

**Pros:**
- [List at least 2 benefits]

**Cons:**
- [List at least 2 drawbacks]

### New Gaps Introduced

- [List any new gaps this solution creates, or write "None"]`

	// ReviewerTemplate is the Tier 3 structural template for Reviewer output.
	ReviewerTemplate = `## Review: [Section or Gap ID being reviewed]

### Critical Issues

[List any spec-breaking issues, or write "None found"]

### High Priority

[List issues that would cause incorrect implementation, or write "None found"]

### Medium Priority

[List suboptimal design issues, or write "None found"]

### Low Priority / Nits

[List polish items, or write "None found"]

### Consistency Checks

- [ ] Consistent with existing architecture?
- [ ] Performance implications addressed?
- [ ] Edge cases covered?`
)

// Template returns the Tier 3 template for role ("engineer", "reviewer"
// or "discovery", any case) and whether the role has one.
func Template(role gap.Role) (string, bool) {
	switch normalizeRole(role) {
	case gap.Engineer:
		return EngineerTemplate, true
	case gap.Reviewer:
		return ReviewerTemplate, true
	case gap.Discovery:
		return DiscoveryTemplate, true
	}
	return "", false
}
