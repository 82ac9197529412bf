package conflict

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
)

func TestValidateAnswer(t *testing.T) {
	conflict := ConflictQuestion(sampleConflict(t, gap.Critical)) // A, B, C, D
	noText := question.Question{ID: "q1", Options: []question.Option{{Key: "yes", Label: "Yes"}, {Key: "no", Label: "No"}}}
	tests := []struct {
		name string
		p    question.Question
		key  string
		text string
		want string // "" for valid
	}{
		{"offered option", conflict, "B", "", ""},
		{"offered option with rationale", conflict, "A", "Safer.", ""},
		{"option not offered", conflict, "E", "", `option "E" was not offered for question conflict-r3-ISSUE-R2-001: want one of A, B, C, D`},
		{"no option", conflict, "", "just text", "needs a choice: want one of A, B, C, D"},
		{"D needs the alternative", conflict, "D", "  ", "option D (User Specifies Alternative - Provide your own resolution approach) of question conflict-r3-ISSUE-R2-001 needs text: describe your alternative"},
		{"D with the alternative", conflict, "D", "Header check.", ""},
		{"free text not allowed", noText, "yes", "because", "question q1 takes no free text: answer with one of yes, no alone"},
		{"blank text is no text", noText, "no", " \n", ""},
		{"no options at all", question.Question{ID: "q2"}, "x", "", "want one of (no options)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateAnswer(tt.p, tt.key, tt.text)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if !errors.Is(err, errInvalidAnswer) {
				t.Errorf("err does not wrap ErrInvalidAnswer")
			}
		})
	}
}

func TestPromptDefaultsAreOffered(t *testing.T) {
	f := DetectImplicit(ImplicitInput{Round: 4, EngineerOutput: revised, Issues: []Issue{retryIssue(gap.High)}})[0]
	prompts := []question.Question{
		ConflictQuestion(sampleConflict(t, gap.Critical)),
		ConflictQuestion(sampleConflict(t, gap.High)),
		ConflictQuestion(convertImplicit(f, mustTime(t, "2026-01-12T10:00:00Z"))),
		ImplicitQuestion(f),
	}
	for _, k := range []rateKind{RateBlock, rateWarn, rateSystematic} {
		prompts = append(prompts, RateQuestion(RateAlert{Kind: k, Round: 4}))
	}
	seen := map[string]bool{}
	for _, p := range prompts {
		if err := validateAnswer(p, p.Default, ""); err != nil {
			t.Errorf("%s: default %q: %v", p.ID, p.Default, err)
		}
		if p.ID == "" || p.Kind == "" || p.Title == "" || p.Body == "" || seen[p.ID] && p.Kind != question.KindConflict {
			t.Errorf("prompt %+v incomplete or ID repeated", p)
		}
		seen[p.ID] = true
		for _, o := range p.Options {
			if o.Effect == "" || o.Label == "" {
				t.Errorf("%s: option %+v lacks label or effect", p.ID, o)
			}
		}
	}
	if got := ConflictQuestion(sampleConflict(t, gap.High)).Default; got != "A" {
		t.Errorf("HIGH conflict default = %s, want A (no recommendation: the Reviewer)", got)
	}
	if got := ConflictQuestion(sampleConflict(t, gap.Critical)).Options[0]; !got.Recommended || got.Effect != effectReviewer {
		t.Errorf("CRITICAL option A = %+v", got)
	}
	if want := []string{"D"}; !slices.Equal(prompts[0].TextRequired, want) {
		t.Errorf("conflict TextRequired = %v, want %v (D's alternative)", prompts[0].TextRequired, want)
	}
	text := prompts[0].Text()
	if !strings.Contains(text, "### Conflict: ISSUE-R2-001") || !strings.Contains(text, "Options:\nA. Reviewer Position - Use schema-based validation (RECOMMENDED)\n") {
		t.Errorf("conflict prompt text:\n%s", text)
	}
}
