package rollback

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// Attachment is material the engine attaches to the retry prompt; this
// package names it, the engine supplies the content.
type Attachment string

// Attachments the adjustments ask for.
const (
	// AttachGapList: the session's gap list (INCONSISTENT_REFS).
	AttachGapList Attachment = "gap_list"
	// AttachResolvedGaps: a summary of related resolved gaps (the spec's
	// "Inconsistent with prior gaps" auto-adjustment).
	AttachResolvedGaps Attachment = "resolved_gaps"
	// AttachGlossary: a glossary of the spec's terms (DOMAIN_CONFUSION).
	AttachGlossary Attachment = "glossary"
)

// Adjustment is a change to the retry prompt answering a detected pattern.
type Adjustment struct {
	Pattern Pattern
	// Prompt is the text added to the next prompt ("" for attachment-only).
	Prompt string
	// Attach lists material to attach to the prompt.
	Attach []Attachment
	// Summary is the one-line, past-tense record for status.md and history
	// ("Added structural requirement for ### Trade-offs section").
	Summary string
	// Confidence and Why are the report's "Adjustment Confidence" entry.
	Confidence gap.Confidence
	Why        string
}

// The spec's gap-assignment text ("Gap not addressed" auto-adjustment and
// SCOPE_DRIFT's "explicit gap assignment").
func gapAssignment(id gap.ID) string {
	return fmt.Sprintf("Your primary task is to address %s. Begin your response with '## Gap Resolution: %s'", id, id)
}

// unaddressedAssigned returns the assigned gaps with no section, or all
// assigned gaps when none was addressed.
func unaddressedAssigned(d Detection) []gap.ID {
	var out []gap.ID
	for _, id := range d.assigned {
		found := false
		for _, a := range d.addressed {
			found = found || a == id
		}
		if !found {
			out = append(out, id)
		}
	}
	return out
}

// gapAdjustments are the explicit-assignment adjustments for the assigned
// gaps the output failed to address (or a generic instruction without an
// assignment).
func gapAdjustments(p Pattern, d Detection, c gap.Confidence, why string) []Adjustment {
	ids := unaddressedAssigned(d)
	if len(ids) == 0 {
		return []Adjustment{{
			Pattern: p, Confidence: c, Why: why,
			Prompt:  "Begin each gap you address with a '## Gap Resolution: ' header followed by its gap ID.",
			Summary: "Added requirement for ## Gap Resolution headers",
		}}
	}
	var out []Adjustment
	for _, id := range ids {
		out = append(out, Adjustment{
			Pattern: p, Prompt: gapAssignment(id), Confidence: c, Why: why,
			Summary: fmt.Sprintf("Added explicit gap assignment for %s", id),
		})
	}
	return out
}

func sectionNames(f Finding) (sections []string, headers bool) {
	for _, t := range f.terms {
		if t == "## Gap Resolution" {
			headers = true
		} else {
			sections = append(sections, t)
		}
	}
	return sections, headers
}

// AutoAdjustments are the Mediator-selected adjustments of an automatic
// retry (the spec's "Auto-Retry Adjustments"): too abstract → at least 3
// concrete examples with specific values; missing trade-offs → a mandatory
// Trade-offs section with 2 pros and 2 cons (other missing sections are
// required likewise); gap not addressed (no headers, or scope drift) → the
// explicit gap assignment; inconsistent references → attach the gap list and
// a summary of related resolved gaps; narrow examples → a success and an
// edge case; domain confusion → attach a glossary.
func AutoAdjustments(d Detection) []Adjustment {
	var out []Adjustment
	for _, f := range d.Findings {
		switch f.Pattern {
		case AbstractOutput:
			out = append(out, Adjustment{
				Pattern:    f.Pattern,
				Prompt:     "Include at least 3 concrete examples with specific values. Abstract descriptions are insufficient.",
				Summary:    "Added explicit value requirements to prompt (at least 3 concrete examples)",
				Confidence: gap.ConfidenceHigh, Why: "pattern clearly detected",
			})
		case MissingSections:
			sections, headers := sectionNames(f)
			if headers {
				out = append(out, gapAdjustments(f.Pattern, d, gap.ConfidenceHigh, "structural, easily enforced")...)
			}
			for _, s := range sections {
				prompt := fmt.Sprintf("You MUST include a ### %s section.", s)
				if normTitle(s) == normTitle("Trade-offs") {
					prompt = "You MUST include a ### Trade-offs section with at least 2 pros and 2 cons."
				}
				out = append(out, Adjustment{
					Pattern: f.Pattern, Prompt: prompt,
					Summary:    fmt.Sprintf("Added structural requirement for ### %s section", s),
					Confidence: gap.ConfidenceHigh, Why: "structural, easily enforced",
				})
			}
		case NarrowExamples:
			out = append(out, Adjustment{
				Pattern:    f.Pattern,
				Prompt:     "Include at least 2 examples: one success case, one edge case.",
				Summary:    "Required minimum 2 examples (one success case, one edge case)",
				Confidence: gap.ConfidenceMedium, Why: "may require domain knowledge",
			})
		case inconsistentRefs:
			out = append(out, Adjustment{
				Pattern:    f.Pattern,
				Prompt:     "Reference only gap IDs from the attached gap list.",
				Attach:     []Attachment{AttachGapList, AttachResolvedGaps},
				Summary:    "Attached gap list and summary of related resolved gaps",
				Confidence: gap.ConfidenceHigh, Why: "the gap list is authoritative",
			})
		case domainConfusion:
			out = append(out, glossaryAdjustment(f))
		case scopeDrift:
			out = append(out, gapAdjustments(f.Pattern, d, gap.ConfidenceHigh, "structural, easily enforced")...)
		}
	}
	return out
}

func glossaryAdjustment(f Finding) Adjustment {
	prompt := "Use terms as defined in the attached glossary, and define any new term before using it."
	return Adjustment{
		Pattern: f.Pattern, Prompt: prompt, Attach: []Attachment{AttachGlossary},
		Summary:    "Attached glossary to prompt",
		Confidence: gap.ConfidenceMedium, Why: "the glossary may not cover every term",
	}
}

// Recommend returns the adjustments the "Rollback Analysis" report
// recommends, one or more per finding, with the spec's wording and
// confidence: ABSTRACT_OUTPUT → explicit values (HIGH, pattern clearly
// detected); MISSING_SECTIONS → the structural requirement (HIGH,
// structural, easily enforced); NARROW_EXAMPLES → a success and an edge
// case (MEDIUM, may require domain knowledge); INCONSISTENT_REFS → the gap
// list; DOMAIN_CONFUSION → a glossary; SCOPE_DRIFT → explicit assignment.
func Recommend(d Detection) []Adjustment {
	var out []Adjustment
	for _, f := range d.Findings {
		switch f.Pattern {
		case AbstractOutput:
			out = append(out, Adjustment{
				Pattern:    f.Pattern,
				Prompt:     "Replace vague terms with specific values. Instead of 'appropriate threshold', say 'threshold of 5 attempts'.",
				Summary:    "Added explicit value requirements to prompt",
				Confidence: gap.ConfidenceHigh, Why: "pattern clearly detected",
			})
		case MissingSections:
			sections, headers := sectionNames(f)
			if headers {
				out = append(out, gapAdjustments(f.Pattern, d, gap.ConfidenceHigh, "structural, easily enforced")...)
			}
			if len(sections) > 0 {
				parts := make([]string, len(sections))
				for i, s := range sections {
					parts[i] = fmt.Sprintf("a ### %s section", s)
				}
				out = append(out, Adjustment{
					Pattern:    f.Pattern,
					Prompt:     fmt.Sprintf("Your response MUST include %s.", strings.Join(parts, " and ")),
					Summary:    fmt.Sprintf("Added structural requirement for %s", strings.Join(parts, " and ")[2:]),
					Confidence: gap.ConfidenceHigh, Why: "structural, easily enforced",
				})
			}
		case NarrowExamples:
			out = append(out, Adjustment{
				Pattern:    f.Pattern,
				Prompt:     "Include at least 2 examples: one success case, one edge case.",
				Summary:    "Required minimum 2 examples (one success case, one edge case)",
				Confidence: gap.ConfidenceMedium, Why: "may require domain knowledge",
			})
		case inconsistentRefs:
			out = append(out, Adjustment{
				Pattern:    f.Pattern,
				Prompt:     fmt.Sprintf("Reference only gap IDs from the attached gap list; %s do not exist.", strings.Join(f.terms, ", ")),
				Attach:     []Attachment{AttachGapList},
				Summary:    "Attached gap list to prompt",
				Confidence: gap.ConfidenceHigh, Why: "the gap list is authoritative",
			})
		case domainConfusion:
			out = append(out, glossaryAdjustment(f))
		case scopeDrift:
			out = append(out, gapAdjustments(f.Pattern, d, gap.ConfidenceHigh, "structural, easily enforced")...)
		}
	}
	return out
}

// Summaries returns the adjustments' one-line summaries, the form
// Record.Adjustments holds.
func Summaries(adjs []Adjustment) []string {
	out := make([]string, len(adjs))
	for i, a := range adjs {
		out[i] = a.Summary
	}
	return out
}

// PromptText joins the adjustments' prompt texts into the block the engine
// adds to the retry prompt, one per line, without duplicates.
func PromptText(adjs []Adjustment) string {
	var lines []string
	for _, a := range adjs {
		if a.Prompt == "" {
			continue
		}
		dup := false
		for _, l := range lines {
			dup = dup || l == a.Prompt
		}
		if !dup {
			lines = append(lines, a.Prompt)
		}
	}
	return strings.Join(lines, "\n")
}
