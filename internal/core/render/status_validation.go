package render

import (
	"time"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/validate"
)

// ValidationRecord is one row of a session's validation log: the result of
// one validation tier for one attempt of a role.
type ValidationRecord struct {
	Round int          `json:"round"`
	At    time.Time    `json:"at"`
	Role  llm.RoleName `json:"role"`
	// Part is the gap ID of a parallel Engineer call, "" otherwise.
	Part    string `json:"part,omitempty"`
	Attempt int    `json:"attempt"`
	// Tier is "Structure" or "Content"; Result is "PASS" or "FAIL".
	Tier    string `json:"tier"`
	Result  string `json:"result"`
	Message string `json:"message"`
	// FailureType is the failure's type (WRONG_FORMAT, TRUNCATED, …), ""
	// for a pass.
	FailureType validate.FailureType `json:"failure_type,omitempty"`
}

// ValidationRecords are the public records (Status.Validation) of in.
func ValidationRecords(in []state.ValidationEntry) []ValidationRecord {
	out := make([]ValidationRecord, len(in))
	for i, e := range in {
		out[i] = ValidationRecord{Round: e.Round, At: e.At, Role: e.Role, Part: e.Part, Attempt: e.Attempt, Tier: e.Tier, Result: e.Result, Message: e.Message, FailureType: e.FailureType}
	}
	return out
}
