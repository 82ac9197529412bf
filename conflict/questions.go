package conflict

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/question"
)

// errInvalidAnswer is returned (wrapped) for an answer that picks an option
// not offered, omits a required choice or text, or carries text where none
// is allowed. It is question.ErrInvalidAnswer; match it with errors.Is.
var errInvalidAnswer = question.ErrInvalidAnswer

// Option effects: the Effect of each option of this package's questions,
// so the engine acts on an answer without parsing labels.
const (
	// Conflict options.
	effectReviewer      = "reviewer"
	effectEngineer      = "engineer"
	effectSynthesis     = "synthesis"
	effectUserSpecified = "user_specified" // requires text: the alternative

	// Implicit disagreement (GAP-FLOW-013 actions 1-4).
	effectRequestAddress = "request_address"
	effectConvert        = "convert_to_disagree"
	effectWaive          = "waive"
	effectIgnore         = "ignore_false_positive"

	// Rate limits.
	effectAcceptDisagreements     = "accept_disagreements"
	EffectRequestRevision         = "request_revision"
	EffectReviewReviewer          = "review_reviewer_feedback"
	EffectMediateScope            = "mediate_scope"
	EffectContinue                = "continue"
	EffectAdjustReviewer          = "adjust_reviewer_guidance"
	EffectAdjustEngineer          = "adjust_engineer_guidance"
	EffectAcceptWithJustification = "accept_with_justification" // requires text: the justification
)

// requiresText reports whether choosing an option with this effect needs
// the user's text.
func requiresText(effect string) bool {
	return effect == effectUserSpecified || effect == EffectAcceptWithJustification
}

// validateAnswer checks an answer to p, one of this package's questions,
// more strictly than question.Question.Check, because Decide and
// ResolveImplicit act on the key as given: key must be one of the offered
// keys (exactly, case included), text (ignoring surrounding blanks) must be
// empty unless p.AllowText, and the options that need text (D's alternative, a
// justification) must have it. Errors wrap errInvalidAnswer and name the
// offered keys.
func validateAnswer(p question.Question, key, text string) error {
	o, ok := optionByKey(p, key)
	if !ok {
		if key == "" {
			return fmt.Errorf("%w: question %s needs a choice: want one of %s", errInvalidAnswer, p.ID, offered(p))
		}
		return fmt.Errorf("%w: option %q was not offered for question %s: want one of %s", errInvalidAnswer, key, p.ID, offered(p))
	}
	text = strings.TrimSpace(text)
	if text != "" && !p.AllowText {
		return fmt.Errorf("%w: question %s takes no free text: answer with one of %s alone", errInvalidAnswer, p.ID, offered(p))
	}
	if text == "" && requiresText(o.Effect) {
		return fmt.Errorf("%w: option %s (%s) of question %s needs text: %s", errInvalidAnswer, o.Key, o.Label, p.ID, textNeeded(o.Effect))
	}
	return nil
}

func textNeeded(effect string) string {
	if effect == effectUserSpecified {
		return "describe your alternative"
	}
	return "give the justification"
}

func optionByKey(p question.Question, key string) (question.Option, bool) {
	for _, o := range p.Options {
		if o.Key == key {
			return o, true
		}
	}
	return question.Option{}, false
}

// offered lists the option keys: "A, B, C".
func offered(p question.Question) string {
	if len(p.Options) == 0 {
		return "(no options)"
	}
	return strings.Join(p.Keys(), ", ")
}

// ConflictQuestion asks the user to resolve a conflict. The body is present(c);
// the options are the conflict's A-D; free text is the user's rationale, or
// for D the alternative itself.
//
// Automated default: the recommended option, else A (the Reviewer's
// position). An unattended run must not drop a HIGH/CRITICAL concern on the
// Engineer's word, and A is what §4 recommends for CRITICAL.
func ConflictQuestion(c Conflict) question.Question {
	c = c.withOptions()
	p := question.Question{
		ID:        fmt.Sprintf("conflict-r%d-%s", c.Round, c.IssueID),
		Kind:      question.KindConflict,
		Round:     c.Round,
		Title:     fmt.Sprintf("Conflict: %s (%s)", c.IssueID, rank(c.Issue.Severity)),
		Body:      present(c),
		AllowText: true,
		Default:   c.recommended(),
	}
	if p.Default == "" {
		p.Default = optionReviewer
	}
	for _, o := range c.Options {
		p.Options = append(p.Options, question.Option{
			Key:         o.Key,
			Label:       o.Name + " - " + firstSentence(o.Description),
			Effect:      conflictEffect(o.Key),
			Recommended: o.Recommended,
		})
	}
	p.TextRequired = textRequired(p.Options)
	return p
}

func conflictEffect(key string) string {
	switch key {
	case optionReviewer:
		return effectReviewer
	case optionEngineer:
		return effectEngineer
	case optionSynthesis:
		return effectSynthesis
	}
	return effectUserSpecified
}

// ImplicitQuestion asks what to do about an implicit-disagreement finding,
// worded as GAP-FLOW-013's presentation in Example 2, with the four actions:
// 1 request an explicit address, 2 convert to DISAGREE, 3 waive, 4 ignore as
// a false positive. Free text is a note for the Engineer (1) or the
// waiver's rationale (3).
//
// Automated default: 1, request that the Engineer address the issue. It is
// the only action that neither decides the issue nor hides the flag: the
// Engineer gets one more explicit chance and a later round can still
// escalate.
func ImplicitQuestion(f Finding) question.Question {
	is := f.Issue
	var b strings.Builder
	b.WriteString("POTENTIAL IMPLICIT DISAGREEMENT DETECTED\n\n")
	fmt.Fprintf(&b, "Issue: %s (%s)\n", is.ID, rank(is.Severity))
	fmt.Fprintf(&b, "'%s'\n\n", oneLine(is.Summary))
	b.WriteString("Evidence:\n")
	for _, e := range f.Evidence {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	return question.Question{
		ID:    fmt.Sprintf("implicit-r%d-%s", f.Round, f.IssueID),
		Kind:  question.KindImplicit,
		Round: f.Round,
		Title: fmt.Sprintf("Potential implicit disagreement: %s (%s, %s confidence)", is.ID, rank(is.Severity), f.Confidence),
		Body:  b.String(),
		Options: []question.Option{
			{Key: "1", Label: "Request Engineer explicitly address this issue", Effect: effectRequestAddress},
			{Key: "2", Label: "Convert to explicit DISAGREE for conflict resolution", Effect: effectConvert},
			{Key: "3", Label: "Let user decide if issue should be waived", Effect: effectWaive},
			{Key: "4", Label: "Ignore this flag (false positive)", Effect: effectIgnore},
		},
		AllowText: true,
		Default:   "1",
	}
}

// RateQuestion asks the user about a rate alert.
//
// WARN_USER is §3's "DISAGREE RATE WARNING" with its four options and, as in
// Example 3, the issues disagreed with. Automated default: 1, accept the
// disagreements, because each still goes to conflict resolution, where the
// automated default favours the Reviewer; nothing is lost by proceeding.
//
// SYSTEMATIC_ALERT shows §3's message and recommendation with the window's
// rounds; options: continue, adjust Reviewer guidance, adjust Engineer
// guidance (free text becomes a prompt adjustment), mediate scope.
// Automated default: 1, continue, for the same reason.
//
// BLOCK_ROUND shows §3's message and recommendation; options: request an
// Engineer revision, accept with a session-level justification (text
// required), review the Reviewer's feedback. Automated default: 1, request
// revision: the limit exists to stop the round, and only a user can supply
// the justification.
func RateQuestion(a RateAlert) question.Question {
	var b strings.Builder
	p := question.Question{Kind: question.KindDisagreeRate, Round: a.Round, AllowText: true, Default: "1"}
	switch a.Kind {
	case rateWarn:
		p.ID, p.Title = fmt.Sprintf("rate-warning-r%d", a.Round), "DISAGREE rate warning"
		b.WriteString("DISAGREE RATE WARNING\n\n")
		fmt.Fprintf(&b, "Engineer disagreed with %d of %d HIGH/CRITICAL issues this round (%s).\n\n", a.Disagreed, a.Total, percent(a.Rate))
		if len(a.Issues) > 0 {
			b.WriteString("Issues disagreed with:\n")
			for i, is := range a.Issues {
				fmt.Fprintf(&b, "%d. %s (%s): %s\n", i+1, is.ID, rank(is.Severity), oneLine(is.Summary))
			}
			b.WriteString("\n")
		}
		b.WriteString("This could indicate:\n")
		b.WriteString("1. Reviewer feedback is overly prescriptive\n")
		b.WriteString("2. Engineer is avoiding work\n")
		b.WriteString("3. Fundamental misalignment on approach\n")
		p.Options = []question.Option{
			{Key: "1", Label: "Accept disagreements - Proceed to conflict resolution for each", Effect: effectAcceptDisagreements},
			{Key: "2", Label: "Request Engineer revision - Ask Engineer to reduce disagreements", Effect: EffectRequestRevision},
			{Key: "3", Label: "Review Reviewer feedback - Check if issues were reasonable", Effect: EffectReviewReviewer},
			{Key: "4", Label: "Mediate scope - Clarify session goals before continuing", Effect: EffectMediateScope},
		}
	case rateSystematic:
		p.ID, p.Title = fmt.Sprintf("rate-systematic-r%d", a.Round), "Systematic DISAGREE pattern"
		b.WriteString("SYSTEMATIC DISAGREE ALERT\n\n")
		b.WriteString(a.Message + "\n\n")
		for _, r := range a.Window {
			fmt.Fprintf(&b, "- Round %d: %d of %d HIGH/CRITICAL issues disagreed with\n", r.Round, r.Disagreed, r.Total)
		}
		if len(a.Window) > 0 {
			b.WriteString("\n")
		}
		b.WriteString(a.Recommendation + "\n")
		p.Options = []question.Option{
			{Key: "1", Label: "Continue - Acknowledge the pattern and proceed to conflict resolution", Effect: EffectContinue},
			{Key: "2", Label: "Adjust Reviewer guidance - Your text is added to the next Reviewer prompts", Effect: EffectAdjustReviewer},
			{Key: "3", Label: "Adjust Engineer guidance - Your text is added to the next Engineer prompts", Effect: EffectAdjustEngineer},
			{Key: "4", Label: "Mediate scope - Clarify session goals before continuing", Effect: EffectMediateScope},
		}
	default: // RateBlock
		p.ID, p.Title = fmt.Sprintf("rate-block-r%d", a.Round), "DISAGREE limit exceeded"
		b.WriteString("DISAGREE LIMIT EXCEEDED\n\n")
		b.WriteString(a.Message + "\n\n")
		b.WriteString(a.Recommendation + "\n")
		p.Options = []question.Option{
			{Key: "1", Label: "Request Engineer revision - Ask Engineer to reduce disagreements or provide session-level justification", Effect: EffectRequestRevision},
			{Key: "2", Label: "Accept with justification - Your text is recorded as the session-level justification; proceed to conflict resolution", Effect: EffectAcceptWithJustification},
			{Key: "3", Label: "Review Reviewer feedback - Check if issues were reasonable", Effect: EffectReviewReviewer},
		}
	}
	p.Body = b.String()
	p.TextRequired = textRequired(p.Options)
	return p
}

// textRequired lists the keys of the options that need the user's text.
func textRequired(opts []question.Option) []string {
	var keys []string
	for _, o := range opts {
		if requiresText(o.Effect) {
			keys = append(keys, o.Key)
		}
	}
	return keys
}

// BlockInstruction is the instruction for the Engineer after a BLOCK_ROUND
// alert or a rate warning answered with "request revision".
func BlockInstruction(a RateAlert) string {
	if a.Kind == rateWarn {
		// A warning carries the rate, not a block count or limit.
		return fmt.Sprintf("Your previous output disagreed with %d of %d HIGH/CRITICAL Reviewer issues (%s). "+
			"Keep DISAGREE for the issues where you have the strongest evidence and address the others as the Reviewer asked.",
			a.Disagreed, a.Total, percent(a.Rate))
	}
	return fmt.Sprintf("Your previous output contained %d DISAGREE blocks (limit: %d per round). "+
		"Keep DISAGREE for the issues where you have the strongest evidence and address the others, "+
		"or add a session-level justification explaining why so many Reviewer issues should not be addressed as requested.",
		a.Submitted, a.Limit)
}
