package validate

import "github.com/refine-spec/refine/gap"

// Defaults for the zero values of Options.
const (
	// DefaultMaxOutputBytes caps an output at 1 MiB, the engine's default
	// MaxOutputBytes; a larger output fails as WRONG_FORMAT.
	DefaultMaxOutputBytes = 1 << 20
	// DefaultMinSectionChars is the THIN_CONTENT threshold of GAP-FLOW-001 §2.
	DefaultMinSectionChars = 200
)

// Options carries what a validation needs to know beyond the output itself.
// The zero value validates structure and format only.
type Options struct {
	// KnownGaps are the session's gap IDs, open and closed: references to
	// any of them are valid. Nil skips the cross-reference check (as
	// `refine validate` without --gaps does);
	// an empty non-nil slice makes every reference invalid.
	KnownGaps []gap.ID
	// KnownIssues are the issue IDs a DISAGREE block may reference. Nil
	// skips the existence check.
	KnownIssues []string
	// ResolvedIssues are issues whose conflict the user already decided; a
	// DISAGREE block for one of them is RE_ARGUED_CONFLICT (GAP-FLOW-006 §5).
	ResolvedIssues []string
	// Round is the current round. When positive, every Reviewer issue ID
	// must be ISSUE-R{Round}-NNN.
	Round int
	// MaxOutputBytes caps the output size; 0 means DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MinSectionChars is the THIN_CONTENT warning threshold per Gap
	// Resolution section; 0 means DefaultMinSectionChars.
	MinSectionChars int
	// FinishReason is the backend's finish reason for this answer, as
	// journaled ("stop", "length", "max_tokens", "refusal", …; "" when the
	// backend gives none). One that says the token limit cut the answer
	// (CutByTokenLimit) makes it TRUNCATED and one that reports a refusal or
	// a content filter (ProviderRefusal) makes it REFUSAL, before any other
	// check but the MaxOutputBytes bound.
	FinishReason string
}

func (o Options) maxBytes() int {
	if o.MaxOutputBytes > 0 {
		return o.MaxOutputBytes
	}
	return DefaultMaxOutputBytes
}

func (o Options) minChars() int {
	if o.MinSectionChars > 0 {
		return o.MinSectionChars
	}
	return DefaultMinSectionChars
}
