package gap

// Role names a participant of a round: the Engineer proposes resolutions,
// the Reviewer critiques them. Every package that needs a role name uses
// this type (the root package calls it RoleName).
type Role string

// The two LLM-backed roles.
const (
	Engineer Role = "engineer"
	Reviewer Role = "reviewer"
)

// Discovery names the discovery call (DESIGN §19): the Reviewer's call on
// the draft alone, before round 1, that proposes the gap list. Its
// recorded answers are discovery-NNN.md, its example the built-in one.
const Discovery Role = "discovery"

// Title returns the role capitalised for headings ("Engineer").
func (r Role) Title() string {
	if r == "" {
		return ""
	}
	b := []byte(r)
	if b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	return string(b)
}
