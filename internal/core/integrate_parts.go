package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// Integration part by part (DESIGN §16): when the whole spec and its
// resolutions make a prompt above the cap, the source is cut at its
// level-1 and level-2 headings and the pieces are packed, in order, into
// parts that fit. Each accepted resolution goes with the first piece that
// names its gap (else with the last part); the decisions and the open gaps
// go with the last part. Each part that has something to merge is one
// Engineer call, validated like a whole integration against its own
// source and resolutions (retried, escalated the same way); a part with
// nothing to merge is kept as written. The parts are then joined, their
// Resolution Logs made one, and the whole is validated against the whole
// material before its consistency review. There is no integration retry
// after that review: what it finds is asked.

// integrationPart is a stretch of the source integrated on its own.
type integrationPart struct {
	Source string
	Res    []int // indexes into integrationMaterial.accepted/resolutions
	Last   bool
}

// needsCall reports whether the part has anything to merge.
func (p integrationPart) needsCall(m IntegrationMaterial) bool {
	return len(p.Res) > 0 || p.Last && (len(m.decisions) > 0 || len(m.limits) > 0)
}

// PlanParts cuts the source at its level-1/2 headings and packs the pieces
// into parts of at most budget tokens (source and resolutions). It fails
// when one piece with its resolutions is larger than budget.
func PlanParts(m IntegrationMaterial, tok exemplar.Tokenizer, budget int) ([]integrationPart, error) {
	chunks := sourceChunks(m.Source)
	placed := placeResolutions(m, chunks)
	var parts []integrationPart
	cur, cost := integrationPart{}, 0
	for c, text := range chunks {
		n := tok.Count(text)
		for _, i := range placed[c] {
			n += tok.Count(m.Resolutions[i].Text)
		}
		if n > budget {
			return nil, fmt.Errorf("the source section starting %q and its resolutions make %d tokens, above the %d a part may hold", clipLine(text), n, budget)
		}
		if cur.Source != "" && cost+n > budget {
			parts = append(parts, cur)
			cur, cost = integrationPart{}, 0
		}
		cur.Source += text
		cur.Res = append(cur.Res, placed[c]...)
		cost += n
	}
	cur.Last = true
	return append(parts, cur), nil
}

// sourceChunks cuts the source at its level-1/2 headings.
func sourceChunks(source string) []string {
	d := markdown.Parse(source)
	cuts := []int{0}
	for _, h := range d.Headings {
		if h.Level <= 2 && h.Start > 0 {
			cuts = append(cuts, h.Start)
		}
	}
	chunks := make([]string, len(cuts))
	for i, c := range cuts {
		end := len(d.Text)
		if i+1 < len(cuts) {
			end = cuts[i+1]
		}
		chunks[i] = d.Text[c:end]
	}
	return chunks
}

// placeResolutions puts each accepted resolution with the first chunk that
// names its gap, else with the last: the indexes of each chunk's.
func placeResolutions(m IntegrationMaterial, chunks []string) [][]int {
	placed := make([][]int, len(chunks))
	for i, g := range m.Accepted {
		at := len(chunks) - 1
		for c, text := range chunks {
			if strings.Contains(text, string(g.ID)) && slices.Contains(gap.FindIDs(text), g.ID) {
				at = c
				break
			}
		}
		placed[at] = append(placed[at], i)
	}
	return placed
}

func clipLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if utf8.RuneCountInString(line) > 60 {
		line = string([]rune(line)[:59]) + "…"
	}
	return line
}

// partsBudget is how many tokens of source and resolutions a part's prompt
// may carry: the cap less what every part's prompt carries besides (the
// rules, the decisions, the open gaps), less a tenth for the retry notice.
func partsBudget(st *state.State, m IntegrationMaterial, lim integrationLimits) (int, error) {
	d := newIntegrationData(st, m)
	d.Source, d.Resolutions, d.Parts, d.Part, d.Last, d.SourceInUser = "", nil, 2, 2, true, true
	msgs, _, err := integrationMessages(d, 1, 1, nil)
	if err != nil {
		return 0, err
	}
	overhead := countMessages(lim.tok, msgs)
	return (lim.cap - overhead) * 9 / 10, nil
}

// integrationPlan cuts the material into parts, with the budget fixed
// when they were first planned; why says why it cannot be (the parts are
// then nil).
func integrationPlan(st *state.State, m IntegrationMaterial, lim integrationLimits) (parts []integrationPart, why string, err error) {
	in := st.Integration
	if in.PartsBudget == 0 {
		b, err := partsBudget(st, m, lim)
		if err != nil {
			return nil, "", fmt.Errorf("integration: %w", err)
		}
		in.PartsBudget = b
	}
	if in.PartsBudget <= 0 {
		return nil, fmt.Sprintf("the decisions and open gaps alone fill the integration cap of %d tokens (twice PromptBudget); raise PromptBudget to integrate", lim.cap), nil
	}
	parts, err = PlanParts(m, lim.tok, in.PartsBudget)
	if err != nil {
		return nil, "integrating part by part: " + err.Error() + "; raise PromptBudget to integrate", nil
	}
	return parts, "", nil
}

// partPrompt is one part's integration call: its prompt's data, what its
// output is validated against and the gaps it merges.
type partPrompt struct {
	data  *integrationData
	check validate.IntegrationInput
	ids   []gap.ID
}

// newPartPrompt fills the prompt of part i of n; others are the headings
// of the parts integrated before it, which the last part's Resolution Log
// may name.
func newPartPrompt(st *state.State, m IntegrationMaterial, p integrationPart, i, n int, others []string, maxOutputBytes int) partPrompt {
	d := newIntegrationData(st, m)
	d.Part, d.Parts, d.Last, d.SourceInUser = i+1, n, p.Last, true
	d.Source = strings.TrimSpace(p.Source)
	d.SourceFence = fenceFor(d.Source)
	pp := partPrompt{data: d, check: validate.IntegrationInput{Source: p.Source, MaxOutputBytes: maxOutputBytes, SkipSize: true}}
	d.Resolutions = nil
	material := utf8.RuneCountInString(p.Source)
	for _, r := range p.Res {
		g, text := m.Accepted[r], strings.TrimSpace(m.Resolutions[r].Text)
		d.Resolutions = append(d.Resolutions, integrationResolution{ID: g.ID, Title: g.Title, Text: text, Fence: fenceFor(text)})
		pp.check.Resolutions = append(pp.check.Resolutions, m.Resolutions[r])
		pp.ids = append(pp.ids, g.ID)
		material += utf8.RuneCountInString(m.Resolutions[r].Text)
	}
	d.MinChars = int(validate.IntegrationMinSize*float64(material)) + 1
	d.MaxChars = int(validate.IntegrationMaxSize * float64(material))
	if p.Last {
		pp.check.Decisions = st.Integration.Decisions
		pp.check.Limitations = m.input(maxOutputBytes, nil).Limitations
		pp.check.OtherHeadings = others
	} else {
		d.Decisions, d.Limitations = nil, nil
	}
	return pp
}

// integrationParts plays the part-by-part integration: the Engineer's
// attempts for each part in turn, then the join; stopped says why it ends
// early (see IntegrationState.Stopped).
func (s *Engine) integrationParts(m IntegrationMaterial) (stopped string, err error) {
	in := s.st.Integration
	lim := limitsOf(s.cfg, s.tok)
	parts, why, err := integrationPlan(s.st, m, lim)
	if err != nil || why != "" {
		return why, err
	}
	for len(in.Parts) < len(parts) {
		i := len(in.Parts)
		p := parts[i]
		if !p.needsCall(m) {
			in.Parts = append(in.Parts, 0) // kept as written
			continue
		}
		if len(in.Engineer) >= in.EngineerBudget {
			in.Step = state.IntegAsk
			s.stage()
			return "", nil
		}
		var others []string
		if p.Last {
			texts, err := s.partTexts(parts, in.Parts)
			if err != nil {
				return "", err
			}
			others = partHeadings(texts)
		}
		pp := newPartPrompt(s.st, m, p, i, len(parts), others, lim.maxOutputBytes)
		k, prev := nextAttempt(in.Engineer, in.EngineerFrom)
		msgs, stable, err := integrationMessages(pp.data, k-in.EngineerFrom, in.EngineerBudget-in.EngineerFrom, prev)
		if err != nil {
			return "", fmt.Errorf("integration: %w", err)
		}
		at, err := s.integrationCall(llm.Engineer, k, msgs, stable, pp.ids, integrationCheck(pp.check))
		if errors.Is(err, llm.ErrNoResponse) {
			return fmt.Sprintf("the Engineer has no response for the integration call of part %d of %d (Engineer call %d: %s)", i+1, len(parts), s.st.Usage.NextCall[string(llm.Engineer)]+1, roleError(err)), nil
		}
		if err != nil {
			return "", err
		}
		partSettled(in, at.rec, i, len(parts), lim.maxRetries)
		s.stage(at.ops...)
	}
	// The join: the parts made one spec with one Resolution Log,
	// validated against the whole material, then sent to review.
	texts, err := s.partTexts(parts, in.Parts)
	if err != nil {
		return "", err
	}
	spec, why := joinParts(in, texts, m, lim)
	if why == "" {
		s.stage(store.Put(state.FinalOutputKey(llm.Engineer), []byte(spec)))
	}
	return why, nil
}

// partSettled records the Engineer's attempt at part i of n; a valid one
// is the part's, and the next part gets a fresh run of attempts.
func partSettled(in *state.IntegrationState, rec state.AttemptRec, i, n, maxRetries int) {
	if !rec.Success {
		rec.Message = fmt.Sprintf("part %d of %d: %s", i+1, n, rec.Message)
	}
	in.Engineer = append(in.Engineer, rec)
	if rec.Success {
		in.Parts = append(in.Parts, rec.N)
		in.EngineerFrom, in.EngineerBudget = len(in.Engineer), len(in.Engineer)+1+maxRetries
	}
}

// partTexts are the parts as integrated, for each part accepted so far:
// its accepted attempt, or its source when it had nothing to merge.
func (s *Engine) partTexts(parts []integrationPart, accepted []int) ([]string, error) {
	texts := make([]string, len(accepted))
	for i, k := range accepted {
		if k == 0 {
			texts[i] = parts[i].Source
			continue
		}
		_, key := state.FinalAttemptKeys(llm.Engineer, k)
		b, err := s.get(key)
		if err != nil {
			return nil, fmt.Errorf("integration: read %s: %w", key, err)
		}
		texts[i], _ = validate.Normalize(string(b)) // as read: a wrapper fence unwrapped
	}
	return texts, nil
}

// partHeadings are the headings of the integrated parts' texts.
func partHeadings(texts []string) []string {
	var out []string
	for _, text := range texts {
		for _, h := range markdown.Parse(text).Headings {
			out = append(out, h.Title)
		}
	}
	return out
}

// join joins the integrated parts' texts into one spec and validates it
// against the whole material m: a valid one is accepted and goes to its
// consistency review; else why says why the parts do not make a spec.
func joinParts(in *state.IntegrationState, texts []string, m IntegrationMaterial, lim integrationLimits) (spec, why string) {
	spec = joinPartTexts(texts)
	vr := validate.Integration(spec, m.input(lim.maxOutputBytes, in.Decisions))
	if !vr.Success {
		return "", fmt.Sprintf("the %d parts integrated one by one do not make a valid spec together (%s: %s)", len(texts), vr.FailureType, render.OneLine(vr.Message))
	}
	in.Merged, in.Accepted, in.Step = true, len(in.Engineer), state.IntegReview
	in.Retried = true // no integration retry after the review of a joined spec: its issues are asked
	in.ReviewerFrom, in.ReviewerBudget = len(in.Reviewer), len(in.Reviewer)+1+lim.maxRetries
	in.Notes = append(in.Notes, fmt.Sprintf("integrated part by part: %d parts, the whole prompt being above the cap of %d tokens", len(texts), lim.cap))
	in.Notes = append(in.Notes, vr.Warnings...)
	return spec, ""
}

// joinPartTexts joins the integrated parts' texts into one spec: each
// part's body, then one Resolution Log of all their rows.
func joinPartTexts(texts []string) string {
	var body, log strings.Builder
	for _, text := range texts {
		d := markdown.Parse(text)
		cut := len(d.Text)
		for _, sec := range d.SectionsAt(2) {
			if !strings.EqualFold(strings.TrimSpace(sec.Title), "Resolution Log") {
				continue
			}
			cut = sec.Start
			for _, line := range strings.Split(d.Text[sec.BodyStart:sec.End], "\n") {
				if t := strings.TrimSpace(line); strings.HasPrefix(t, "|") {
					log.WriteString(t + "\n")
				}
			}
			break
		}
		body.WriteString(strings.TrimSpace(d.Text[:cut]) + "\n\n")
	}
	return body.String() + "## Resolution Log\n\n" + strings.Join(logRows(log.String()), "\n") + "\n"
}

// logRows are the joined Resolution Log's rows: each part's table brought
// its header and delimiter rows; the first pair only is kept.
func logRows(log string) []string {
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if line == "" {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(rows) >= 2 && (strings.EqualFold(strings.TrimSpace(cells[0]), "Item") || strings.Trim(strings.TrimSpace(line), "|-: ") == "") {
			continue
		}
		rows = append(rows, line)
	}
	return rows
}
