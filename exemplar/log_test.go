package exemplar

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/validate"
)

func TestRenderLog(t *testing.T) {
	tests := []struct {
		name    string
		entries []LogEntry
		want    string
	}{
		{
			// The two entries of GAP-FLOW-008 §8, verbatim; the statistics are
			// computed from them (the spec's table counts other entries).
			name: "the spec's example",
			entries: []LogEntry{
				{Round: 3, Role: "engineer", Retry: 1, FailureType: validate.WrongFormat, Tier: TierCanonical,
					Chars: 1247, Tokens: 312, Outcome: OutcomeSuccess},
				{Round: 5, Role: "reviewer", Retry: 2, FailureType: validate.NoGapsAddressed, Tier: TierSession,
					Source: "Tier 2 (Round 3 reviewer.md)", Chars: 3891, Tokens: 973, TruncatedFromChars: 6234, TruncatedFromTokens: 1559,
					Outcome: OutcomeSuccess},
			},
			want: `## Example Attachment Log

### Round 3 - Engineer Retry 1
- **Failure Type:** WRONG_FORMAT
- **Example Source:** Tier 1 (Canonical from workflow spec)
- **Example Size:** 1,247 chars (312 tokens)
- **Truncated:** No
- **Retry Outcome:** Success

### Round 5 - Reviewer Retry 2
- **Failure Type:** NO_GAPS_ADDRESSED
- **Example Source:** Tier 2 (Round 3 reviewer.md)
- **Example Size:** 3,891 chars (973 tokens)
- **Truncated:** Yes (from 6,234 chars)
- **Retry Outcome:** Success

### Example Source Statistics
| Source | Uses | Success Rate |
|--------|------|--------------|
| Tier 1 (Canonical) | 1 | 100% |
| Tier 2 (Session) | 1 | 100% |
| Tier 3 (Template) | 0 | - |
`,
		},
		{
			name: "rates, pending and no-example entries",
			entries: []LogEntry{
				{Round: 1, Role: "engineer", Retry: 1, FailureType: validate.WrongFormat, Tier: TierTemplate, Chars: 500, Tokens: 125, Outcome: OutcomeFailed},
				{Round: 1, Role: "engineer", Retry: 2, FailureType: validate.WrongFormat, Tier: TierTemplate, Chars: 500, Tokens: 125, Outcome: "Success on retry"},
				{Round: 2, Role: "engineer", Retry: 1, FailureType: validate.WrongFormat, Tier: TierTemplate, Chars: 500, Tokens: 125, Outcome: OutcomeSuccess},
				{Round: 2, Role: "reviewer", Retry: 1, FailureType: validate.MissingFile, Tier: TierNone},
				{Round: 3, Role: "engineer", Retry: 1, FailureType: validate.EmptyOutput, Tier: TierCanonical, Chars: 1000, Tokens: 250, TruncatedFromTokens: 2100},
			},
			want: `## Example Attachment Log

### Round 1 - Engineer Retry 1
- **Failure Type:** WRONG_FORMAT
- **Example Source:** Tier 3 (Template)
- **Example Size:** 500 chars (125 tokens)
- **Truncated:** No
- **Retry Outcome:** Failed

### Round 1 - Engineer Retry 2
- **Failure Type:** WRONG_FORMAT
- **Example Source:** Tier 3 (Template)
- **Example Size:** 500 chars (125 tokens)
- **Truncated:** No
- **Retry Outcome:** Success on retry

### Round 2 - Engineer Retry 1
- **Failure Type:** WRONG_FORMAT
- **Example Source:** Tier 3 (Template)
- **Example Size:** 500 chars (125 tokens)
- **Truncated:** No
- **Retry Outcome:** Success

### Round 2 - Reviewer Retry 1
- **Failure Type:** FILE_MISSING
- **Example Source:** None (no example attached)
- **Example Size:** 0 chars (0 tokens)
- **Truncated:** No
- **Retry Outcome:** Pending

### Round 3 - Engineer Retry 1
- **Failure Type:** EMPTY_OUTPUT
- **Example Source:** Tier 1 (Canonical from workflow spec)
- **Example Size:** 1,000 chars (250 tokens)
- **Truncated:** Yes (from 2,100 tokens)
- **Retry Outcome:** Pending

### Example Source Statistics
| Source | Uses | Success Rate |
|--------|------|--------------|
| Tier 1 (Canonical) | 1 | - |
| Tier 2 (Session) | 0 | - |
| Tier 3 (Template) | 3 | 67% |
`,
		},
		{
			name: "empty",
			want: `## Example Attachment Log

No examples attached.

### Example Source Statistics
| Source | Uses | Success Rate |
|--------|------|--------------|
| Tier 1 (Canonical) | 0 | - |
| Tier 2 (Session) | 0 | - |
| Tier 3 (Template) | 0 | - |
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RenderLog(tt.entries)); diff != "" {
				t.Errorf("RenderLog mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewLogEntry(t *testing.T) {
	sel := Selection{Tier: TierSession, Source: "Tier 2 Session History (Round 3)", HistoryRound: 3,
		Chars: 3891, Tokens: 973, TruncatedFromTokens: 1559, TruncatedFromChars: 6234}
	want := LogEntry{Round: 5, Role: "reviewer", Retry: 2, FailureType: validate.NoGapsAddressed, Tier: TierSession,
		Source: "Tier 2 (Round 3 reviewer.md)", Chars: 3891, Tokens: 973, TruncatedFromTokens: 1559, TruncatedFromChars: 6234,
		Outcome: OutcomePending}
	if diff := cmp.Diff(want, NewLogEntry(5, "Reviewer", 2, validate.NoGapsAddressed, sel)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		tier int
		want string
	}{
		{TierNone, "None (no example attached)"},
		{TierCanonical, "Tier 1 (Canonical from workflow spec)"},
		{TierTemplate, "Tier 3 (Template)"},
	} {
		if got := NewLogEntry(1, "engineer", 1, "", Selection{Tier: tt.tier}).Source; got != tt.want {
			t.Errorf("tier %d source %q, want %q", tt.tier, got, tt.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1247: "1,247", 1234567: "1,234,567", -6234: "-6,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
