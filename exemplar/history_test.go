package exemplar

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// padTo pads s with prose to exactly n characters.
func padTo(s string, n int) string {
	if len(s) > n {
		panic("padTo: text too long")
	}
	return s + strings.Repeat("z", n-len(s))
}

func TestRelevanceScore(t *testing.T) {
	structured := "## Gap Resolution: GAP-FLOW-001\n\n### Trade-offs\n\n### Examples\n\n"
	tests := []struct {
		name    string
		item    HistoryItem
		failure validate.FailureType
		want    int
	}{
		{"WRONG_FORMAT: all three headers", HistoryItem{Content: structured}, validate.WrongFormat, 20},
		{"WRONG_FORMAT: resolution header only", HistoryItem{Content: "## Gap Resolution: GAP-FLOW-001\n"}, validate.WrongFormat, 10},
		{"WRONG_FORMAT: trade-offs only", HistoryItem{Content: "### Trade-offs\n"}, validate.WrongFormat, 5},
		{"WRONG_FORMAT: headers in a fence are examples, not structure", HistoryItem{Content: "```\n" + structured + "```\n"}, validate.WrongFormat, 0},
		{"WRONG_FORMAT: wrong level does not count", HistoryItem{Content: "### Gap Resolution: GAP-FLOW-001\n## Trade-offs\n"}, validate.WrongFormat, 0},
		{"WRONG_FORMAT: failure type case and space tolerated", HistoryItem{Content: structured}, " wrong_format ", 20},
		{"NO_GAPS_ADDRESSED: no references", HistoryItem{Content: "general concepts"}, validate.NoGapsAddressed, 0},
		{"NO_GAPS_ADDRESSED: 3 references", HistoryItem{Content: "GAP-FLOW-001 GAP-FLOW-002 and GAP-FLOW-001 again"}, validate.NoGapsAddressed, 6},
		{"NO_GAPS_ADDRESSED: capped at 10", HistoryItem{Content: strings.Repeat("GAP-FLOW-001 ", 7)}, validate.NoGapsAddressed, 10},
		{"NO_GAPS_ADDRESSED: references in code and placeholders do not count", HistoryItem{Content: "`GAP-FLOW-001` GAP-XXX\n```\nGAP-FLOW-002\n```\nGAP-FLOW-0012"}, validate.NoGapsAddressed, 0},
		{"structure is not scored for other failures", HistoryItem{Content: structured}, validate.EmptyOutput, 0},
		{"led to an ACCEPTED gap", HistoryItem{Content: "x", LedToAccepted: true}, validate.EmptyOutput, 20},
		{"length 500: no bonus", HistoryItem{Content: padTo("", 500)}, validate.EmptyOutput, 0},
		{"length 501", HistoryItem{Content: padTo("", 501)}, validate.EmptyOutput, 5},
		{"length 4,999", HistoryItem{Content: padTo("", 4999)}, validate.EmptyOutput, 5},
		{"length 5,000", HistoryItem{Content: padTo("", 5000)}, validate.EmptyOutput, 2},
		{"length 9,999", HistoryItem{Content: padTo("", 9999)}, validate.EmptyOutput, 2},
		{"length 10,000: too long", HistoryItem{Content: padTo("", 10000)}, validate.EmptyOutput, 0},
		{"length counts characters, not bytes", HistoryItem{Content: strings.Repeat("é", 501)}, validate.EmptyOutput, 5},
		{"everything", HistoryItem{Content: padTo(structured, 1000), LedToAccepted: true}, validate.WrongFormat, 45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RelevanceScore(tt.item, tt.failure); got != tt.want {
				t.Errorf("RelevanceScore = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSessionExample(t *testing.T) {
	long := padTo("## Gap Resolution: GAP-FLOW-001\n", 1000) // +5 for length
	tests := []struct {
		name      string
		role      gap.Role
		failure   validate.FailureType
		round     int
		history   []HistoryItem
		wantRound int // 0: no candidate
		wantIndex int // which of two same-round items
	}{
		{
			name: "empty history",
			role: gap.Engineer, failure: validate.EmptyOutput, round: 3,
		},
		{
			name: "only rolled-back rounds",
			role: gap.Engineer, failure: validate.EmptyOutput, round: 5,
			history: []HistoryItem{{Round: 3, Role: "engineer", Content: long, RolledBack: true, LedToAccepted: true}},
		},
		{
			name: "rolled-back round never chosen, however good",
			role: gap.Engineer, failure: validate.EmptyOutput, round: 5,
			history: []HistoryItem{
				{Round: 2, Role: "engineer", Content: "short"},
				{Round: 4, Role: "engineer", Content: long, RolledBack: true, LedToAccepted: true},
			},
			wantRound: 2,
		},
		{
			name: "highest score wins over recency",
			role: gap.Engineer, failure: validate.EmptyOutput, round: 5,
			history: []HistoryItem{
				{Round: 2, Role: "engineer", Content: long, LedToAccepted: true},
				{Round: 4, Role: "engineer", Content: long},
			},
			wantRound: 2,
		},
		{
			name: "tie: most recent round first",
			role: gap.Engineer, failure: validate.EmptyOutput, round: 9,
			history: []HistoryItem{
				{Round: 3, Role: "engineer", Content: long},
				{Round: 7, Role: "engineer", Content: long},
				{Round: 5, Role: "engineer", Content: long},
			},
			wantRound: 7,
		},
		{
			name: "tie in the same round: earlier in history",
			role: gap.Engineer, failure: validate.EmptyOutput, round: 9,
			history: []HistoryItem{
				{Round: 4, Role: "engineer", Content: long + "a"},
				{Round: 4, Role: "engineer", Content: long + "b"},
			},
			wantRound: 4, wantIndex: 0,
		},
		{
			name: "other role, current and later rounds, blank content excluded",
			role: gap.Reviewer, failure: validate.EmptyOutput, round: 4,
			history: []HistoryItem{
				{Round: 1, Role: "engineer", Content: long, LedToAccepted: true},
				{Round: 4, Role: "reviewer", Content: long, LedToAccepted: true},
				{Round: 6, Role: "reviewer", Content: long, LedToAccepted: true},
				{Round: 3, Role: "reviewer", Content: " \n "},
				{Round: 0, Role: "reviewer", Content: long},
				{Round: 2, Role: "Reviewer", Content: "ok"},
			},
			wantRound: 2,
		},
		{
			name: "round 1 has no earlier rounds",
			role: gap.Engineer, failure: validate.EmptyOutput, round: 1,
			history: []HistoryItem{{Round: 1, Role: "engineer", Content: long}},
		},
		{
			name: "NO_GAPS_ADDRESSED prefers gap references",
			role: gap.Engineer, failure: validate.NoGapsAddressed, round: 5,
			history: []HistoryItem{
				{Round: 3, Role: "engineer", Content: "GAP-FLOW-001 GAP-FLOW-002 GAP-FLOW-003"},
				{Round: 4, Role: "engineer", Content: "GAP-FLOW-001"},
			},
			wantRound: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := SessionExample(tt.role, tt.failure, tt.round, tt.history)
			if ok != (tt.wantRound != 0) {
				t.Fatalf("ok = %v, want %v (got %+v)", ok, tt.wantRound != 0, got)
			}
			if !ok {
				return
			}
			var want HistoryItem
			n := 0
			for _, h := range tt.history {
				if h.Round == tt.wantRound && normalizeRole(h.Role) == tt.role && !h.RolledBack {
					if n == tt.wantIndex {
						want = h
					}
					n++
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("SessionExample mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSessionMissReasons(t *testing.T) {
	tests := []struct {
		name    string
		round   int
		history []HistoryItem
		want    string
	}{
		{"first round", 1, nil, "round 1 has no earlier rounds"},
		{"nothing earlier", 4, nil, "no validated engineer output from an earlier round"},
		{"rolled back", 4, []HistoryItem{{Round: 2, Role: "engineer", Content: "x", RolledBack: true}, {Round: 3, Role: "engineer", Content: "y", RolledBack: true}},
			"no validated engineer output from an earlier round (2 from rolled-back rounds excluded)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, n, why := bestInHistory(gap.Engineer, validate.EmptyOutput, tt.round, tt.history)
			if n != 0 || why != tt.want {
				t.Errorf("got (%d candidates, %q), want (0, %q)", n, why, tt.want)
			}
		})
	}
}

func TestProvenance(t *testing.T) {
	tests := []struct {
		name string
		item HistoryItem
		want string
	}{
		{
			name: "the spec's header: addressed and approved",
			item: HistoryItem{Round: 3, Role: "engineer", Content: "## Gap Resolution: GAP-FLOW-002\n\ntext", LedToAccepted: true},
			want: "---\nExample from this session (Round 3):\nThis output successfully addressed GAP-FLOW-002 and was approved by Reviewer.\n---",
		},
		{
			name: "not accepted: no approval claimed; fenced headers ignored",
			item: HistoryItem{Round: 2, Role: "engineer", Content: "## Gap Resolution: GAP-FLOW-001\n\n## Gap Resolution: GAP-UX-003\n\n```\n## Gap Resolution: GAP-NO-001\n```\n"},
			want: "---\nExample from this session (Round 2):\nThis output successfully addressed GAP-FLOW-001, GAP-UX-003 and passed Mediator validation.\n---",
		},
		{
			name: "no gap heading",
			item: HistoryItem{Round: 2, Role: "engineer", Content: "text"},
			want: "---\nExample from this session (Round 2):\nThis output passed Mediator validation.\n---",
		},
		{
			name: "review",
			item: HistoryItem{Round: 4, Role: "reviewer", Content: "## Review: GAP-FLOW-001 through GAP-FLOW-007\n", LedToAccepted: true},
			want: "---\nExample from this session (Round 4):\nThis review of GAP-FLOW-001 through GAP-FLOW-007 passed Mediator validation and led to ACCEPTED gaps.\n---",
		},
		{
			name: "review without a subject",
			item: HistoryItem{Round: 4, Role: "reviewer", Content: "## Review:\n"},
			want: "---\nExample from this session (Round 4):\nThis review passed Mediator validation.\n---",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, provenance(tt.item)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSessionBody(t *testing.T) {
	got := sessionBody(HistoryItem{Content: "---\nround: 2\n---\r\n\r\n## Gap Resolution: GAP-FLOW-001\r\n\r\ntext  \r\n\r\n"})
	if want := "## Gap Resolution: GAP-FLOW-001\n\ntext"; got != want {
		t.Errorf("sessionBody = %q, want %q", got, want)
	}
}

// TestCountGapReferencesMatchesGap checks the windowed count against gap's
// own matcher on the full text, so the two cannot drift apart.
func TestCountGapReferencesMatchesGap(t *testing.T) {
	texts := []string{
		"", "GAP-", "GAP-FLOW-001", "xGAP-FLOW-001", "GAP-FLOW-0012", "GAP-FLOW-001a GAP-FLOW-001ab",
		"GAP-ABCDEFGHIJ-001b.", "GAP-ABCDEFGHIJK-001", "GAP-A-001", "éGAP-UX-002é", "GAP-GAP-FLOW-001",
		"(GAP-FLOW-001,GAP-FLOW-002)GAP-FLOW-003_", "GAP-FLOW-001\nGAP-FLOW-002\tGAP-XXX GAP-FLOW-00",
	}
	for _, name := range []string{"round-01-flow-gaps.md", "round-07-example-attachment.md", "round-09-error-recovery.md"} {
		texts = append(texts, readSpec(t, name))
	}
	for _, text := range texts {
		want := len(gap.FindIDMatches(text))
		if got := countGapReferences(text, 1<<30); got != want {
			t.Errorf("countGapReferences(%.40q) = %d, gap finds %d", text, got, want)
		}
		if got := countGapReferences(text, 3); got != min(want, 3) {
			t.Errorf("countGapReferences(%.40q, 3) = %d, want %d", text, got, min(want, 3))
		}
	}
}
