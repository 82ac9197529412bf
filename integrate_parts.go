package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
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
	source string
	res    []int // indexes into integrationMaterial.accepted/resolutions
	last   bool
}

// needsCall reports whether the part has anything to merge.
func (p integrationPart) needsCall(m integrationMaterial) bool {
	return len(p.res) > 0 || p.last && (len(m.decisions) > 0 || len(m.limits) > 0)
}

// planParts cuts the source at its level-1/2 headings and packs the pieces
// into parts of at most budget tokens (source and resolutions). It fails
// when one piece with its resolutions is larger than budget.
func planParts(m integrationMaterial, tok Tokenizer, budget int) ([]integrationPart, error) {
	chunks := sourceChunks(m.source)
	placed := make([][]int, len(chunks))
	for i, g := range m.accepted {
		at := len(chunks) - 1
		for c, text := range chunks {
			if strings.Contains(text, string(g.ID)) && slices.Contains(gap.FindIDs(text), g.ID) {
				at = c
				break
			}
		}
		placed[at] = append(placed[at], i)
	}
	var parts []integrationPart
	cur, cost := integrationPart{}, 0
	for c, text := range chunks {
		n := tok.Count(text)
		for _, i := range placed[c] {
			n += tok.Count(m.resolutions[i].Text)
		}
		if n > budget {
			return nil, fmt.Errorf("the source section starting %q and its resolutions make %d tokens, above the %d a part may hold", clipLine(text), n, budget)
		}
		if cur.source != "" && cost+n > budget {
			parts = append(parts, cur)
			cur, cost = integrationPart{}, 0
		}
		cur.source += text
		cur.res = append(cur.res, placed[c]...)
		cost += n
	}
	cur.last = true
	return append(parts, cur), nil
}

// sourceChunks cuts src at its level-1 and level-2 headings.
func sourceChunks(src string) []string {
	d := markdown.Parse(src)
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
// It is worked out once and kept in the integration's state.
func (s *Session) partsBudget(m integrationMaterial) (int, error) {
	in := s.st.Integration
	if in.PartsBudget != 0 {
		return in.PartsBudget, nil
	}
	d := s.integrationData(m)
	d.Source, d.Resolutions, d.Parts, d.Part, d.Last, d.SourceInUser = "", nil, 2, 2, true, true
	msgs, _, err := s.integrationMessages(d, 1, 1, nil)
	if err != nil {
		return 0, fmt.Errorf("integration: %w", err)
	}
	overhead := s.countMessages(msgs)
	in.PartsBudget = (s.integrationCap() - overhead) * 9 / 10
	return in.PartsBudget, nil
}

// integrationParts plays the part-by-part integration: the Engineer's
// attempts for each part in turn, then the join.
func (s *Session) integrationParts(ctx context.Context, m integrationMaterial) error {
	in := s.st.Integration
	budget, err := s.partsBudget(m)
	if err != nil {
		return err
	}
	if budget <= 0 {
		return s.integrationStops(ctx, fmt.Sprintf("the decisions and open gaps alone fill the integration cap of %d tokens (twice PromptBudget); raise PromptBudget to integrate", s.integrationCap()))
	}
	parts, err := planParts(m, s.tok, budget)
	if err != nil {
		return s.integrationStops(ctx, "integrating part by part: "+err.Error()+"; raise PromptBudget to integrate")
	}
	for len(in.Parts) < len(parts) {
		i := len(in.Parts)
		p := parts[i]
		if !p.needsCall(m) {
			in.Parts = append(in.Parts, 0) // kept as written
			continue
		}
		if len(in.Engineer) >= in.EngineerBudget {
			in.Step = integAsk
			s.stage()
			return nil
		}
		k := len(in.Engineer) + 1
		d := s.integrationData(m)
		check, ids := partRequest(d, m, p, i, len(parts), s.cfg.MaxOutputBytes)
		if p.last {
			check.Decisions = in.Decisions
			check.Limitations = m.input(s, nil).Limitations
			if check.OtherHeadings, err = s.partHeadings(ctx, parts, in.Parts); err != nil {
				return err
			}
		}
		msgs, stable, err := s.integrationMessages(d, k-in.EngineerFrom, in.EngineerBudget-in.EngineerFrom, in.answered(k))
		if err != nil {
			return fmt.Errorf("integration: %w", err)
		}
		content, call, err := s.integrationCall(ctx, Engineer, k, msgs, stable, ids)
		if errors.Is(err, ErrNoResponse) {
			return s.integrationStops(ctx, fmt.Sprintf("the Engineer has no response for the integration call of part %d of %d (Engineer call %d: %s)", i+1, len(parts), s.st.Usage.NextCall[string(Engineer)]+1, roleError(err)))
		}
		if err != nil {
			return err
		}
		vr := validatePart(content, check)
		rec := s.settleIntegrationCall(call, vr.Result)
		if !vr.Success {
			rec.Message = fmt.Sprintf("part %d of %d: %s", i+1, len(parts), rec.Message)
		}
		in.Engineer = append(in.Engineer, rec)
		s.stage(call.ops...)
		if vr.Success {
			in.Parts = append(in.Parts, k)
			in.EngineerFrom, in.EngineerBudget = len(in.Engineer), len(in.Engineer)+1+s.cfg.MaxRetries
		}
	}
	return s.joinParts(ctx, m, parts)
}

// answered is the Engineer attempt integration attempt k retries: the one
// before it in the same run of attempts, else nil.
func (in *integrationState) answered(k int) *attemptRec {
	if k-1 > in.EngineerFrom {
		return &in.Engineer[k-2]
	}
	return nil
}

// partRequest fills d, the whole integration's prompt data, for part i of
// n, and returns what the part's output is checked against (the last
// part's decisions, open gaps and the headings before it aside) and the
// gaps it resolves.
func partRequest(d *integrationData, m integrationMaterial, p integrationPart, i, n, maxOutputBytes int) (validate.IntegrationInput, []gap.ID) {
	d.Part, d.Parts, d.Last, d.SourceInUser = i+1, n, p.last, true
	d.Source = strings.TrimSpace(p.source)
	d.SourceFence = fenceFor(d.Source)
	check := validate.IntegrationInput{Source: p.source, MaxOutputBytes: maxOutputBytes, SkipSize: true}
	var ids []gap.ID
	d.Resolutions = nil
	material := utf8.RuneCountInString(p.source)
	for _, r := range p.res {
		g, text := m.accepted[r], strings.TrimSpace(m.resolutions[r].Text)
		d.Resolutions = append(d.Resolutions, integrationResolution{ID: g.ID, Title: g.Title, Text: text, Fence: fenceFor(text)})
		check.Resolutions = append(check.Resolutions, m.resolutions[r])
		ids = append(ids, g.ID)
		material += utf8.RuneCountInString(m.resolutions[r].Text)
	}
	d.MinChars = int(validate.IntegrationMinSize*float64(material)) + 1
	d.MaxChars = int(validate.IntegrationMaxSize * float64(material))
	if !p.last {
		d.Decisions, d.Limitations = nil, nil
	}
	return check, ids
}

// validatePart validates a part's integrated output against check.
func validatePart(content string, check validate.IntegrationInput) validate.IntegrationResult {
	if content == "" {
		return validate.IntegrationResult{Result: validate.FileMissing(keyFinalSpec)}
	}
	return validate.Integration(content, check)
}

// partText is part i as integrated: its accepted attempt, or its source
// when it had nothing to merge.
func (s *Session) partText(ctx context.Context, parts []integrationPart, accepted []int, i int) (string, error) {
	if accepted[i] == 0 {
		return parts[i].source, nil
	}
	_, key := finalAttemptKeys(Engineer, accepted[i])
	b, err := s.get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("integration: read %s: %w", key, err)
	}
	return string(b), nil
}

// partHeadings are the headings of the parts integrated so far.
func (s *Session) partHeadings(ctx context.Context, parts []integrationPart, accepted []int) ([]string, error) {
	var out []string
	for i := range accepted {
		text, err := s.partText(ctx, parts, accepted, i)
		if err != nil {
			return nil, err
		}
		for _, h := range markdown.Parse(text).Headings {
			out = append(out, h.Title)
		}
	}
	return out, nil
}

// joinParts joins the integrated parts into one spec with one Resolution
// Log, validates it against the whole material and sends it to review.
func (s *Session) joinParts(ctx context.Context, m integrationMaterial, parts []integrationPart) error {
	in := s.st.Integration
	texts := make([]string, len(parts))
	for i := range parts {
		text, err := s.partText(ctx, parts, in.Parts, i)
		if err != nil {
			return err
		}
		texts[i] = text
	}
	spec := joinPartTexts(texts)
	vr := validate.Integration(spec, m.input(s, in.Decisions))
	if !vr.Success {
		return s.integrationStops(ctx, fmt.Sprintf("the %d parts integrated one by one do not make a valid spec together (%s: %s)", len(parts), vr.FailureType, oneLine(vr.Message)))
	}
	in.Merged, in.Accepted, in.Step = true, len(in.Engineer), integReview
	in.Retried = true // no integration retry after the review of a joined spec: its issues are asked
	in.ReviewerFrom, in.ReviewerBudget = len(in.Reviewer), len(in.Reviewer)+1+s.cfg.MaxRetries
	in.Notes = append(in.Notes, fmt.Sprintf("integrated part by part: %d parts, the whole prompt being above the cap of %d tokens", len(parts), s.integrationCap()))
	in.Notes = append(in.Notes, vr.Warnings...)
	s.stage(Put(finalOutputKey(Engineer), []byte(spec)))
	return nil
}

// joinPartTexts joins the parts' texts into one spec: their bodies in
// order, then one Resolution Log made of their logs' rows.
func joinPartTexts(texts []string) string {
	var body, log strings.Builder
	for _, text := range texts {
		d := markdown.Parse(text)
		cut := len(d.Text)
		if sec, ok := resolutionLog(d); ok {
			cut = sec.Start
			for _, line := range strings.Split(d.Text[sec.BodyStart:sec.End], "\n") {
				if t := strings.TrimSpace(line); strings.HasPrefix(t, "|") {
					log.WriteString(t + "\n")
				}
			}
		}
		body.WriteString(strings.TrimSpace(d.Text[:cut]) + "\n\n")
	}
	return body.String() + "## Resolution Log\n\n" + strings.Join(logRows(log.String()), "\n") + "\n"
}

// resolutionLog finds a part's level-2 Resolution Log section.
func resolutionLog(d *markdown.Doc) (markdown.Section, bool) {
	for _, sec := range d.SectionsAt(2) {
		if strings.EqualFold(strings.TrimSpace(sec.Title), "Resolution Log") {
			return sec, true
		}
	}
	return markdown.Section{}, false
}

// logRows are the rows of the parts' logs, one after another. Each part's
// table brought its header and delimiter rows: the first pair only is
// kept.
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
