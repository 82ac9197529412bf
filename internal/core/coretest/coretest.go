// Package coretest drives a session's decisions (internal/core) through
// their protocol alone, for the datadriven interaction scripts beside the
// core (internal/core/testdata/*.txt), as etcd raft's rafttest drives a
// RawNode: core.Create and core.Load make the decisions over a memory
// Store, each input goes in through Engine.Handle with a fixed time, the
// Ready that comes out is printed, committed and acknowledged (Advance),
// and a crash drops the decisions with what was not committed. Role
// answers are given inline or built with refinetest's builders; no Role,
// Asker or clock is involved.
//
// Regenerate the expected output of the scripts with
//
//	go test ./internal/core -run TestScripts -rewrite
//
// The commands (arguments in brackets are optional):
//
//	create [gaps=(ID:SEV, …)] [discover] [writes] [cold] [hold] [SETTING=VALUE …]
//	    a new session (core.Create) on a fresh memory Store, from the
//	    input block as the spec (refinetest's small spec when empty).
//	    discover starts it with discovery (DESIGN §19): of its gaps
//	    (none given), or of additions to the gaps given.
//	    SETTING is a JSON key of core.Settings (max_rounds=3,
//	    rollback_mode=AUTO_RETRY, integrate=true, backoff_base=2s);
//	    the defaults are refinetest.Config's (integration off). writes
//	    prints every write of every Ready (kind, key, bytes) instead of
//	    their number; cold configures a cold store.
//	run [step] [asker=person|immediate|none] [link=L]
//	    core.Run: play rounds (step: one round). asker says who answers
//	    the questions: a person (the default; the Ready lists them under
//	    ask, answered with answer, defer or ask-failed), an Immediate
//	    asker, or none (the questions wait, as with Session.Next).
//	deliver [role=R call=N …]
//	    core.Deliver of the results staged with stage, and of the one
//	    the arguments describe (as stage's).
//	stage role=R call=N [gen=KIND] [finish=F] [tokens=N] [err=TEXT] [retries=N] [notes=N]
//	    keeps one call's result for the next deliver. The response is the
//	    input block (with @ lines expanded, see respond.go) or what gen
//	    builds for the call of the last Ready: resolve, revise (issue=),
//	    disagree (issue=), newgap (new=ID:SEV), approve or issue (sev=,
//	    default HIGH). finish is the backend's finish reason, tokens the
//	    completion tokens. err makes the call fail (retries=N: after N
//	    transport retries; err=cancelled: the driver's context ended);
//	    notes=N reports N transport retries made on the way.
//	answer id=Q key=K
//	    core.Answered; the input block is the answer's text.
//	defer id=Q | ask-failed id=Q
//	    core.Deferred, core.AskFailed (the input block is the Asker's
//	    error) for a question the Ready asked.
//	approve [note=…] [ack-high] | abandon [reason=…]
//	    core.Approve, core.Abandon.
//	rollback to=N [reason=…] [trigger=T] [asker=…]
//	    core.Rollback; each input line is an adjustment.
//	settings SETTING=VALUE …
//	    core.ChangeSettings: the session's settings with these changed.
//	continue | interrupt
//	    core.Continue, core.Interrupt (the driver's context ended).
//
// Every input command takes hold (the Ready's writes are not committed:
// commit or advance them, or crash), and stop[=N] (the driver's context
// ends during the input: at its N-th yield, the first by default, the
// harness hands core.Interrupt instead of core.Continue, which it hands
// at every yield otherwise, as both drivers do). Each input's time is the
// harness clock's next second.
//
//	commit            commits the writes held, without Advance.
//	advance           commits them if not yet done, then Advance.
//	crash             drops the decisions, the writes held and the staged results.
//	load              core.Load from the Store, as a new process.
//	tick by=DURATION  moves the clock on.
//	status            Engine.Status: outcome, round, phase, gaps, decisions, pending.
//	validation        the validation log.
//	normalized        the quirks of form the session's answers were read
//	                  through, per role and kind (DESIGN §18).
//	events [kind=(K, …)]  the events of the last input (all its Readies).
//	prompt role=R call=N  for each input line, the first line of that
//	                  call's prompt (of the last Ready) containing it.
//	question id=Q     a pending question: its title and options (key,
//	                  label, * the default, ! recommended), and for each
//	                  input line the first line of its body containing it.
//	get key=K         the stored value of K: whole, or for each input
//	                  line, its first line containing it.
//	digest            the Store's keys and a hash of every key and value.
package coretest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// start is the time a script starts at: its first input is a second later.
func start() time.Time { return time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC) }

// harness is one script's session: the decisions, their Store, the
// Ready being acted on and the results staged for the next Deliver.
type harness struct {
	opts       core.Options
	store      store.Store
	cold       store.Store
	eng        *core.Engine
	now        time.Time
	printWrite bool
	// last is the last Ready (its Events those of every Ready of the
	// input); held are its writes while not committed, heldCommits their
	// commits, committed says they are in the Store but not advanced.
	last        core.Ready
	lastErr     error
	held        []store.Op
	heldCold    []store.Op
	heldCommits int
	committed   bool
	staged      []core.CallResult
	notes       []core.TransportNote
}

// Run runs the script at path with a new harness.
func Run(t *testing.T, path string) {
	h := &harness{now: start()}
	datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
		return h.do(t, td)
	})
}

// do plays one command and returns what it prints.
func (h *harness) do(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "create":
		return h.create(t, td)
	case "load":
		return h.load()
	case "tick":
		var by string
		td.ScanArgs(t, "by", &by)
		d, err := time.ParseDuration(by)
		if err != nil {
			td.Fatalf(t, "tick: %v", err)
		}
		h.now = h.now.Add(d)
		return "now " + h.now.Format(time.RFC3339)
	case "digest":
		return h.digest()
	case "get":
		return h.get(t, td)
	}
	if h.eng == nil && td.Cmd != "crash" && td.Cmd != "commit" {
		td.Fatalf(t, "%s: no decisions (create or load first)", td.Cmd)
	}
	switch td.Cmd {
	case "stage":
		return h.stage(t, td)
	case "commit":
		return h.commit()
	case "advance":
		return h.advance()
	case "crash":
		lost := len(h.held) + len(h.heldCold)
		if h.committed {
			lost = 0
		}
		h.eng, h.last, h.held, h.heldCold, h.heldCommits, h.committed, h.staged, h.notes = nil, core.Ready{}, nil, nil, 0, false, nil, nil
		return fmt.Sprintf("crashed: %d writes not committed are lost", lost)
	case "status":
		return printStatus(h.eng.Status())
	case "validation":
		return printValidation(h.eng.Status())
	case "normalized":
		return printNormalized(h.eng.Status())
	case "events":
		return h.events(t, td)
	case "prompt":
		return h.prompt(t, td)
	case "question":
		return h.question(t, td)
	}
	if td.Cmd == "deliver" && td.HasArg("role") {
		if msg := h.stage(t, td); strings.HasPrefix(msg, "stage: ") {
			return msg // nothing delivered
		}
	}
	in := h.input(t, td)
	return h.handle(t, td, in)
}

// tick is the time of the next input.
func (h *harness) tick() time.Time {
	h.now = h.now.Add(time.Second)
	return h.now
}

// create starts a session on a fresh memory Store.
func (h *harness) create(t *testing.T, td *datadriven.TestData) string {
	cfg := refinetest.Config(nil, nil, nil, parseGaps(t, td)...)
	set, err := withSettings(cfg.Settings, td, "gaps", "writes", "cold", "hold", "discover")
	if err == nil {
		err = set.Validate()
	}
	if err != nil {
		td.Fatalf(t, "create: %v", err)
	}
	h.store, h.cold = memory.New(), nil
	if td.HasArg("cold") {
		h.cold = memory.New()
	}
	h.printWrite = td.HasArg("writes")
	h.opts = core.Options{
		Params: core.Params{Settings: set, Defaults: refine.DefaultConfig().Settings, HasColdStore: h.cold != nil, Discover: td.HasArg("discover")},
		Caps:   capsOf(h.store), Log: slog.New(slog.DiscardHandler), SelfCheck: true,
	}
	spec := td.Input
	if strings.TrimSpace(spec) == "" {
		spec = cfg.Spec
	} else {
		spec += "\n"
	}
	h.eng, h.last, h.held, h.heldCold, h.staged, h.notes = nil, core.Ready{}, nil, nil, nil, nil
	if _, given := td.Arg("gaps"); td.HasArg("discover") && !given {
		cfg.Gaps = nil // the session discovers its gaps
	}
	eng, r, err := core.Create(h.opts, view{h.store}, "session-1", spec, cfg.Gaps, h.tick())
	if err != nil {
		return "create: " + errText(err)
	}
	h.eng = eng
	var b strings.Builder
	b.WriteString(h.settle(td, r, nil))
	b.WriteString(printStatus(h.eng.Status()))
	return b.String()
}

// parseGaps reads gaps=(ID:SEV, …); none gives refinetest's one HIGH gap.
func parseGaps(t *testing.T, td *datadriven.TestData) []gap.Gap {
	arg, ok := td.Arg("gaps")
	if !ok {
		return nil
	}
	var gaps []gap.Gap
	for _, v := range arg.Vals {
		id, sev, ok := strings.Cut(v, ":")
		s, err := gap.ParseSeverity(sev)
		if !ok || err != nil {
			td.Fatalf(t, "gap %q: want ID:SEVERITY (%v)", v, err)
		}
		gaps = append(gaps, gap.Gap{ID: gap.ID(id), Title: "Gap " + id, Severity: s})
	}
	return gaps
}

// load takes the session up from its Store, as a new process.
func (h *harness) load() string {
	if h.store == nil {
		return "load: no store (create first)"
	}
	eng, err := load(h.opts, h.store)
	if err != nil {
		return "load: " + errText(err)
	}
	h.eng, h.last, h.held, h.heldCold, h.heldCommits, h.committed, h.staged, h.notes = eng, core.Ready{}, nil, nil, 0, false, nil, nil
	return printStatus(h.eng.Status())
}

// input builds the input a command names.
func (h *harness) input(t *testing.T, td *datadriven.TestData) core.Input {
	at := h.tick()
	switch td.Cmd {
	case "run":
		in := core.Run{At: at, Step: td.HasArg("step")}
		in.Asks, in.Immediate = askerArg(t, td)
		if td.HasArg("link") {
			td.ScanArgs(t, "link", &in.Link)
		}
		return in
	case "continue":
		return core.Continue{At: at}
	case "interrupt":
		return core.Interrupt{At: at, Cause: errStopped}
	case "deliver":
		in := core.Deliver{At: at, Results: h.staged, Notes: h.notes}
		h.staged, h.notes = nil, nil
		return in
	case "answer":
		var id, key string
		td.ScanArgs(t, "id", &id)
		td.ScanArgs(t, "key", &key)
		return core.Answered{At: at, Question: id, Answer: question.Answer{Key: key, Text: strings.TrimSpace(td.Input)}}
	case "defer":
		var id string
		td.ScanArgs(t, "id", &id)
		return core.Deferred{At: at, Question: id}
	case "ask-failed":
		var id string
		td.ScanArgs(t, "id", &id)
		msg := "the asker failed"
		if m := strings.TrimSpace(td.Input); m != "" {
			msg = m
		}
		return core.AskFailed{At: at, Question: id, Err: errors.New(msg)}
	case "approve":
		in := core.Approve{At: at, AcknowledgeHigh: td.HasArg("ack-high")}
		if td.HasArg("note") {
			td.ScanArgs(t, "note", &in.Note)
		}
		return in
	case "abandon":
		in := core.Abandon{At: at}
		if td.HasArg("reason") {
			td.ScanArgs(t, "reason", &in.Reason)
		}
		return in
	case "rollback":
		req := core.RollbackRequest{Reason: "the script asks"}
		td.ScanArgs(t, "to", &req.To)
		if td.HasArg("reason") {
			td.ScanArgs(t, "reason", &req.Reason)
		}
		if td.HasArg("trigger") {
			var trig string
			td.ScanArgs(t, "trigger", &trig)
			req.Trigger = rollbackTrigger(trig)
		}
		for _, l := range strings.Split(td.Input, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				req.Adjustments = append(req.Adjustments, l)
			}
		}
		in := core.Rollback{At: at, Request: req}
		in.Asks, in.Immediate = askerArg(t, td)
		return in
	case "settings":
		set, err := withSettings(h.eng.Settings(), td, "hold", "stop")
		if err != nil {
			td.Fatalf(t, "settings: %v", err)
		}
		return core.ChangeSettings{At: at, Settings: set}
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return nil
}

// stopAt reads stop[=N]: the yield at which the context ends (1 by default).
func stopAt(t *testing.T, td *datadriven.TestData) int {
	arg, _ := td.Arg("stop")
	if len(arg.Vals) == 0 || arg.Vals[0] == "" {
		return 1
	}
	var n int
	td.ScanArgs(t, "stop", &n)
	return n
}

// errStopped is the cause of an Interrupt: the driver's context ended.
var errStopped = errors.New("context canceled")

// askerArg reads asker=person|immediate|none (person by default).
func askerArg(t *testing.T, td *datadriven.TestData) (asks, immediate bool) {
	kind := "person"
	if td.HasArg("asker") {
		td.ScanArgs(t, "asker", &kind)
	}
	switch kind {
	case "person":
		return true, false
	case "immediate":
		return true, true
	case "none":
		return false, false
	}
	td.Fatalf(t, "asker=%s: want person, immediate or none", kind)
	return false, false
}

// handle hands in to the decisions, continuing after each yield (or
// interrupting, with stop) as a driver does, and prints the last Ready.
func (h *harness) handle(t *testing.T, td *datadriven.TestData, in core.Input) string {
	var events []core.Event
	var b strings.Builder
	yields := 0
	for {
		r, err := h.eng.Handle(view{h.store}, h.coldView(), in)
		events = append(events, r.Events...)
		if err != nil || !r.More {
			r.Events = events
			if errors.Is(err, core.ErrNotPersisted) {
				// Refused: the writes held still wait.
				h.lastErr = err
				return "error: " + errText(err) + "\n"
			}
			b.WriteString(h.settle(td, r, err))
			return b.String()
		}
		if len(r.Persist) > 0 || len(r.Cold) > 0 || len(r.Calls) > 0 || len(r.Ask) > 0 {
			td.Fatalf(t, "a Ready with More carries writes, calls or questions: %+v", r)
		}
		yields++
		if td.HasArg("stop") && yields >= stopAt(t, td) {
			fmt.Fprintf(&b, "yield %d: the context ended, interrupt\n", yields)
			in = core.Interrupt{At: h.tick(), Cause: errStopped}
			continue
		}
		in = core.Continue{At: h.tick()}
	}
}

// settle prints r and, unless the command holds them, commits its
// writes and advances.
func (h *harness) settle(td *datadriven.TestData, r core.Ready, err error) string {
	out := printReady(r, err, h.printWrite, h.last.Report)
	h.last, h.lastErr = r, err
	if r.Stale {
		// What the decisions hold was never stored: a driver takes the
		// session up again from the Store (load).
		h.eng = nil
		return out
	}
	if len(r.Persist) == 0 && len(r.Cold) == 0 {
		return out
	}
	h.held, h.heldCold, h.heldCommits, h.committed = slices.Clone(r.Persist), slices.Clone(r.Cold), r.Commits, false
	if td.HasArg("hold") {
		return out
	}
	if msg := h.commitHeld(); msg != "" {
		return out + msg
	}
	h.eng.Advance()
	h.held, h.heldCold, h.heldCommits, h.committed = nil, nil, 0, false
	return out
}

// commitHeld commits the writes held, cold first, as a driver does; it
// returns what went wrong, if anything.
func (h *harness) commitHeld() string {
	ctx := t0()
	if len(h.heldCold) > 0 {
		if h.cold == nil {
			return "commit: the Ready has cold writes and no cold store is configured\n"
		}
		if err := h.cold.Commit(ctx, h.heldCold...); err != nil {
			return "commit cold: " + errText(err) + "\n"
		}
	}
	if len(h.held) > 0 {
		if err := h.store.Commit(ctx, h.held...); err != nil {
			return "commit: " + errText(err) + "\n"
		}
	}
	h.committed = true
	return ""
}

// commit commits the writes held, without Advance.
func (h *harness) commit() string {
	if h.committed || len(h.held)+len(h.heldCold) == 0 {
		return "nothing to commit"
	}
	if msg := h.commitHeld(); msg != "" {
		return msg
	}
	return fmt.Sprintf("committed %d writes", len(h.held)+len(h.heldCold))
}

// advance commits the writes held if need be, then advances.
func (h *harness) advance() string {
	var b strings.Builder
	if !h.committed && len(h.held)+len(h.heldCold) > 0 {
		b.WriteString(h.commit() + "\n")
	}
	h.eng.Advance()
	h.held, h.heldCold, h.heldCommits, h.committed = nil, nil, 0, false
	b.WriteString("advanced")
	return b.String()
}

// coldView is the cold store as the decisions read it, nil when none.
func (h *harness) coldView() core.View {
	if h.cold == nil {
		return nil
	}
	return view{h.cold}
}

// digest prints the number of the Store's keys and a hash of every key
// and value.
func (h *harness) digest() string {
	ctx := t0()
	keys, err := h.store.List(ctx, "")
	if err != nil {
		return "list: " + errText(err)
	}
	sum := sha256.New()
	for _, k := range keys {
		v, err := h.store.Get(ctx, k)
		if err != nil {
			return "get: " + errText(err)
		}
		fmt.Fprintf(sum, "%s\x00%d\x00", k, len(v))
		sum.Write(v)
	}
	return fmt.Sprintf("store: %d keys, sha256 %x", len(keys), sum.Sum(nil)[:8])
}

// get prints a stored value, or the lines of it the input lines look for.
func (h *harness) get(t *testing.T, td *datadriven.TestData) string {
	var key string
	td.ScanArgs(t, "key", &key)
	st := h.store
	if td.HasArg("cold") {
		st = h.cold
	}
	v, err := st.Get(t0(), key)
	if err != nil {
		return "get: " + errText(err)
	}
	if strings.TrimSpace(td.Input) == "" {
		return string(v)
	}
	return findLines(strings.Split(string(v), "\n"), td.Input)
}

// prompt prints, for each input line, the first line of the prompt of
// one of the last Ready's calls that contains it, or that none does.
func (h *harness) prompt(t *testing.T, td *datadriven.TestData) string {
	var role string
	var call int
	td.ScanArgs(t, "role", &role)
	td.ScanArgs(t, "call", &call)
	var text []string
	for _, r := range h.last.Calls {
		if string(r.Role) == role && r.Call == call {
			for _, m := range r.Messages {
				text = append(text, strings.Split(m.Content, "\n")...)
			}
		}
	}
	if text == nil {
		return fmt.Sprintf("prompt: the last Ready has no %s call %d", role, call)
	}
	return findLines(text, td.Input)
}

// findLines prints, for each line of want, the first of text that
// contains it, or that none does.
func findLines(text []string, want string) string {
	var b strings.Builder
	for _, w := range strings.Split(want, "\n") {
		if w = strings.TrimSpace(w); w == "" {
			continue
		}
		i := slices.IndexFunc(text, func(l string) bool { return strings.Contains(l, w) })
		if i < 0 {
			fmt.Fprintf(&b, "missing: %s\n", w)
			continue
		}
		fmt.Fprintf(&b, "found: %s\n", strings.TrimSpace(text[i]))
	}
	return b.String()
}

// events prints the events of the last input, of the kinds asked for.
func (h *harness) events(t *testing.T, td *datadriven.TestData) string {
	var kinds []string
	if arg, ok := td.Arg("kind"); ok {
		kinds = arg.Vals
	}
	var b strings.Builder
	for _, e := range h.last.Events {
		if len(kinds) > 0 && !slices.Contains(kinds, string(e.Kind)) {
			continue
		}
		b.WriteString(printEvent(e) + "\n")
	}
	if b.Len() == 0 {
		return "no events"
	}
	return b.String()
}

// question prints a pending question: title, options and the lines of
// its body the input lines look for.
func (h *harness) question(t *testing.T, td *datadriven.TestData) string {
	var id string
	td.ScanArgs(t, "id", &id)
	st := h.eng.Status()
	i := slices.IndexFunc(st.Pending, func(q question.Question) bool { return q.ID == id })
	if i < 0 {
		return "no pending question " + id
	}
	q := st.Pending[i]
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, round %d) %q\n", q.ID, q.Kind, q.Round, q.Title)
	for _, o := range q.Options {
		mark := ""
		if o.Key == q.Default {
			mark += "*"
		}
		if o.Recommended {
			mark += "!"
		}
		fmt.Fprintf(&b, "  %s%s: %s\n", o.Key, mark, o.Label)
	}
	if strings.TrimSpace(td.Input) != "" {
		b.WriteString(findLines(strings.Split(q.Body, "\n"), td.Input))
	}
	return b.String()
}
