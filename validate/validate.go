package validate

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// Validate runs Engineer or Reviewer by role (gap.Engineer or gap.Reviewer,
// in any letter case). The error is only for an unknown role; a failed
// validation is a Result.
func Validate(role gap.Role, content string, opt Options) (Result, error) {
	switch gap.Role(strings.ToLower(string(role))) {
	case gap.Engineer:
		return Engineer(content, opt), nil
	case gap.Reviewer:
		return Reviewer(content, opt), nil
	}
	return Result{}, fmt.Errorf("validate: unknown role %q: want %q or %q", role, gap.Engineer, gap.Reviewer)
}
