package rollbacktext

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// SplitChild is a suggested sub-gap: its title and an optional note
// ("what gets rolled back").
type SplitChild struct {
	Title, Note string
}

// RCAInput is what the repeated-rollback question is built from.
type RCAInput struct {
	Round     int
	Attempts  []rollback.AttemptInfo
	Diagnosis rollback.Diagnosis
	// Gap is the gap the analysis is about (to split); GapTitle its title.
	Gap      gap.ID
	GapTitle string
	// Split are suggested sub-gaps (titles come from the caller: the user or
	// a model); children are named Gap.Child('a'), 'b', … in order.
	Split []SplitChild
}

// AnalysisQuestion is the "REPEATED ROLLBACK DETECTED" question: the round's
// rollback history, the possible root causes with evidence and confidence,
// the recommended action (with the suggested split, if any), and the
// spec's five options: split gap, provide additional context (free text),
// reassign, force proceed with the best available output, pause for
// external consultation. The split option is offered only when a gap is
// named; "as suggested" only with the suggested sub-gaps shown in the
// body, whatever the recommendation; without suggested titles its label
// asks for them as free text, one per line (see rollback.ParseSplitTitles).
//
// The automated default is the split when it is recommended and titles were
// suggested (it needs no answer text); otherwise "3", reassign, which moves
// the session on without repeating the failing gap and without the text
// that context would need.
func AnalysisQuestion(in RCAInput) question.Question {
	n := len(in.Attempts)
	var b strings.Builder
	fmt.Fprintf(&b, "Round %d has been rolled back %s.", in.Round, rollbackfmt.TimesWord(n))
	if n >= 2 {
		b.WriteString(" This suggests a systematic issue.")
	}
	b.WriteString("\n\n=== Rollback History ===\n")
	for _, a := range in.Attempts {
		fmt.Fprintf(&b, "Attempt %d: %q (%s)\n", a.Attempt, rollbackfmt.OneLine(a.Reason), triggerSource(a.Trigger))
	}
	b.WriteString("\n=== Possible Root Causes ===\n")
	if len(in.Diagnosis.Causes) == 0 {
		b.WriteString("No heuristic fired; the rollbacks give no consistent signal.\n")
	}
	for i, c := range in.Diagnosis.Causes {
		fmt.Fprintf(&b, "%d. %s (%s confidence)\n   Evidence: %s\n", i+1, c.Cause, c.Confidence, rollbackfmt.OneLine(c.Evidence))
	}
	b.WriteString("\n=== Recommended Actions ===\n")
	fmt.Fprintf(&b, "Based on analysis, recommended action: %s\n", in.Diagnosis.Action.Label())
	canSplit := in.Gap != ""
	suggested := canSplit && len(in.Split) >= 2
	// The split "as suggested" is offered only with its sub-gaps shown.
	if canSplit && (in.Diagnosis.Action == rollback.ActionSplit || suggested) {
		fmt.Fprintf(&b, "\nCurrent gap: %s", in.Gap)
		if t := rollbackfmt.OneLine(in.GapTitle); t != "" {
			fmt.Fprintf(&b, " %q", t)
		}
		b.WriteString("\n")
		if suggested {
			if in.Diagnosis.Action == rollback.ActionSplit {
				b.WriteString("Suggested split:\n")
			} else {
				b.WriteString("If you split it instead, suggested split:\n")
			}
			for i, c := range in.Split {
				fmt.Fprintf(&b, "  - %s: %q", in.Gap.Child(byte('a'+i)), rollbackfmt.OneLine(c.Title))
				if note := rollbackfmt.OneLine(c.Note); note != "" {
					fmt.Fprintf(&b, " (%s)", note)
				}
				b.WriteString("\n")
			}
		}
	}

	title := "REPEATED ROLLBACK DETECTED"
	if n < 2 {
		title = "ROLLBACK ROOT CAUSE ANALYSIS"
	}
	attempt := 0
	if n > 0 {
		attempt = in.Attempts[n-1].Attempt
	}
	p := question.Question{
		Kind:      question.KindRollback,
		ID:        fmt.Sprintf("rollback-analysis-r%d-a%d", in.Round, attempt),
		Title:     title,
		Body:      b.String(),
		AllowText: true,
		Default:   "3",
	}
	if canSplit {
		label := "Split gap as suggested"
		if !suggested {
			label = "Split gap (give sub-gap titles, one per line)"
		}
		p.Options = append(p.Options, question.Option{Key: "1", Label: label, Effect: string(rollback.ActionSplit)})
		if suggested && in.Diagnosis.Action == rollback.ActionSplit {
			p.Default = "1"
		}
	}
	p.Options = append(p.Options,
		question.Option{Key: "2", Label: "Provide additional context for retry", Effect: string(rollback.ActionContext)},
		question.Option{Key: "3", Label: "Reassign to different gaps this round", Effect: string(rollback.ActionReassign)},
		question.Option{Key: "4", Label: "Force proceed with best available output", Effect: string(rollback.ActionForce)},
		question.Option{Key: "5", Label: "Pause session for external consultation", Effect: string(rollback.ActionPause)},
	)
	for i := range p.Options {
		o := &p.Options[i]
		o.Recommended = o.Effect == string(in.Diagnosis.Action)
		// The default is the recommended option, unless it needs text an
		// automated answer cannot give (context; a split with no titles).
		needsText := o.Effect == string(rollback.ActionContext) || o.Effect == string(rollback.ActionSplit) && !suggested
		if o.Recommended && !needsText {
			p.Default = o.Key
		}
	}
	return p
}
