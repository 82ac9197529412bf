package core

import (
	"encoding/json"
	"testing"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
)

// A role's status is stored in state.json as the strings refine has always
// written, and every status, known or not, has its own words in the round
// summary: an unknown one (a newer refine's) is named, not shown as running.
func TestRoleStatusEncodingAndSummary(t *testing.T) {
	tests := []struct {
		status   state.RoleStatus
		json     string
		summary  string
		skipNote string
	}{
		{state.RoleRunning, `{"budget":0}`, "in progress", ""},
		{state.RoleAccepted, `{"status":"accepted","budget":0}`, "OK (0 attempts)", ""},
		{state.RoleSkipped, `{"status":"skipped","budget":0}`, "SKIP", ""},
		{state.RoleNotNeeded, `{"status":"not_needed","budget":0,"skip_note":"no gap to assign"}`, "not needed (no gap to assign)", "no gap to assign"},
		{"paused_elsewhere", `{"status":"paused_elsewhere","budget":0}`, `unknown status "paused_elsewhere"`, ""},
	}
	for _, tt := range tests {
		rp := state.RolePhase{Status: tt.status, SkipNote: tt.skipNote}
		b, err := json.Marshal(rp)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.json {
			t.Errorf("%q encodes as %s, want %s", tt.status, b, tt.json)
		}
		var back state.RolePhase
		if err := json.Unmarshal(b, &back); err != nil || back.Status != tt.status {
			t.Errorf("%s decodes to %q (%v), want %q", b, back.Status, err, tt.status)
		}
		if got := RoleSummary(llm.Engineer, &rp); got != tt.summary {
			t.Errorf("roleSummary(%q) = %q, want %q", tt.status, got, tt.summary)
		}
	}
}
