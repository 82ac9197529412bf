package refine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// Run's driver asks its Asker again when an answer does not fit the
// question, saying why, and fails the run after three such answers.
func TestDriverAsksAgainAfterAnInvalidAnswer(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		keys    []string
		wantErr bool
	}{
		{"then a valid one", []string{"zz", "1"}, false},
		{"three invalid", []string{"zz", "yy", "xx"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := refinetest.Script(exhausted(engineerDoc("GAP-FLOW-001", "GAP-FLOW-002"))...)
			rev := refinetest.Script(reviewerDoc(1, "GAP-FLOW-001, GAP-FLOW-002"))
			ask := refinetest.Keys(tt.keys...)
			cfg := refinetest.Config(eng, rev, then(ask), twoGaps...)
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			out, err := s.Run(ctx)
			asked := ask.Asked()
			if len(asked) < 2 {
				t.Fatalf("asked %d questions, want the escalation asked again", len(asked))
			}
			if asked[1].ID != asked[0].ID || !strings.Contains(asked[1].Body, "(Previous answer rejected: ") || strings.Contains(asked[0].Body, "Previous answer rejected") {
				t.Errorf("second ask of %s does not say why the first answer was refused:\n%s", asked[0].ID, asked[1].Body)
			}
			if !tt.wantErr {
				if err != nil || out.Status == refine.StatusFailed {
					t.Fatalf("Run = %+v, %v; want the session to go on after the valid answer", out, err)
				}
				return
			}
			if !errors.Is(err, refine.ErrInvalidAnswer) || out.Status != refine.StatusFailed {
				t.Fatalf("Run = %+v, %v; want FAILED wrapping ErrInvalidAnswer", out, err)
			}
			if len(asked) != 3 {
				t.Errorf("asked %d times, want 3", len(asked))
			}
		})
	}
}
