package validate

import (
	"fmt"
	"strings"
)

// The role names Validate accepts, as the CLI and refine.RoleName spell them.
const (
	RoleEngineer = "engineer"
	RoleReviewer = "reviewer"
)

// Validate runs Engineer or Reviewer by role name (case-insensitive). The
// error is only for an unknown role; a failed validation is a Result.
func Validate(role, content string, opt Options) (Result, error) {
	switch strings.ToLower(role) {
	case RoleEngineer:
		return Engineer(content, opt), nil
	case RoleReviewer:
		return Reviewer(content, opt), nil
	}
	return Result{}, fmt.Errorf("validate: unknown role %q: want %q or %q", role, RoleEngineer, RoleReviewer)
}
