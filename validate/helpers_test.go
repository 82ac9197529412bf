package validate

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// filler is prose long enough (over 200 characters) that a section holding
// it is not thin.
const filler = "The Mediator checks the output before the next phase starts. It reads the file, " +
	"confirms the required headers, and records the outcome in status.md with an ISO 8601 " +
	"timestamp so a later round can tell which attempt passed and why the others failed."

// gapSection returns a complete, valid Gap Resolution section for id.
func gapSection(id string) string {
	return fmt.Sprintf(`## Gap Resolution: %s

**Confidence:** HIGH

### Proposed Solution

%s

### Trade-offs

**Pros:**
- Simple

**Cons:**
- Strict

### New Gaps Introduced

None.
`, id, filler)
}

// doc joins parts with blank lines.
func doc(parts ...string) string { return strings.Join(parts, "\n") }

// outcome is the verdict part of a Result, for failure tables.
type outcome struct {
	Success     bool
	FailureType FailureType
	Retriable   bool
	Tier        Tier
	Line        int
	Message     string
}

func outcomeOf(r Result) outcome {
	return outcome{r.Success, r.FailureType, r.Retriable, r.Tier, r.Line, r.Message}
}

// failed is the expected outcome of a failure of type t.
func failed(t FailureType, line int, msg string) outcome {
	tier := Content
	if t == WrongFormat || t == EmptyOutput || t == MissingFile {
		tier = Structure
	}
	return outcome{false, t, t.Retriable(), tier, line, msg}
}

func ids(s ...string) []gap.ID {
	out := make([]gap.ID, len(s))
	for i, x := range s {
		out[i] = gap.ID(x)
	}
	return out
}
