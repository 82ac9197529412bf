package rollbacktext

import (
	"errors"
	"fmt"
	"strings"

	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// Effects of RecoveryQuestion's options.
const (
	EffectReapplyAll    = "reapply-all"
	EffectModify        = "modify"
	EffectIgnore        = "ignore"
	effectReapplyPrefix = "reapply:"
)

// ReapplyEffect is the Effect of re-applying one decision.
func ReapplyEffect(id string) string { return effectReapplyPrefix + id }

// RecoveryQuestion is the "DECISION RECOVERY" question (Example 5) for the
// decisions archived with a rolled-back round. With one decision the
// options are the spec's three (re-apply, modify and apply, ignore); with
// several, one "Re-apply X only" per decision, then re-apply all, modify
// before re-applying, and leave archived. The automated default is to leave
// the decisions archived: they were rolled back with their round, and only
// a user may bring them back.
func RecoveryQuestion(round int, decisions []rollback.RoundDecision) question.Question {
	var b strings.Builder
	fmt.Fprintf(&b, "Round %d decisions were archived. Found %s:\n", round, rollbackfmt.Plural(len(decisions), "decision", "decisions"))
	for i, d := range decisions {
		fmt.Fprintf(&b, "\n%d. %s", i+1, d.ID)
		if s := rollbackfmt.OneLine(d.Summary); s != "" {
			b.WriteString(": " + s)
		}
		b.WriteString("\n")
		if c := rollbackfmt.OneLine(d.Choice); c != "" {
			fmt.Fprintf(&b, "   Choice: %q\n", c)
		}
		if r := rollbackfmt.OneLine(d.Rationale); r != "" {
			fmt.Fprintf(&b, "   Rationale: %q\n", r)
		}
	}
	p := question.Question{
		Kind:      question.KindRollback,
		ID:        fmt.Sprintf("rollback-recovery-r%d", round),
		Title:     "DECISION RECOVERY",
		Body:      b.String(),
		AllowText: true,
	}
	key := 0
	add := func(label, effect string) string {
		key++
		p.Options = append(p.Options, question.Option{Key: fmt.Sprint(key), Label: label, Effect: effect})
		return fmt.Sprint(key)
	}
	switch len(decisions) {
	case 0:
		p.Default = add("Leave archived (nothing to re-apply)", EffectIgnore)
		return p
	case 1:
		add("Re-apply this decision to current decisions.md", ReapplyEffect(decisions[0].ID))
		add("Modify and apply (edit rationale/choice)", EffectModify)
		p.Default = add("Ignore (decision remains archived only)", EffectIgnore)
		return p
	}
	for _, d := range decisions {
		add(fmt.Sprintf("Re-apply %s only", d.ID), ReapplyEffect(d.ID))
	}
	all := "all"
	if len(decisions) == 2 {
		all = "both"
	}
	add(fmt.Sprintf("Re-apply %s decisions", all), EffectReapplyAll)
	add("Modify before re-applying", EffectModify)
	p.Default = add("Leave archived (don't re-apply)", EffectIgnore)
	return p
}

// Recovery is what the user chose in RecoveryQuestion.
type Recovery struct {
	// Reapply are the decisions to re-apply unchanged.
	Reapply []rollback.RoundDecision
	// Modify: ask ModifyQuestion (which decision, and what it becomes).
	Modify bool
}

// ErrUnknownEffect is returned when an option's Effect is not one the
// prompt offered.
var ErrUnknownEffect = errors.New("unknown option effect")

// ResolveRecovery turns the chosen option of RecoveryQuestion into a Recovery.
func ResolveRecovery(decisions []rollback.RoundDecision, chosen question.Option) (Recovery, error) {
	switch chosen.Effect {
	case EffectIgnore:
		return Recovery{}, nil
	case EffectModify:
		return Recovery{Modify: true}, nil
	case EffectReapplyAll:
		return Recovery{Reapply: append([]rollback.RoundDecision(nil), decisions...)}, nil
	}
	if id, ok := strings.CutPrefix(chosen.Effect, effectReapplyPrefix); ok {
		for _, d := range decisions {
			if d.ID == id {
				return Recovery{Reapply: []rollback.RoundDecision{d}}, nil
			}
		}
		return Recovery{}, fmt.Errorf("rollback: recovery: %w: %s is not among the archived decisions", ErrUnknownEffect, id)
	}
	return Recovery{}, fmt.Errorf("rollback: recovery: %w %q", ErrUnknownEffect, chosen.Effect)
}

// ReappliedNote is the note the spec adds to a re-applied decision.
func ReappliedNote(round int) string {
	return fmt.Sprintf("Re-applied from rolled-back Round %d", round)
}

// Reapply returns the decision as it is appended to the current
// decisions.md: the same ID and content, with the note "Re-applied from
// rolled-back Round N" (render it with Entry). The ID is kept as the spec
// shows; an engine whose retried round may issue the same ID can renumber
// it and keep the original in the note.
func Reapply(d rollback.RoundDecision, round int) rollback.RoundDecision {
	d.Note = ReappliedNote(round)
	return d
}

// Effects of ModifyQuestion's options.
const (
	// EffectBack goes back to the decision-recovery question, nothing changed.
	EffectBack         = "back"
	effectModifyPrefix = "modify:"
)

// ModifyEffect is the Effect of modifying decision id.
func ModifyEffect(id string) string { return effectModifyPrefix + id }

// ModifyTarget is the decision the option chosen in ModifyQuestion
// modifies; false for "back".
func ModifyTarget(decisions []rollback.RoundDecision, chosen question.Option) (rollback.RoundDecision, bool) {
	id, ok := strings.CutPrefix(chosen.Effect, effectModifyPrefix)
	if !ok {
		return rollback.RoundDecision{}, false
	}
	for _, d := range decisions {
		if d.ID == id {
			return d, true
		}
	}
	return rollback.RoundDecision{}, false
}

// ModifyQuestion is the "MODIFY DECISION" question that follows "Modify
// before re-applying": which of the archived decisions to change, and what
// it becomes (the answer's text, read by Modified); that one decision is
// re-applied as modified, the others stay as they are. text is the text
// given with "Modify" (used by an answer without text of its own). The
// automated default is to go back: there is no one to edit.
func ModifyQuestion(round int, decisions []rollback.RoundDecision, text string) question.Question {
	var b strings.Builder
	fmt.Fprintf(&b, "Which archived decision of Round %d do you want to change before re-applying it?\n", round)
	for i, d := range decisions {
		fmt.Fprintf(&b, "\n%d. %s", i+1, d.ID)
		if s := rollbackfmt.OneLine(d.Summary); s != "" {
			b.WriteString(": " + s)
		}
		fmt.Fprintf(&b, "\n   Choice: %q\n   Rationale: %q\n", rollbackfmt.OneLine(d.Choice), rollbackfmt.OneLine(d.Rationale))
	}
	b.WriteString("\nAnswer with the decision's number and its new text: \"Choice: …\" and/or \"Rationale: …\" lines; plain text replaces the choice. Only that decision changes; it is re-applied, and the others are offered again.\n")
	if t := rollbackfmt.OneLine(text); t != "" {
		fmt.Fprintf(&b, "\nA number without text uses the text given with \"Modify\": %q\n", t)
	}
	p := question.Question{
		Kind:      question.KindRollback,
		ID:        fmt.Sprintf("rollback-modify-r%d", round),
		Title:     "MODIFY DECISION",
		Body:      b.String(),
		AllowText: true,
		Default:   "back",
	}
	for i, d := range decisions {
		key := fmt.Sprint(i + 1)
		p.Options = append(p.Options, question.Option{Key: key, Label: fmt.Sprintf("Modify %s, then re-apply it", d.ID), Effect: ModifyEffect(d.ID)})
		if strings.TrimSpace(text) == "" {
			p.TextRequired = append(p.TextRequired, key)
		}
	}
	p.Options = append(p.Options, question.Option{Key: "back", Label: "Back to the decision recovery question (nothing changes)", Effect: EffectBack})
	return p
}

// Modified applies the user's edit text to a decision: "Choice: …" and
// "Rationale: …" lines replace those fields; text without either label
// replaces the choice. The entry is re-rendered from the fields (Text is
// cleared) and carries the re-applied note with "(modified)".
func Modified(d rollback.RoundDecision, round int, text string) rollback.RoundDecision {
	var choice, rationale, plain []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		lower := strings.ToLower(line)
		switch {
		case strings.HasPrefix(lower, "choice:"):
			choice = append(choice, strings.TrimSpace(line[len("choice:"):]))
		case strings.HasPrefix(lower, "rationale:"):
			rationale = append(rationale, strings.TrimSpace(line[len("rationale:"):]))
		case line != "":
			plain = append(plain, line)
		}
	}
	if len(choice) == 0 && len(rationale) == 0 {
		choice = plain
	}
	if len(choice) > 0 {
		d.Choice = strings.Join(choice, " ")
	}
	if len(rationale) > 0 {
		d.Rationale = strings.Join(rationale, " ")
	}
	d.Text = ""
	d.Note = ReappliedNote(round) + " (modified)"
	return d
}
