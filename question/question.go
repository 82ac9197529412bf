package question

// Kind says which decision a Question is about.
type Kind string

// The kinds of question refine asks. The values are stored with pending
// questions, so they never change.
const (
	KindEscalation       Kind = "escalation"        // a role exhausted its retries
	KindRoundFailed      Kind = "round_failed"      // both roles failed in one round
	KindDivergence       Kind = "divergence"        // the loop stopped making progress
	KindEarlyTermination Kind = "early_termination" // the good-enough criteria are met
	KindConflict         Kind = "conflict"          // an explicit or converted disagreement
	KindImplicit         Kind = "implicit"          // Reviewer feedback apparently ignored
	KindDisagreeRate     Kind = "disagree_rate"     // the Engineer disagrees too often
	KindRollback         Kind = "rollback"          // a rollback dialog or the rollback limit
	KindDiscovery        Kind = "discovery"         // confirm the gap list discovery proposed (round 0)
)

// Option is one choice of a Question.
type Option struct {
	// Key is what the user answers with ("1", "A", "narrow_scope").
	Key string `json:"key"`
	// Label is the choice as the user reads it.
	Label string `json:"label"`
	// Effect says what choosing the option does: a sentence for the user,
	// or a stable token the asking package dispatches on (each package
	// documents which).
	Effect string `json:"effect,omitempty"`
	// Recommended marks the option the asking package advises.
	Recommended bool `json:"recommended,omitempty"`
}

// Question is a decision refine needs from the user.
type Question struct {
	// ID is stable across processes: answering it after a restart works.
	ID    string `json:"id"`
	Kind  Kind   `json:"kind"`
	Round int    `json:"round"`
	Title string `json:"title"`
	// Body is markdown, worded as the specification's questions are.
	Body    string   `json:"body"`
	Options []Option `json:"options"`
	// AllowText says whether free text may accompany (or, with no options,
	// form) the answer.
	AllowText bool `json:"allow_text,omitempty"`
	// Default is the option automated mode picks.
	Default string `json:"default,omitempty"`
	// TextRequired lists the option keys that need free text (a
	// user-specified alternative, a justification).
	TextRequired []string `json:"text_required,omitempty"`
}

// Answer is the user's choice.
type Answer struct {
	Key  string `json:"key"`
	Text string `json:"text,omitempty"`
}
