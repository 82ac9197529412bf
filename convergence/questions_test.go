package convergence

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
)

// flow002Rows are the rows of GAP-FLOW-002's example table.
func flow002Rows() []Row {
	return []Row{
		{Round: 1, GapsStart: 25, Resolved: 3, New: 2, GapsEnd: 24, Net: 1, WeightedNet: 1, State: Converging},
		{Round: 2, GapsStart: 24, Resolved: 4, New: 4, GapsEnd: 24, Net: 0, WeightedNet: 0, State: Stalled(1)},
		{Round: 3, GapsStart: 24, Resolved: 1, New: 5, GapsEnd: 28, Net: -4, WeightedNet: -4, State: DivergenceWarning},
	}
}

// text renders a question as a terminal shows convergence's questions:
// title, body, then numbered "Label - Effect" options.
func text(p question.Question) string {
	var b strings.Builder
	b.WriteString(p.Title + "\n\n" + strings.TrimRight(p.Body, "\n") + "\n\nOptions:\n")
	for i, o := range p.Options {
		fmt.Fprintf(&b, "%d. %s - %s", i+1, o.Label, o.Effect)
		if o.Recommended {
			b.WriteString(" (recommended)")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func keys(p question.Question) []string {
	var out []string
	for _, o := range p.Options {
		out = append(out, o.Key)
	}
	return out
}

func TestDivergenceQuestionSpecWording(t *testing.T) {
	l := ledgerOf(t, g(1, gap.High, gap.Open), g(2, gap.Medium, gap.Open), g(3, gap.Low, gap.Blocked), g(4, gap.Low, gap.NeedsRevision))
	p := DivergenceQuestion(DivergenceInput{Rows: flow002Rows(), Ledger: l, RollbackAvailable: true})
	want := `Divergence warning after round 3

The workflow has not made net progress for 2 rounds.
Round 2: Resolved 4, Introduced 4, Reopened 0, Deferred 0 (Net: 0, Weighted net: 0)
Round 3: Resolved 1, Introduced 5, Reopened 0, Deferred 0 (Net: -4, Weighted net: -4)

Open Gaps: 4 (0 Critical, 1 High, 1 Medium, 2 Low)

Options:
1. Narrow scope - Remove non-blocking gaps: defer 2 MEDIUM/LOW gaps (GAP-TEST-002, GAP-TEST-004) as known limitations, or answer with the IDs of the gaps to defer instead (recommended)
2. Accept complexity - Continue with expanded scope; the stall count restarts and no divergence warning is raised for the next 2 rounds
3. Pause for input - Provide additional constraints or context as text; it is added to the next prompts as an adjustment
4. Force complete - Accept current state with known gaps: end as USER_APPROVED with 4 open gaps documented as known limitations
5. Roll back - Discard the latest round(s) and retry from an earlier state (GAP-FLOW-007)
6. Stop - End the session here without approving it - Session ends as STALL_EXIT; open gaps are listed as known limitations
`
	if diff := cmp.Diff(want, text(p)); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
	if p.Kind != question.KindDivergence || !p.AllowText || p.Default != KeyNarrowScope {
		t.Errorf("Kind %q AllowText %v Default %q", p.Kind, p.AllowText, p.Default)
	}
}

func TestDivergenceQuestionOptions(t *testing.T) {
	polish := ledgerOf(t, g(1, gap.Medium, gap.Open))
	onlyHigh := ledgerOf(t, g(1, gap.High, gap.Open), g(2, gap.Low, gap.Blocked))
	tests := []struct {
		name        string
		in          DivergenceInput
		wantKeys    []string
		wantDefault string
	}{
		{"rollback offered", DivergenceInput{Rows: flow002Rows(), Ledger: polish, RollbackAvailable: true},
			[]string{KeyNarrowScope, KeyAcceptComplexity, KeyPauseForInput, KeyForceComplete, KeyRollBack, KeyStop}, KeyNarrowScope},
		{"no rollback available", DivergenceInput{Rows: flow002Rows(), Ledger: polish},
			[]string{KeyNarrowScope, KeyAcceptComplexity, KeyPauseForInput, KeyForceComplete, KeyStop}, KeyNarrowScope},
		{"nothing to narrow: accept complexity", DivergenceInput{Rows: flow002Rows(), Ledger: onlyHigh},
			[]string{KeyNarrowScope, KeyAcceptComplexity, KeyPauseForInput, KeyForceComplete, KeyStop}, KeyAcceptComplexity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DivergenceQuestion(tt.in)
			if diff := cmp.Diff(tt.wantKeys, keys(p)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if p.Default != tt.wantDefault {
				t.Errorf("Default = %q, want %q", p.Default, tt.wantDefault)
			}
			for _, o := range p.Options {
				if o.Recommended != (o.Key == p.Default) {
					t.Errorf("option %s Recommended = %v, default is %s", o.Key, o.Recommended, p.Default)
				}
				if o.Label == "" || o.Effect == "" {
					t.Errorf("option %s lacks label or effect: %+v", o.Key, o)
				}
			}
		})
	}
}

func TestDivergenceQuestionSingleRoundExplosion(t *testing.T) {
	rows := []Row{{Round: 1, Resolved: 2, New: 6, Net: -4, WeightedNet: 5, State: DivergenceWarning}}
	p := DivergenceQuestion(DivergenceInput{Rows: rows, Ledger: ledgerOf(t, g(1, gap.Low, gap.Open))})
	for _, want := range []string{
		"Round 1 introduced far more gaps than it resolved (Net: -4, below -2).",
		"Round 1: Resolved 2, Introduced 6, Reopened 0, Deferred 0 (Net: -4, Weighted net: +5)",
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("Body lacks %q:\n%s", want, p.Body)
		}
	}
}

func TestDivergenceQuestionLongStallIsCapped(t *testing.T) {
	var rows []Row
	for r := 1; r <= 9; r++ {
		rows = append(rows, Row{Round: r, State: DivergenceWarning})
	}
	p := DivergenceQuestion(DivergenceInput{Rows: rows})
	if !strings.Contains(p.Body, "for 9 rounds") || strings.Contains(p.Body, "Round 4:") || !strings.Contains(p.Body, "Round 5:") {
		t.Errorf("Body should name 9 rounds and list rounds 5-9:\n%s", p.Body)
	}
}

func TestEarlyTerminationQuestionSpecWording(t *testing.T) {
	l := ledgerOf(t, g(1, gap.High, gap.Accepted), g(2, gap.Medium, gap.Open), g(3, gap.Medium, gap.Proposed), g(4, gap.Low, gap.Open))
	p := EarlyTerminationQuestion(EarlyTerminationInput{Round: 5, MaxRounds: 10, Ledger: l})
	want := `Accept the spec as good enough?

Session Progress: Round 5 of max 10
Open Gaps: 3 (0 Critical, 0 High, 2 Medium, 1 Low)

No CRITICAL or HIGH gap is open, no gap is blocked, and no HIGH or CRITICAL conflict is unresolved: the spec is good enough to finish.

Options:
1. Continue - Keep refining (2 Medium, 1 Low gaps remain)
2. Accept as complete - Finish as USER_APPROVED (GOOD_ENOUGH when the automated policy accepts) and document the open gaps as known limitations
3. Pause - Save state for later
4. Abandon - End the session as ABANDONED without accepting the spec
`
	if diff := cmp.Diff(want, text(p)); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
	if p.Default != KeyAccept || p.AllowText || p.Kind != question.KindEarlyTermination {
		t.Errorf("Default %q AllowText %v Kind %q", p.Default, p.AllowText, p.Kind)
	}
	for _, o := range p.Options {
		if o.Recommended {
			t.Errorf("option %s is recommended; the offer recommends nothing", o.Key)
		}
	}
	if got := EarlyTerminationQuestion(EarlyTerminationInput{Round: 2, Ledger: ledgerOf(t, g(1, gap.Low, gap.Open))}).Body; !strings.HasPrefix(got, "Session Progress: Round 2\n") {
		t.Errorf("without a limit: %q", got)
	}
}

// TestPromptKeysDriveDecide checks that answer keys convert to the Choice
// Decide expects, and that the automated default of the offer ends a
// good-enough session as GOOD_ENOUGH.
func TestPromptKeysDriveDecide(t *testing.T) {
	l := ledgerOf(t, g(1, gap.Medium, gap.Open))
	p := EarlyTerminationQuestion(EarlyTerminationInput{Round: 3, Ledger: l})
	want := map[string]Outcome{KeyContinue: Continue, KeyAccept: GoodEnough, KeyPause: Paused, KeyAbandon: Abandoned}
	for _, o := range p.Options {
		d := Decide(Input{Round: 3, Ledger: l, Choice: Choice(o.Key), OfferedOpenSet: OpenSetFingerprint(l)})
		if d.Outcome != want[o.Key] {
			t.Errorf("answer %q → %s, want %s", o.Key, d.Outcome, want[o.Key])
		}
	}
	if d := Decide(Input{Ledger: l, Choice: Choice(p.Default)}); d.Outcome != GoodEnough {
		t.Errorf("automated default → %s, want GOOD_ENOUGH", d.Outcome)
	}
	if d := Decide(Input{Ledger: l, Choice: Choice(KeyForceComplete)}); d.Outcome != UserApproved {
		t.Errorf("force complete → %s, want USER_APPROVED", d.Outcome)
	}
}

func TestHighConflictQuestion(t *testing.T) {
	p := HighConflictQuestion(2)
	if diff := cmp.Diff([]string{KeyAcknowledge, KeyContinue}, keys(p)); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if p.Default != KeyContinue || !strings.Contains(p.Body, "2 HIGH-severity conflicts between the Engineer and the Reviewer are unresolved") {
		t.Errorf("Default %q Body %q", p.Default, p.Body)
	}
	if !strings.Contains(HighConflictQuestion(1).Body, "1 HIGH-severity conflict between the Engineer and the Reviewer is unresolved") {
		t.Errorf("singular wording: %q", HighConflictQuestion(1).Body)
	}
}

func TestNarrowScopeDefault(t *testing.T) {
	blocking := g(6, gap.Low, gap.Open)
	blocking.Blocking = true
	l := ledgerOf(t,
		g(9, gap.Low, gap.Open), // out of ID order on purpose
		g(1, gap.High, gap.Open),
		g(2, gap.Critical, gap.Open),
		g(3, gap.Medium, gap.NeedsRevision),
		g(4, gap.Medium, gap.Blocked),
		g(5, gap.Low, gap.Accepted),
		blocking,
		g(7, gap.Low, gap.Deferred),
		g(8, gap.Medium, gap.Proposed),
	)
	want := []gap.ID{gid(3), gid(8), gid(9)}
	if diff := cmp.Diff(want, NarrowScopeDefault(l)); diff != "" {
		t.Errorf("NarrowScopeDefault (-want +got):\n%s", diff)
	}
	if got := NarrowScopeDefault(nil); got != nil {
		t.Errorf("NarrowScopeDefault(nil) = %v", got)
	}
}

func TestScopeFromAnswer(t *testing.T) {
	l := ledgerOf(t, g(1, gap.High, gap.Open), g(2, gap.Low, gap.Open), g(3, gap.Low, gap.Accepted))
	tests := []struct {
		name, text string
		want       []gap.ID
		wantErr    string
	}{
		{"no IDs: default selection", "yes please", []gap.ID{gid(2)}, ""},
		{"explicit IDs, HIGH allowed, sorted", "defer GAP-TEST-002 and GAP-TEST-001", []gap.ID{gid(1), gid(2)}, ""},
		{"unknown gap", "GAP-TEST-001, GAP-TEST-042", nil, "GAP-TEST-042 (unknown)"},
		{"closed gap", "GAP-TEST-003", nil, "GAP-TEST-003 (not open)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ScopeFromAnswer(l, tt.text)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidScope) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error = %v, want ErrInvalidScope mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDivergenceQuestionListsAtMostFiveGaps(t *testing.T) {
	l := &gap.Ledger{}
	addGaps(t, l, 1, 8, gap.Low, 0)
	p := DivergenceQuestion(DivergenceInput{Rows: flow002Rows(), Ledger: l})
	want := "defer 8 MEDIUM/LOW gaps (GAP-TEST-001, GAP-TEST-002, GAP-TEST-003, GAP-TEST-004, GAP-TEST-005, and 3 more)"
	if !strings.Contains(p.Options[0].Effect, want) {
		t.Errorf("narrow scope effect = %q, want it to contain %q", p.Options[0].Effect, want)
	}
}

func TestRemaining(t *testing.T) {
	tests := []struct {
		c    OpenCounts
		want string
	}{
		{OpenCounts{}, "no open gaps remain"},
		{OpenCounts{Total: 1, Low: 1}, "1 Low gap remains"},
		{OpenCounts{Total: 3, Critical: 1, High: 2}, "1 Critical, 2 High gaps remain"},
	}
	for _, tt := range tests {
		if got := remaining(tt.c); got != tt.want {
			t.Errorf("remaining(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestDivergenceQuestionOpeningSentence(t *testing.T) {
	tests := []struct {
		name string
		rows []Row
		want string
	}{
		{"no rows", nil, "The workflow is not converging.\n\nOpen Gaps: 0"},
		{"last round progressed", []Row{{Round: 4, Net: 2, WeightedNet: 2}}, "The workflow is not converging.\nRound 4: Resolved 0"},
		{"single flat round", []Row{{Round: 1, Net: 1, WeightedNet: 1}, {Round: 2}}, "The workflow has not made net progress for 1 round.\nRound 2:"},
		{"explosion after a stall names the stall", []Row{{Round: 1}, {Round: 2, Net: -5, WeightedNet: -5}}, "The workflow has not made net progress for 2 rounds.\nRound 1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DivergenceQuestion(DivergenceInput{Rows: tt.rows})
			if !strings.HasPrefix(p.Body, tt.want) {
				t.Errorf("Body = %q, want prefix %q", p.Body, tt.want)
			}
		})
	}
}
