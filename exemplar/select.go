package exemplar

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// The example tiers (GAP-FLOW-008 §1); TierNone when nothing is attached.
const (
	TierNone      = 0
	TierCanonical = 1
	TierSession   = 2
	TierTemplate  = 3
)

// Sources of an example as the retry details of status.md name them, in
// the wording of GAP-FLOW-001's example 2 ("Example attached: Tier 1
// Canonical (workflow spec Section 7)"). A Tier 2 source reads "Tier 2
// Session History (Round N)". The Example Attachment Log uses GAP-FLOW-008
// §8's shorter wording instead (see NewLogEntry).
const (
	SourceNone      = "None"
	SourceCanonical = "Tier 1 Canonical (workflow spec Section 7)"
	SourceTemplate  = "Tier 3 Generated Template"
)

// sessionSource names a Tier 2 example.
func sessionSource(round int) string {
	return "Tier 2 Session History (Round " + strconv.Itoa(round) + ")"
}

// The source descriptions of select_example_for_failure (GAP-FLOW-008 §5),
// shown to the model after "Source:" in the retry prompt, verbatim.
const (
	descFileMissing     = "No example attached - file creation issue"
	descEmptyCanonical  = "Canonical example from workflow spec"
	descEmptySession    = "Successful output from previous round"
	descTemplate        = "Structural template"
	descFormatCanonical = "Canonical example - note required headers"
	descFormatTemplate  = "Structural template - follow this format exactly"
	descGapsSession     = "Example showing gap references in context"
	descGapsCanonical   = "Canonical example + gap list for reference"
	descRefsSession     = "Valid gap list + successful example"
	descRefsTemplate    = "Valid gap list + template"
	descDefault         = "Default template"
	descTruncated       = "Canonical example - complete and concise"
	descRefusal         = "Canonical example - the answer expected"
	descClarification   = "Canonical example - answer, do not ask"
	descUnknownRole     = "No example attached - unknown role"
)

// The titles of the gap lists: augment_with_gap_list (NO_GAPS_ADDRESSED)
// and format_gap_list (INCONSISTENT_REFS), whose wording the spec leaves
// open.
const (
	gapsForReferenceTitle = "Gap list for reference (address gaps by these IDs):"
	validGapsTitle        = "Valid gap IDs for this session (reference only these):"
)

// Request is what Select needs to choose an example.
type Request struct {
	Role         gap.Role             // gap.Engineer or gap.Reviewer (any case)
	FailureType  validate.FailureType // the validation failure, e.g. validate.WrongFormat; ignored by SelectInitial
	CurrentRound int                  // the round being retried; Tier 2 looks at rounds before it
	Gaps         []gap.ID             // the valid gap list, in the order to show it
	Canonical    Canonical
	// CanonicalErr is what ExtractCanonical reported, if anything; Select
	// quotes it when Tier 1 misses.
	CanonicalErr error
	History      []HistoryItem // validated outputs of this session
	Budget       int           // tokens; RetryBudget or InitialBudget; <= 0 attaches nothing
	Tokenizer    Tokenizer     // nil means CharTokenizer
}

// Selection is the example chosen for a prompt, already fitted to the
// budget.
type Selection struct {
	Text string // the example to attach; "" when none
	Tier int    // TierNone … TierTemplate
	// Source names the tier for logs: SourceCanonical, "Tier 2 Session
	// History (Round N)", SourceTemplate or SourceNone.
	Source string
	// Description is the spec's source description for the model ("Canonical
	// example - note required headers"); RetryPrompt shows it after "Source:".
	Description  string
	HistoryRound int // the round a Tier 2 example comes from; 0 otherwise
	Chars        int // characters (runes) of Text
	Tokens       int // tokens of Text
	// TruncatedFromTokens and TruncatedFromChars give the size before
	// truncation; both 0 when the example was not truncated.
	TruncatedFromTokens int
	TruncatedFromChars  int
	Truncation          TruncationKind
	// Notes say why earlier tiers were passed over, which candidate won and
	// how the example was truncated.
	Notes []string
}

// choice is an example before truncation: body framed by text that must
// survive it.
type choice struct {
	framed
	tier         int
	source, desc string
	historyRound int
}

// Select chooses the example for a retry after req.FailureType and fits it
// into req.Budget (select_example_for_failure, GAP-FLOW-008 §5, then
// truncate_example, §6):
//
//	FILE_MISSING       no example (a Task execution issue)
//	EMPTY_OUTPUT       Tier 1 > Tier 2 > Tier 3, the full example
//	WRONG_FORMAT       Tier 1 > Tier 3
//	AMBIGUOUS_STRUCTURE, TRUNCATED, REFUSAL, CLARIFICATION
//	                   Tier 1 > Tier 3, as WRONG_FORMAT: the answer's form
//	NO_GAPS_ADDRESSED  Tier 2 > Tier 1 with the gap list > Tier 3
//	INCONSISTENT_REFS  gap list + (Tier 2 > Tier 3)
//	anything else      Tier 3 ("Default template")
//
// The discovery call (role gap.Discovery, or a MALFORMED_GAP,
// DUPLICATE_GAP or UNLOCATED_GAP) takes DiscoveryTemplate (Tier 3) after
// any failure but FILE_MISSING: Tiers 1 and 2 do not exist before round 1.
//
// A Tier 2 example carries the spec's provenance header. The gap list and
// the provenance header are kept whole by truncation; only the example
// itself is shortened. Every tier passed over is explained in Notes.
func Select(req Request) Selection {
	role := normalizeRole(req.Role)
	if isDiscovery(role, normalizeFailure(req.FailureType)) {
		return selectDiscovery(req)
	}
	var c choice
	var notes []string
	miss := func(tier int, why string) {
		notes = append(notes, "Tier "+strconv.Itoa(tier)+" miss: "+why)
	}
	canonical := func(desc string) bool {
		text := trimBlankLines(req.Canonical.For(role))
		if text == "" {
			miss(TierCanonical, canonicalMiss(role, req.CanonicalErr))
			return false
		}
		c = choice{framed: framed{body: text}, tier: TierCanonical, source: SourceCanonical, desc: desc}
		return true
	}
	session := func(desc string) bool {
		best, n, why := bestInHistory(role, req.FailureType, req.CurrentRound, req.History)
		if why != "" {
			miss(TierSession, why)
			return false
		}
		notes = append(notes, "Tier 2: round "+strconv.Itoa(best.item.Round)+" chosen (score "+strconv.Itoa(best.score)+
			", "+strconv.Itoa(n)+" candidate(s); ties go to the most recent round)")
		c = choice{
			framed:       framed{head: provenance(best.item), body: sessionBody(best.item)},
			tier:         TierSession,
			source:       sessionSource(best.item.Round),
			desc:         desc,
			historyRound: best.item.Round,
		}
		return true
	}
	template := func(desc string) bool {
		text, ok := Template(role)
		if !ok {
			miss(TierTemplate, "no template for role "+strconv.Quote(string(req.Role)))
			c = choice{source: SourceNone, desc: descUnknownRole}
			return false
		}
		c = choice{framed: framed{body: text}, tier: TierTemplate, source: SourceTemplate, desc: desc}
		return true
	}

	switch normalizeFailure(req.FailureType) {
	case validate.MissingFile:
		c = choice{source: SourceNone, desc: descFileMissing}
		notes = append(notes, "FILE_MISSING: no example helps with a file creation issue")
	case validate.EmptyOutput:
		_ = canonical(descEmptyCanonical) || session(descEmptySession) || template(descTemplate)
	case validate.WrongFormat, validate.AmbiguousStructure, validate.Truncated, validate.Refusal, validate.Clarification:
		if !canonical(formatDesc(normalizeFailure(req.FailureType))) {
			notes = append(notes, "Tier 2 not consulted: "+string(normalizeFailure(req.FailureType))+" takes Tier 1 > Tier 3 (structure, not session context)")
			template(descFormatTemplate)
		}
	case validate.NoGapsAddressed:
		if !session(descGapsSession) && canonical(descGapsCanonical) {
			c.tail = gapList(gapsForReferenceTitle, req.Gaps)
			if c.tail == "" {
				notes = append(notes, noGapListNote)
			}
		}
		if c.tier == TierNone {
			template(descTemplate)
		}
	case validate.InconsistentRefs:
		if !session(descRefsSession) {
			notes = append(notes, "Tier 1 not consulted: INCONSISTENT_REFS takes the gap list with a session example, else a template")
			template(descRefsTemplate)
		}
		list := gapList(validGapsTitle, req.Gaps)
		if list == "" {
			notes = append(notes, noGapListNote)
		}
		if c.tier != TierNone {
			c.head = joinBlocks(list, c.head)
		}
	default:
		notes = append(notes, strconv.Quote(string(req.FailureType))+" has no example mapping: default template")
		template(descDefault)
	}
	return finish(c, req, notes)
}

// SelectInitial chooses the format example attached to a role's first
// prompt of a round, next to the assigned gaps: Tier 1, else Tier 3, fitted
// into req.Budget (normally InitialBudget). FailureType, CurrentRound, Gaps and
// History are not used.
func SelectInitial(req Request) Selection {
	role := normalizeRole(req.Role)
	if role == gap.Discovery {
		return selectDiscovery(Request{Role: role, Budget: req.Budget, Tokenizer: req.Tokenizer})
	}
	var notes []string
	if text := trimBlankLines(req.Canonical.For(role)); text != "" {
		return finish(choice{framed: framed{body: text}, tier: TierCanonical, source: SourceCanonical, desc: descEmptyCanonical}, req, notes)
	}
	notes = append(notes, "Tier 1 miss: "+canonicalMiss(role, req.CanonicalErr))
	if text, ok := Template(role); ok {
		return finish(choice{framed: framed{body: text}, tier: TierTemplate, source: SourceTemplate, desc: descTemplate}, req, notes)
	}
	notes = append(notes, "Tier 3 miss: no template for role "+strconv.Quote(string(req.Role)))
	return finish(choice{source: SourceNone, desc: descUnknownRole}, req, notes)
}

// finish truncates the choice to the budget and records the sizes.
func finish(c choice, req Request, notes []string) Selection {
	tok := orDefault(req.Tokenizer)
	sel := Selection{Tier: c.tier, Source: c.source, Description: c.desc, HistoryRound: c.historyRound}
	if c.tier != TierNone {
		t := fit(c.framed, req.Budget, tok)
		sel.Text, sel.Tokens, sel.Truncation = t.Text, t.Tokens, t.Kind
		if t.Kind != Untruncated {
			sel.TruncatedFromTokens = t.OriginalTokens
			sel.TruncatedFromChars = utf8.RuneCountInString(c.with(c.body, ""))
			notes = append(notes, truncationNote(t, req.Budget))
		}
	}
	sel.Chars = utf8.RuneCountInString(sel.Text)
	sel.Notes = notes
	return sel
}

func truncationNote(t Truncation, budget int) string {
	if budget <= 0 {
		return "budget " + strconv.Itoa(budget) + " tokens: example dropped"
	}
	return "truncated (" + t.Kind.String() + ") from " + thousands(t.OriginalTokens) + " to " +
		thousands(t.Tokens) + " tokens (budget " + thousands(budget) + ")"
}

// noGapListNote records that a gap list was called for but none was given.
const noGapListNote = "no valid gap list supplied: gap list omitted"

// canonicalMiss explains a Tier 1 miss, quoting ExtractCanonical's reason
// for this role when there is one.
func canonicalMiss(role gap.Role, err error) string {
	missing := "no canonical " + string(role) + " example supplied (source not loaded, or its Section 7 has none)"
	var ee *ExtractError
	switch {
	case err == nil:
		return missing
	case !errors.As(err, &ee):
		return missing + ": " + err.Error() // the host's own reason
	}
	if reason := roleError(err, role); reason != nil {
		return reason.Error()
	}
	return missing
}

// roleError finds the *ExtractError about role, or about both roles, in a
// possibly joined error tree.
func roleError(err error, role gap.Role) error {
	switch e := err.(type) {
	case *ExtractError:
		if e.Role == "" || e.Role == role {
			return e
		}
		return nil
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if r := roleError(inner, role); r != nil {
				return r
			}
		}
		return nil
	}
	if inner := errors.Unwrap(err); inner != nil {
		return roleError(inner, role)
	}
	return nil
}

// gapList formats the valid gap list (the spec's format_gap_list) under
// title, one ID per line, duplicates dropped; "" for an empty list.
func gapList(title string, gaps []gap.ID) string {
	seen := make(map[gap.ID]bool, len(gaps))
	var b strings.Builder
	for _, id := range gaps {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		b.WriteString("\n- " + string(id))
	}
	if b.Len() == 0 {
		return ""
	}
	return title + b.String()
}

// formatDesc is the description of the canonical example attached after a
// failure of the answer's form.
func formatDesc(ft validate.FailureType) string {
	switch ft {
	case validate.Truncated:
		return descTruncated
	case validate.Refusal:
		return descRefusal
	case validate.Clarification:
		return descClarification
	}
	return descFormatCanonical
}

// normalizeRole lower-cases and trims a role name.
func normalizeRole(role gap.Role) gap.Role {
	return gap.Role(strings.ToLower(strings.TrimSpace(string(role))))
}

// normalizeFailure upper-cases and trims a failure type.
func normalizeFailure(ft validate.FailureType) validate.FailureType {
	return validate.FailureType(strings.ToUpper(strings.TrimSpace(string(ft))))
}
