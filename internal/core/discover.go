package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/discoverprompt"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/markers"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// The discovery step (DESIGN §19): a session that starts from a draft
// alone (Config.Gaps empty), or with a list and the request to propose
// additions (Config.Discover), starts with one Reviewer call on the
// spec, its marker scan and the built-in example (discoverprompt). The
// answer is read by validate.Discovery and retried with the failure's
// notice like any output (a TRUNCATED or REFUSAL answer as every answer
// is, readAnswer and freeReask); after MaxRetries failures the person
// decides (retry, give the list, abandon, pause). A valid list is one
// question (round 0): accept it, edit it (the answer's text is a gap
// list), drop some (their IDs), discover again with guidance, pause. The
// confirmed list is the ledger round 1 starts from; an empty one ends the
// session COMPLETE with nothing to refine.
//
// Like the integration step's, its calls are journaled (discovery/
// prompts/, attempts/), so a crash repeats at most the call in flight;
// they are numbered apart from the Reviewer's round calls (a replay
// reads discovery-NNN.md), so a recording of the same session given its
// gaps replays the same rounds.

// discoveryCap is the discovery prompt's cap in tokens: twice the round
// prompts' budget, as the integration prompt's, since it is the other
// prompt that carries the whole spec.
func (s *Engine) discoveryCap() int { return 2 * s.cfg.PromptBudget }

// newDiscovery is the discovery step a session given gaps (none: from
// the draft alone) starts with.
func newDiscovery(given []gap.Gap, maxGaps, maxRetries int) *state.DiscoveryState {
	d := &state.DiscoveryState{Step: state.DiscoverCall, MaxGaps: maxGaps, Budget: 1 + maxRetries}
	for _, g := range given {
		d.Given = append(d.Given, g.ID)
	}
	return d
}

// discoveryRoom is how many gaps an answer may propose: the session's
// cap less the gaps given.
func discoveryRoom(d *state.DiscoveryState) int {
	limit := d.MaxGaps
	if limit <= 0 {
		limit = defaultMaxGaps
	}
	return max(limit-len(d.Given), 0)
}

// defaultMaxGaps is the longest gap list a session takes when
// Config.MaxGaps is 0 (refine.DefaultMaxGaps).
const defaultMaxGaps = 100_000

// discoveryInput is the prompt input of the next discovery attempt.
func (s *Engine) discoveryInput(src string) discoverprompt.Input {
	d := s.st.Discovery
	in := discoverprompt.Input{Spec: src, Markers: markers.Scan(src), Guidance: d.Guidance}
	if d.MaxGaps > 0 {
		in.MaxGaps = discoveryRoom(d)
	}
	for _, id := range d.Given {
		if g, ok := s.st.Ledger.Get(id); ok {
			in.Given = append(in.Given, g)
		}
	}
	run := d.RunAttempts()
	if n := len(run); n > 0 && !run[n-1].Success {
		in.Retry = &discoverprompt.Retry{FailureType: run[n-1].FailureType, Message: run[n-1].Message, Attempt: n, MaxAttempts: d.Budget - d.From - 1}
	}
	return in
}

// discoveryMessages are the messages of a discovery prompt, with the
// length of its stable prefix.
func discoveryMessages(in discoverprompt.Input) ([]llm.Message, int) {
	p := discoverprompt.Build(in)
	return []llm.Message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}}, 1
}

// checkDiscoveryCap refuses a spec whose discovery prompt is above the
// cap (twice PromptBudget), naming it: the spec is not discovered in
// parts.
func checkDiscoveryCap(tok exemplar.Tokenizer, msgs []llm.Message, limit int) error {
	if n := countMessages(tok, msgs); n > limit {
		return fmt.Errorf("discovery: the spec makes a %d-token discovery prompt, above its cap of %d tokens (twice PromptBudget): give the gap list (Config.Gaps, refine run --gaps), raise PromptBudget, or discover the spec's parts apart", n, limit)
	}
	return nil
}

// discover plays the discovery step until the list is confirmed, a
// question waits (waitForAnswer) or the session ended (sessionEnded).
func (s *Engine) discover() (stop, error) {
	d := s.st.Discovery
	for d.Step != state.DiscoverDone {
		st, err := goOn, error(nil)
		switch d.Step {
		case state.DiscoverCall:
			err = s.discoveryCalls()
		case state.DiscoverConfirm, state.DiscoverEscalate:
			st, err = s.discoveryAsk()
		default:
			return goOn, fmt.Errorf("discovery: %w: unknown step %q in state.json", store.ErrCorrupt, d.Step)
		}
		if err != nil || st != goOn {
			return st, err
		}
	}
	return goOn, nil
}

// discoveryCalls plays the discovery attempts until one reads as a gap
// list (the list is then asked) or the attempts allowed are spent (the
// person is then asked).
func (s *Engine) discoveryCalls() error {
	d := s.st.Discovery
	src, err := s.source()
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	opts := validate.DiscoveryOptions{Spec: src, Known: d.Given, MaxGaps: discoveryRoom(d), MaxOutputBytes: s.cfg.MaxOutputBytes}
	for len(d.Attempts) < d.Budget {
		k := len(d.Attempts) + 1
		msgs, stable := discoveryMessages(s.discoveryInput(src))
		if err := checkDiscoveryCap(s.tok, msgs, s.discoveryCap()); err != nil {
			return err
		}
		var read validate.DiscoveryResult
		check := func(content string) validate.Result {
			read = validate.Discovery(content, opts)
			return read.Result
		}
		promptKey, respKey := state.DiscoveryAttemptKeys(k)
		at, err := s.stepCall(stepCallSpec{role: llm.Reviewer, counter: llm.DiscoveryFiles, k: k, msgs: msgs, stable: stable,
			promptKey: promptKey, respKey: respKey, where: fmt.Sprintf("discovery attempt %d", k), phase: state.PhaseDiscovery, discovery: true,
			prior: d.RunAttempts(), check: check, extend: func() { d.Budget++ }})
		if errors.Is(err, llm.ErrNoResponse) {
			return fmt.Errorf("discovery: the Reviewer has no answer for the discovery call (a recording needs discovery-%03d.md): %w", s.st.Usage.NextCall[string(llm.DiscoveryFiles)]+1, err)
		}
		if err != nil {
			return err
		}
		d.Attempts = append(d.Attempts, at.rec)
		if !at.vr.Success {
			s.stage(at.ops...)
			continue
		}
		d.Proposed, d.NoGaps, d.Checklist = read.Gaps, read.NoGapsFound, read.Checklist
		d.Step = state.DiscoverConfirm
		s.stage(append(at.ops, s.acceptOp(state.KeyDiscoveryAnswer, respKey, at.content, at.vr))...)
		return nil
	}
	d.Step = state.DiscoverEscalate
	s.stage()
	return nil
}

// The discovery questions' options.
const (
	discoverAccept  = "accept"
	discoverEdit    = "edit"
	discoverDrop    = "drop"
	discoverAgain   = "rediscover"
	discoverRetry   = "retry"
	discoverAbandon = "abandon"
	discoverPause   = "pause"
)

// discoveryQuestionPrefix starts the IDs of the discovery's questions.
const discoveryQuestionPrefix = "discovery-"

// discoveryAsk asks the person to confirm the list (or, every attempt
// failed, what to do) and applies the answer.
func (s *Engine) discoveryAsk() (stop, error) {
	d := s.st.Discovery
	q := discoveryQuestion(s.st, s.cfg.MaxRetries)
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return waitIf(paused), err
	}
	opt, _ := q.Option(a.Key)
	if opt.Key == discoverPause {
		// Offer the same decision again when the session resumes.
		s.st.Pending = append(s.st.Pending, q)
		s.recordDiscoveryDecision(q, a, opt.Label)
		return waitForAnswer, s.checkpoint()
	}
	d.Asked++
	decision := opt.Label
	switch opt.Key {
	case discoverAccept:
		return s.confirmDiscovery(q, a, decision, d.Proposed, "accepted")
	case discoverEdit:
		gs, _ := editedList(d, a.Text) // checked when the answer was accepted
		return s.confirmDiscovery(q, a, decision, gs, "edited by the person")
	case discoverDrop:
		ids, _ := droppedIDs(d, a.Text)
		kept := slices.DeleteFunc(slices.Clone(d.Proposed), func(g gap.Gap) bool { return slices.Contains(ids, g.ID) })
		how := "accepted without " + strings.Join(idStrings(ids), ", ")
		return s.confirmDiscovery(q, a, decision+": "+strings.Join(idStrings(ids), ", "), kept, how)
	case discoverAbandon:
		s.recordDiscoveryDecision(q, a, decision)
		return sessionEnded, s.finish(StatusAbandoned, EndReason("abandoned by the user: discovery found no gap list", a.Text))
	}
	// Discover again (rediscover, retry), with the person's text as
	// guidance: a new run of attempts.
	if t := strings.TrimSpace(a.Text); t != "" || opt.Key == discoverAgain {
		d.Guidance = t
	}
	d.Proposed, d.NoGaps, d.Checklist = nil, false, nil
	d.From, d.Budget = len(d.Attempts), len(d.Attempts)+1+s.cfg.MaxRetries
	d.Step = state.DiscoverCall
	s.recordDiscoveryDecision(q, a, decision)
	s.stage()
	return goOn, nil
}

// confirmDiscovery makes gs, with the gaps given, the session's gaps:
// the ledger round 1 starts from, written as discovery/gaps.md. An empty
// list ends the session COMPLETE: nothing to refine.
func (s *Engine) confirmDiscovery(q question.Question, a question.Answer, decision string, gs []gap.Gap, how string) (stop, error) {
	d := s.st.Discovery
	s.recordDiscoveryDecision(q, a, decision)
	added := make([]gap.Gap, len(gs))
	for i, g := range gs {
		g.State, g.History, g.Round = gap.Open, nil, 0
		added[i] = g
	}
	if err := s.st.Ledger.AddAll(added); err != nil {
		return goOn, fmt.Errorf("discovery: %w", err)
	}
	s.st.PrevLedger = SnapshotLedger(&s.st.Ledger)
	d.Step, d.Confirmed = state.DiscoverDone, how
	s.log.Info("discovery confirmed", "gaps", len(s.st.Ledger.Gaps), "how", how)
	if len(s.st.Ledger.Gaps) == 0 {
		return sessionEnded, s.finish(StatusComplete, "discovery found no gaps and the person confirmed it: nothing to refine")
	}
	s.stage(store.Put(state.KeyDiscoveryGaps, []byte(gapsfile.Format(s.st.Ledger.Gaps))))
	return goOn, nil
}

// discoveryQuestion words the discovery's question: the list to confirm,
// or what to do when every attempt failed.
func discoveryQuestion(st *state.State, maxRetries int) question.Question {
	d := st.Discovery
	id := fmt.Sprintf("%s%d", discoveryQuestionPrefix, d.Asked+1)
	if d.Step == state.DiscoverEscalate {
		return discoveryFailedQuestion(d, id, maxRetries)
	}
	var b strings.Builder
	given := len(d.Given)
	opts := []question.Option{
		{Key: discoverAccept, Label: "Accept the list", Effect: "These gaps are refined from round 1", Recommended: true},
		{Key: discoverEdit, Label: "Replace the list with your own", Effect: "Your text is the list: \"- GAP-AREA-NNN (SEVERITY): title\" lines, each optionally with Location: and Why: lines (refine resume --answer edit --gaps FILE)"},
		{Key: discoverDrop, Label: "Drop some gaps", Effect: "Your text names the gap IDs to drop; the rest is accepted"},
		{Key: discoverAgain, Label: "Discover again", Effect: "The Reviewer reads the spec again, with your text as guidance"},
		{Key: discoverPause, Label: "Pause - decide later", Effect: "The session waits for your answer"},
	}
	title := fmt.Sprintf("Discovery: confirm the %d gap(s) found", len(d.Proposed))
	if d.NoGaps || len(d.Proposed) == 0 {
		title = "Discovery found no gaps (NO_GAPS_FOUND)"
		fmt.Fprintf(&b, "The Reviewer read the spec and found nothing it leaves open (NO_GAPS_FOUND).")
		if len(d.Checklist) > 0 {
			b.WriteString(" It checked:\n\n")
			for _, c := range d.Checklist {
				fmt.Fprintf(&b, "- [x] %s\n", render.OneLine(c))
			}
		}
		b.WriteString("\n\n")
		opts = slices.DeleteFunc(opts, func(o question.Option) bool { return o.Key == discoverDrop })
		opts[0].Label = "Confirm: nothing to refine"
		opts[0].Effect = "The session ends COMPLETE with nothing to refine"
		if given > 0 {
			opts[0].Label, opts[0].Effect = "Confirm: no gap to add", fmt.Sprintf("The %d gap(s) given are refined from round 1", given)
		}
	} else {
		fmt.Fprintf(&b, "The Reviewer read the spec and proposes %d gap(s)", len(d.Proposed))
		if given > 0 {
			fmt.Fprintf(&b, " in addition to the %d given", given)
		}
		b.WriteString(":\n\n")
		for _, g := range d.Proposed {
			fmt.Fprintf(&b, "- **%s** (%s): %s\n", g.ID, g.Severity, render.OneLine(g.Title))
			if g.Location != "" {
				fmt.Fprintf(&b, "  - Location: %s\n", render.OneLine(g.Location))
			}
			if g.Why != "" {
				fmt.Fprintf(&b, "  - Why: %s\n", render.OneLine(g.Why))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("=== Options ===\n")
	q := question.Question{ID: id, Kind: question.KindDiscovery, Round: 0, Title: title, Options: opts, AllowText: true,
		Default: discoverAccept, TextRequired: []string{discoverEdit, discoverDrop}}
	if !slices.ContainsFunc(opts, func(o question.Option) bool { return o.Key == discoverDrop }) {
		q.TextRequired = []string{discoverEdit}
	}
	q.Body = b.String() + question.Menu(opts)
	return q
}

// discoveryFailedQuestion asks what to do when every discovery attempt
// failed validation.
func discoveryFailedQuestion(d *state.DiscoveryState, id string, maxRetries int) question.Question {
	run := d.RunAttempts()
	last := run[len(run)-1]
	opts := []question.Option{
		{Key: discoverRetry, Label: fmt.Sprintf("Retry discovery (%d more attempts)", 1+maxRetries), Effect: "The Reviewer reads the spec again; your text, if any, is its guidance"},
		{Key: discoverEdit, Label: "Give the list yourself", Effect: "Your text is the list: \"- GAP-AREA-NNN (SEVERITY): title\" lines (refine resume --answer edit --gaps FILE)"},
		{Key: discoverAbandon, Label: "Abandon the session", Effect: "The session ends ABANDONED"},
		{Key: discoverPause, Label: "Pause - decide later", Effect: "The session waits for your answer", Recommended: true},
	}
	body := fmt.Sprintf("Discovery failed validation %d time(s); the last attempt failed with %s:\n\n> %s\n\nThe session has no gap list to refine until you decide.\n\n=== Options ===\n",
		len(run), last.FailureType, render.OneLine(last.Message))
	return question.Question{ID: id, Kind: question.KindEscalation, Round: 0, Title: "Discovery of the gap list failed validation",
		Body: body + question.Menu(opts), Options: opts, AllowText: true, Default: discoverPause, TextRequired: []string{discoverEdit}}
}

// recordDiscoveryDecision files the answer a to the discovery question q
// in decisions.md, as round 0's: DECISION-R0-NNN, numbered apart, so the
// decisions of round 1 are numbered as in a session given its list.
func (s *Engine) recordDiscoveryDecision(q question.Question, a question.Answer, decision string) {
	n := 0
	for _, d := range s.st.Decisions {
		if discoveryDecision(d) {
			n++
		}
	}
	s.st.Decisions = append(s.st.Decisions, state.DecisionRecord{ID: fmt.Sprintf("DECISION-R0-%03d", n+1), Round: 0,
		Question: q.Title, Option: a.Key, Decision: decision, Text: a.Text, At: s.at(), Procedural: true})
}

// discoveryDecision reports whether d answered a discovery question:
// which gaps the session refines, not what the spec says, so neither the
// integration's log nor the final spec lists it (decisions.md does).
func discoveryDecision(d state.DecisionRecord) bool { return d.Round == 0 && d.Procedural }

// isDiscoveryQuestion recognises the discovery's questions.
func isDiscoveryQuestion(q question.Question) bool {
	return q.Round == 0 && strings.HasPrefix(q.ID, discoveryQuestionPrefix)
}

// checkDiscoveryAnswer refuses an answer to a discovery question whose
// text does not do what its option says: an edited list that does not
// read as a gap list (or repeats a given gap, or is above the cap), a
// drop that names no proposed gap.
func checkDiscoveryAnswer(st *state.State, q question.Question, a question.Answer) error {
	d := st.Discovery
	if d == nil || !isDiscoveryQuestion(q) {
		return nil
	}
	var err error
	switch a.Key {
	case discoverEdit:
		_, err = editedList(d, a.Text)
	case discoverDrop:
		_, err = droppedIDs(d, a.Text)
	}
	if err != nil {
		return fmt.Errorf("%w: question %s: %w", question.ErrInvalidAnswer, q.ID, err)
	}
	return nil
}

// editedList reads the person's list (the answer's text): a gap list as
// `refine run --gaps` takes it, none of the given gaps again, within the
// cap.
func editedList(d *state.DiscoveryState, text string) ([]gap.Gap, error) {
	gs, err := gapsfile.Parse("the edited list", []byte(text))
	if err != nil {
		return nil, err
	}
	for _, g := range gs {
		if slices.Contains(d.Given, g.ID) {
			return nil, fmt.Errorf("the edited list repeats %s, a gap given with the session (DUPLICATE_GAP): list only the additions", g.ID)
		}
	}
	if room := discoveryRoom(d); len(gs) > room {
		return nil, fmt.Errorf("the edited list has %d gaps, above the %d the session takes (Config.MaxGaps)", len(gs), room)
	}
	return gs, nil
}

// droppedIDs reads the IDs a drop names: each a proposed gap's.
func droppedIDs(d *state.DiscoveryState, text string) ([]gap.ID, error) {
	ids := gap.FindIDs(text)
	if len(ids) == 0 {
		return nil, errors.New("name the gap IDs to drop (\"drop: GAP-API-003 GAP-API-005\")")
	}
	var out []gap.ID
	for _, id := range ids {
		if !slices.ContainsFunc(d.Proposed, func(g gap.Gap) bool { return g.ID == id }) {
			return nil, fmt.Errorf("%s is not in the proposed list", id)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}
