package rollback

import (
	"errors"
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// Decision is a decision made in a round, as this package needs it: plain
// fields the engine fills from its state (decisions are never parsed back
// from LLM output).
type Decision struct {
	// ID is "DECISION-R6-001".
	ID string `json:"id"`
	// Issue is the issue or conflict the decision resolved, if any.
	Issue string `json:"issue,omitempty"`
	// Summary is the decision's title ("Error threshold weights").
	Summary string `json:"summary,omitempty"`
	// Option is the option key the user chose, if the decision came from a question.
	Option string `json:"option,omitempty"`
	// Choice is what was decided ("CRITICAL=16, HIGH=4, MEDIUM=2, LOW=1").
	Choice string `json:"choice,omitempty"`
	// Rationale is why.
	Rationale string `json:"rationale,omitempty"`
	// Text is the entry exactly as decisions.md shows it; when empty, Entry
	// renders one from the fields above.
	Text string `json:"text,omitempty"`
	// Note is an annotation appended to the entry ("Re-applied from
	// rolled-back Round 6").
	Note string `json:"note,omitempty"`
}

// Entry renders the decision as a decisions.md entry: Text when set,
// otherwise
//
//	### DECISION-R6-001: Error threshold weights
//	- **Issue:** ISSUE-R5-003
//	- **Option:** A
//	- **Choice:** CRITICAL=16, HIGH=4, MEDIUM=2, LOW=1
//	- **Rationale:** Matches GAP-FLOW-012 severity definitions
//
// with a final "- **Note:** …" line when Note is set. Empty fields are left out.
func (d Decision) Entry() string {
	var b strings.Builder
	if d.Text != "" {
		b.WriteString(strings.TrimRight(d.Text, "\n") + "\n")
	} else {
		b.WriteString("### " + d.ID)
		if s := oneLine(d.Summary); s != "" {
			b.WriteString(": " + s)
		}
		b.WriteString("\n")
		for _, f := range [...]struct{ name, v string }{
			{"Issue", d.Issue}, {"Option", d.Option}, {"Choice", d.Choice}, {"Rationale", d.Rationale},
		} {
			if v := oneLine(f.v); v != "" {
				fmt.Fprintf(&b, "- **%s:** %s\n", f.name, v)
			}
		}
	}
	if n := oneLine(d.Note); n != "" {
		fmt.Fprintf(&b, "- **Note:** %s\n", n)
	}
	return b.String()
}

// Round returns the round in the decision's ID (6 for DECISION-R6-001), or 0.
func (d Decision) Round() int {
	id, err := gap.ParseDecisionID(d.ID)
	if err != nil {
		return 0
	}
	return id.Round
}

// DecisionsFromRound renders decisions_from_round_N.md, the spec's archive
// of a rolled-back round's decisions:
//
//	# Decisions Made During Round N (Rolled Back)
//
//	**Note:** These decisions were made during Round N, which was subsequently rolled back.
//	They are preserved for reference but are NOT active in the session.
//
//	[Original decision entries from round N]
//
// With no decisions the entries are replaced by a line saying so.
func DecisionsFromRound(round int, decisions []Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Decisions Made During Round %d (Rolled Back)\n\n", round)
	fmt.Fprintf(&b, "**Note:** These decisions were made during Round %d, which was subsequently rolled back.\n", round)
	b.WriteString("They are preserved for reference but are NOT active in the session.\n")
	if len(decisions) == 0 {
		fmt.Fprintf(&b, "\nNo decisions were made during Round %d.\n", round)
	}
	for _, d := range decisions {
		b.WriteString("\n" + d.Entry())
	}
	return b.String()
}

// ParseDecisionsFromRound recovers decisions from a decisions_from_round_N.md
// written with default entries (for recovery from an archive when the state
// no longer holds them). Each heading that starts with a decision ID opens
// an entry; Text is the entry verbatim, and the fields are read from its
// "- **Field:** value" lines. It never fails; unrecognised text is skipped.
func ParseDecisionsFromRound(md string) []Decision {
	doc := markdown.Parse(md)
	var out []Decision
	for _, s := range doc.Sections() {
		ids := gap.FindDecisionMatches(s.Title)
		if len(ids) == 0 || ids[0].Start != 0 {
			continue
		}
		d := Decision{ID: ids[0].ID, Text: strings.TrimRight(doc.Full(s), "\n") + "\n"}
		if rest, ok := strings.CutPrefix(s.Title[ids[0].End:], ":"); ok {
			d.Summary = strings.TrimSpace(rest)
		}
		for line := range strings.SplitSeq(doc.Body(s), "\n") {
			name, value, ok := strings.Cut(strings.TrimSpace(line), ":** ")
			if !ok {
				continue
			}
			value = strings.TrimSpace(value)
			switch strings.TrimPrefix(name, "- **") {
			case "Issue":
				d.Issue = value
			case "Option":
				d.Option = value
			case "Choice":
				d.Choice = value
			case "Rationale":
				d.Rationale = value
			case "Note":
				d.Note = value
			}
		}
		if d.Note != "" {
			// Keep Text without the note so Entry does not print it twice.
			if i := strings.LastIndex(d.Text, "- **Note:**"); i >= 0 {
				d.Text = d.Text[:i]
			}
		}
		out = append(out, d)
	}
	return out
}

// Effects of RecoveryPrompt's options.
const (
	EffectReapplyAll    = "reapply-all"
	EffectModify        = "modify"
	EffectIgnore        = "ignore"
	effectReapplyPrefix = "reapply:"
)

// ReapplyEffect is the Effect of re-applying one decision.
func ReapplyEffect(id string) string { return effectReapplyPrefix + id }

// RecoveryPrompt is the "DECISION RECOVERY" question (Example 5) for the
// decisions archived with a rolled-back round. With one decision the
// options are the spec's three (re-apply, modify and apply, ignore); with
// several, one "Re-apply X only" per decision, then re-apply all, modify
// before re-applying, and leave archived. The automated default is to leave
// the decisions archived: they were rolled back with their round, and only
// a user may bring them back.
func RecoveryPrompt(round int, decisions []Decision) Prompt {
	var b strings.Builder
	fmt.Fprintf(&b, "Round %d decisions were archived. Found %s:\n", round, plural(len(decisions), "decision", "decisions"))
	for i, d := range decisions {
		fmt.Fprintf(&b, "\n%d. %s", i+1, d.ID)
		if s := oneLine(d.Summary); s != "" {
			b.WriteString(": " + s)
		}
		b.WriteString("\n")
		if c := oneLine(d.Choice); c != "" {
			fmt.Fprintf(&b, "   Choice: %q\n", c)
		}
		if r := oneLine(d.Rationale); r != "" {
			fmt.Fprintf(&b, "   Rationale: %q\n", r)
		}
	}
	p := Prompt{
		ID:        fmt.Sprintf("rollback-recovery-r%d", round),
		Title:     "DECISION RECOVERY",
		Body:      b.String(),
		AllowText: true,
	}
	key := 0
	add := func(label, effect string) string {
		key++
		p.Options = append(p.Options, Option{Key: fmt.Sprint(key), Label: label, Effect: effect})
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

// Recovery is what the user chose in RecoveryPrompt.
type Recovery struct {
	// Reapply are the decisions to re-apply unchanged.
	Reapply []Decision
	// Modify: ask ModifyPrompt for each decision, then re-apply the results.
	Modify bool
}

// ErrUnknownEffect is returned when an option's Effect is not one the
// prompt offered.
var ErrUnknownEffect = errors.New("unknown option effect")

// ResolveRecovery turns the chosen option of RecoveryPrompt into a Recovery.
func ResolveRecovery(decisions []Decision, chosen Option) (Recovery, error) {
	switch chosen.Effect {
	case EffectIgnore:
		return Recovery{}, nil
	case EffectModify:
		return Recovery{Modify: true}, nil
	case EffectReapplyAll:
		return Recovery{Reapply: append([]Decision(nil), decisions...)}, nil
	}
	if id, ok := strings.CutPrefix(chosen.Effect, effectReapplyPrefix); ok {
		for _, d := range decisions {
			if d.ID == id {
				return Recovery{Reapply: []Decision{d}}, nil
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
func Reapply(d Decision, round int) Decision {
	d.Note = ReappliedNote(round)
	return d
}

// Effects of ModifyPrompt's options.
const (
	EffectApply        = "apply"
	EffectSkipDecision = "skip-decision"
)

// ModifyPrompt asks for the edited choice and rationale of one decision
// before re-applying it ("Modify and apply"). The answer text is read by
// Modified. The automated default is to skip: there is no one to edit.
func ModifyPrompt(round int, d Decision) Prompt {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (archived from Round %d)\n", d.ID, round)
	fmt.Fprintf(&b, "Current choice: %q\nCurrent rationale: %q\n\n", oneLine(d.Choice), oneLine(d.Rationale))
	b.WriteString("Answer with the new text: \"Choice: …\" and/or \"Rationale: …\" lines; plain text replaces the choice.\n")
	return Prompt{
		ID:        fmt.Sprintf("rollback-modify-%s", d.ID),
		Title:     "MODIFY DECISION",
		Body:      b.String(),
		AllowText: true,
		Options: []Option{
			{Key: "1", Label: "Apply with my edits", Effect: EffectApply},
			{Key: "2", Label: "Skip this decision", Effect: EffectSkipDecision},
		},
		Default: "2",
	}
}

// Modified applies the user's edit text to a decision: "Choice: …" and
// "Rationale: …" lines replace those fields; text without either label
// replaces the choice. The entry is re-rendered from the fields (Text is
// cleared) and carries the re-applied note with "(modified)".
func Modified(d Decision, round int, text string) Decision {
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
