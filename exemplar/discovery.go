package exemplar

import (
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// DiscoveryTemplate is the built-in example of a discovery answer (DESIGN
// §19): the Tier 3 example of the discovery call, the only tier it has,
// since Tier 1 (the workflow spec's Section 7) holds no discovery answer
// and Tier 2 (this session's validated outputs) has nothing before round 1.
// It reads as a valid answer (validate.Discovery) in form.
const DiscoveryTemplate = `- GAP-AREA-001 (HIGH): [What the spec leaves open, in one line]
  Location: "[the spec's own words where it leaves this open, quoted exactly]"
  Why: [What an implementer cannot decide from the spec as it stands]
- GAP-AREA-002 (MEDIUM): [Another open point, in one line]
  Location: [a heading of the spec, as it reads]
  Why: [What goes wrong if it stays open]`

// The descriptions of the discovery example, shown after "Source:".
const (
	descDiscovery          = "Built-in example - a gap line, then its Location and Why"
	descDiscoveryFormat    = "Built-in example - follow this format exactly"
	descDiscoveryDuplicate = "Built-in example - one gap per ID, none from the given list"
	descDiscoveryUnlocated = "Built-in example - a Location quotes the spec or names a heading"
)

// noteDiscoveryTiers says why the discovery call takes the built-in example.
const noteDiscoveryTiers = "Tier 1 and Tier 2 hold no discovery answer before round 1: the built-in example (Tier 3)"

// isDiscovery reports whether a request is the discovery call's: its role
// is gap.Discovery, or its failure one only a discovery answer has.
func isDiscovery(role gap.Role, ft validate.FailureType) bool {
	switch ft {
	case validate.MalformedGap, validate.DuplicateGap, validate.UnlocatedGap:
		return true
	}
	return role == gap.Discovery
}

// selectDiscovery is Select for the discovery call: no example after
// FILE_MISSING, else the built-in example (DiscoveryTemplate), described
// after the failure:
//
//	MALFORMED_GAP, WRONG_FORMAT and the other failures of form
//	                "follow this format exactly"
//	DUPLICATE_GAP   "one gap per ID, none from the given list"
//	UNLOCATED_GAP   "a Location quotes the spec or names a heading"
//	EMPTY_OUTPUT and anything else
//	                "a gap line, then its Location and Why"
func selectDiscovery(req Request) Selection {
	desc := descDiscovery
	switch normalizeFailure(req.FailureType) {
	case validate.MissingFile:
		return finish(choice{source: SourceNone, desc: descFileMissing}, req,
			[]string{"FILE_MISSING: no example helps with a file creation issue"})
	case validate.MalformedGap, validate.WrongFormat, validate.Truncated, validate.Refusal, validate.Clarification, validate.AmbiguousStructure:
		desc = descDiscoveryFormat
	case validate.DuplicateGap:
		desc = descDiscoveryDuplicate
	case validate.UnlocatedGap:
		desc = descDiscoveryUnlocated
	}
	return finish(choice{framed: framed{body: DiscoveryTemplate}, tier: TierTemplate, source: SourceTemplate, desc: desc}, req,
		[]string{noteDiscoveryTiers})
}
