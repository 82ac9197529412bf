package core

import (
	"errors"
	"testing"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
)

func TestApprovalBlocked(t *testing.T) {
	c := func(id string, sev gap.Severity, status conflict.Status) conflict.Conflict {
		return conflict.Conflict{IssueID: id, Issue: conflict.Issue{ID: id, Severity: sev}, Status: status}
	}
	tests := []struct {
		name      string
		conflicts []conflict.Conflict
		acked     bool
		high      bool
		err       string
	}{
		{"none", nil, false, false, ""},
		{"medium does not block", []conflict.Conflict{c("ISSUE-R1-001", gap.Medium, conflict.StatusUnresolved)}, false, false, ""},
		{"resolved high", []conflict.Conflict{c("ISSUE-R1-001", gap.High, conflict.StatusResolved)}, false, false, ""},
		{"high unacknowledged", []conflict.Conflict{c("ISSUE-R1-001", gap.High, conflict.StatusUnresolved), c("ISSUE-R1-002", gap.High, conflict.StatusUnresolved)}, false, false,
			"approve: approval blocked by unresolved conflicts: unresolved HIGH conflict(s) ISSUE-R1-001, ISSUE-R1-002 need an explicit acknowledgment (ApproveRequest.AcknowledgeHigh)"},
		{"high acknowledged", []conflict.Conflict{c("ISSUE-R1-001", gap.High, conflict.StatusUnresolved)}, true, true, ""},
		{"critical blocks even acknowledged", []conflict.Conflict{c("ISSUE-R1-001", gap.High, conflict.StatusUnresolved), c("ISSUE-R1-002", gap.Critical, conflict.StatusUnresolved)}, true, false,
			"approve: approval blocked by unresolved conflicts: unresolved CRITICAL conflict(s) ISSUE-R1-002 block every ending but abandoning; answer their questions (Session.Answer) first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			high, err := ApprovalBlocked(&state.State{Conflicts: tt.conflicts}, tt.acked)
			if high != tt.high {
				t.Errorf("high = %v, want %v", high, tt.high)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tt.err != "" && (err == nil || err.Error() != tt.err || !errors.Is(err, ErrBlocked)):
				t.Errorf("err = %v, want %q wrapping ErrBlocked", err, tt.err)
			}
		})
	}
}

func TestEndReason(t *testing.T) {
	for _, tt := range []struct{ note, want string }{
		{"", "approved by the user"},
		{"   ", "approved by the user"},
		{" good\nenough ", "approved by the user: good enough"},
	} {
		if got := EndReason("approved by the user", tt.note); got != tt.want {
			t.Errorf("endReason(%q) = %q, want %q", tt.note, got, tt.want)
		}
	}
}

func TestApprovalBlockedByEarlierAcknowledgment(t *testing.T) {
	st := &state.State{HighAck: true, Conflicts: []conflict.Conflict{
		{IssueID: "ISSUE-R1-001", Issue: conflict.Issue{ID: "ISSUE-R1-001", Severity: gap.High}, Status: conflict.StatusUnresolved},
	}}
	if high, err := ApprovalBlocked(st, false); err != nil || !high {
		t.Errorf("acknowledged earlier: high %v err %v, want true, nil", high, err)
	}
}
