package refine_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/cockroachdb/datadriven"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// TestScript runs the interaction scripts under testdata/script: a
// session driven through its core's surface (Next, Advance, Deliver,
// Answer) one step at a time, as etcd raft's interaction tests drive
// RawNode, with each step's Ready printed. Regenerate the expected output
// with
//
//	go test . -run TestScript -rewrite
//
// The commands:
//
//	open [gaps=ID:SEV or gaps=(ID:SEV, …)] [max-rounds=N] [max-retries=N] [parallel=N]
//	    a new session on a fresh memory Store (fixed clock and IDs).
//	next
//	    Session.Next; prints the Ready: each write (kind, key, bytes), each
//	    call (role, call, round, attempt, gaps, the prompt's first line)
//	    and the outcome with its pending questions.
//	persist
//	    commits the writes Next handed out to the Store (no Advance).
//	advance
//	    persists them if not yet done, then Advance.
//	deliver role=R call=N [gen=resolve|revise|disagree|approve|issue] [issue=ID] [sev=S]
//	    Deliver to the call of the last Ready: the input block is the
//	    response, or gen builds a valid one with refinetest's builders.
//	answer id=Q key=K
//	    Session.Answer; the input block is the answer's text.
//	rollback to=N [reason=…] [option=K]
//	    Session.Rollback; each input line is an adjustment. With option,
//	    as `refine rollback --option K`: another process's Session whose
//	    Asker answers the rollback's first question with K (checked
//	    against the options it offers) and defers the others; the script's
//	    session is then opened again.
//	digest
//	    every key and value of the Store: their number and a hash, so
//	    that a script shows a step changed nothing.
//	crash
//	    drops the session: what was not committed to the Store is lost.
//	reopen
//	    Open on the Store, as a new process.
//	status
//	    Session.Status: outcome, round, phase, gaps, decisions, pending.
//	validation
//	    the validation log Status reports.
//	prompt role=R call=N
//	    for each input line, the first line of that call's prompt (of the
//	    last Ready) containing it, or "missing".
func TestScript(t *testing.T) {
	datadriven.Walk(t, "testdata/script", func(t *testing.T, path string) {
		h := &scriptHarness{ctx: context.Background()}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return h.run(t, td)
		})
	})
}

// scriptHarness is one script's session, its Store and the last Ready.
type scriptHarness struct {
	ctx   context.Context
	cfg   refine.Config
	store refine.Store
	s     *refine.Session
	// last is the last Ready; pending are the writes handed out by Next
	// and not yet committed (a Next refused with ErrNotPersisted hands
	// out none, and the earlier ones still wait).
	last    refine.Ready
	pending []store.Op
}

// run plays one command of a script and returns what it prints.
func (h *scriptHarness) run(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd != "open" && h.s == nil && td.Cmd != "reopen" {
		td.Fatalf(t, "%s: no session (open or reopen first)", td.Cmd)
	}
	switch td.Cmd {
	case "open":
		return h.open(t, td)
	case "next":
		r, err := h.s.Next(h.ctx, refine.Play{})
		h.last, h.pending = r, append(h.pending, r.Persist...)
		return printReady(r, err)
	case "persist":
		return h.persist()
	case "advance":
		var b strings.Builder
		if len(h.pending) > 0 {
			b.WriteString(h.persist())
		}
		if err := h.s.Advance(h.ctx); err != nil {
			return b.String() + "advance: " + scriptErr(err)
		}
		b.WriteString("advanced")
		return b.String()
	case "deliver":
		return h.deliver(t, td)
	case "answer":
		var id, key string
		td.ScanArgs(t, "id", &id)
		td.ScanArgs(t, "key", &key)
		if err := h.s.Answer(h.ctx, id, refine.Answer{Key: key, Text: td.Input}); err != nil {
			return scriptErr(err)
		}
		return "answered " + id + " with " + key
	case "rollback":
		return h.rollback(t, td)
	case "digest":
		return h.digest()
	case "crash":
		lost := len(h.pending)
		h.s, h.last, h.pending = nil, refine.Ready{}, nil
		return fmt.Sprintf("crashed: %d writes not persisted are lost", lost)
	case "reopen":
		s, err := refine.Open(h.ctx, h.cfg)
		if err != nil {
			return "open: " + scriptErr(err)
		}
		h.s, h.last, h.pending = s, refine.Ready{}, nil
		return h.status()
	case "status":
		return h.status()
	case "validation":
		return h.validation()
	case "prompt":
		return h.prompt(t, td)
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

// open starts a session as refinetest.Config does: a fixed clock, IDs
// and jitter, the small test spec, no integration step; its roles and
// asker are never called (Next hands the calls and questions out).
func (h *scriptHarness) open(t *testing.T, td *datadriven.TestData) string {
	var gaps []gap.Gap
	if td.HasArg("gaps") {
		arg, _ := td.Arg("gaps")
		for _, v := range arg.Vals {
			id, sev, ok := strings.Cut(v, ":")
			s, err := gap.ParseSeverity(sev)
			if !ok || err != nil {
				td.Fatalf(t, "gap %q: want ID:SEVERITY (%v)", v, err)
			}
			gaps = append(gaps, gap.Gap{ID: gap.ID(id), Title: "Gap " + id, Severity: s})
		}
	}
	unused := refinetest.Func(func(context.Context, refine.Request) (refine.Response, error) {
		return refine.Response{}, errors.New("script: a role was called; Next hands calls to the script")
	})
	h.cfg = refinetest.Config(unused, unused, refine.DeferAsker{}, gaps...)
	h.store = memory.New()
	h.cfg.Store = h.store
	for _, f := range []struct {
		arg string
		to  *int
	}{{"max-rounds", &h.cfg.MaxRounds}, {"max-retries", &h.cfg.MaxRetries}, {"parallel", &h.cfg.ParallelGaps}} {
		if td.HasArg(f.arg) {
			td.ScanArgs(t, f.arg, f.to)
		}
	}
	s, err := refine.New(h.ctx, h.cfg)
	if err != nil {
		return "open: " + scriptErr(err)
	}
	h.s, h.last, h.pending = s, refine.Ready{}, nil
	return h.status()
}

// persist commits the writes Next handed out to the Store, in one Commit.
func (h *scriptHarness) persist() string {
	if len(h.pending) == 0 {
		return "nothing to persist\n"
	}
	if err := h.store.Commit(h.ctx, h.pending...); err != nil {
		return "persist: " + scriptErr(err) + "\n"
	}
	n := len(h.pending)
	h.pending = nil
	return fmt.Sprintf("persisted %d writes\n", n)
}

// deliver hands the session a response to one of the last Ready's calls.
func (h *scriptHarness) deliver(t *testing.T, td *datadriven.TestData) string {
	var role string
	var call int
	td.ScanArgs(t, "role", &role)
	td.ScanArgs(t, "call", &call)
	req := refine.Request{Role: refine.RoleName(role), Call: call}
	for _, r := range h.last.Calls {
		if r.Role == req.Role && r.Call == call {
			req = r
		}
	}
	content := td.Input
	if td.HasArg("gen") {
		content = h.generate(t, td, req)
	}
	resp := refine.Response{Content: content, Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 50}}
	if err := h.s.Deliver(h.ctx, req, resp); err != nil {
		return scriptErr(err)
	}
	return fmt.Sprintf("delivered %s call %d (%d bytes)", role, call, len(content))
}

// generate builds a valid response for req with refinetest's builders:
// resolve (an Engineer output for the request's gaps), revise (a revision
// answering issue=), disagree (an output that disagrees with issue=),
// approve (a Reviewer output with no issues) or issue (a Reviewer output
// with one issue of severity sev=, HIGH by default).
func (h *scriptHarness) generate(t *testing.T, td *datadriven.TestData, req refine.Request) string {
	var kind string
	td.ScanArgs(t, "gen", &kind)
	if len(req.Gaps) == 0 {
		td.Fatalf(t, "gen=%s: the last Ready has no %s call %d", kind, req.Role, req.Call)
	}
	switch kind {
	case "resolve":
		return refinetest.EngineerOutput(req.Gaps...)
	case "revise":
		var issue string
		td.ScanArgs(t, "issue", &issue)
		return refinetest.Revision(req.Gaps[0], issue, "")
	case "disagree":
		var issue string
		td.ScanArgs(t, "issue", &issue)
		return refinetest.EngineerOutput(req.Gaps...) + "\n" + refinetest.Disagree(issue, "the retry bound is missing", "")
	case "approve":
		return refinetest.ReviewerOutput(req.Round, req.Gaps)
	case "issue":
		sev := gap.High
		if td.HasArg("sev") {
			var name string
			td.ScanArgs(t, "sev", &name)
			var err error
			if sev, err = gap.ParseSeverity(name); err != nil {
				td.Fatalf(t, "sev=%s: %v", name, err)
			}
		}
		return refinetest.ReviewerOutput(req.Round, req.Gaps, refinetest.Issue{Severity: sev, Summary: "the retry bound is missing"})
	}
	td.Fatalf(t, "gen=%s: want resolve, revise, disagree, approve or issue", kind)
	return ""
}

// rollback asks the session to roll back and prints its report and status.
func (h *scriptHarness) rollback(t *testing.T, td *datadriven.TestData) string {
	var to int
	td.ScanArgs(t, "to", &to)
	req := refine.RollbackRequest{To: to, Reason: "the script asks", Trigger: rollback.TriggerUser}
	if td.HasArg("reason") {
		td.ScanArgs(t, "reason", &req.Reason)
	}
	for _, l := range strings.Split(td.Input, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			req.Adjustments = append(req.Adjustments, l)
		}
	}
	s := h.s
	if td.HasArg("option") {
		var key string
		td.ScanArgs(t, "option", &key)
		cfg := h.cfg
		cfg.Asker = &firstOption{key: key}
		var err error
		if s, err = refine.Open(h.ctx, cfg); err != nil {
			return "open: " + scriptErr(err)
		}
	}
	rep, err := s.Rollback(h.ctx, req)
	if s != h.s {
		// That process is done: the script's session reads the Store again.
		var oerr error
		if h.s, oerr = refine.Open(h.ctx, h.cfg); oerr != nil {
			return "reopen: " + scriptErr(oerr)
		}
	}
	switch {
	case err != nil:
		return scriptErr(err)
	case rep.Cancelled:
		return "cancelled: " + rep.Decision + "\n" + h.status()
	case len(rep.Pending) > 0:
		return "waits for an answer\n" + h.status()
	}
	return fmt.Sprintf("rolled back to round %d: undone %v, archives %v\n%s", rep.Round, rep.Undone, rep.Archives, h.status())
}

// firstOption answers the first question it is asked with key, checked
// as `refine rollback --option` checks it, and defers the others.
type firstOption struct {
	key  string
	used bool
}

func (a *firstOption) Ask(_ context.Context, q refine.Question) (refine.Answer, error) {
	if a.used {
		return refine.Answer{}, refine.ErrDeferred
	}
	a.used = true
	ans := refine.Answer{Key: a.key}
	if err := q.Check(ans); err != nil {
		return refine.Answer{}, fmt.Errorf("option: %w", err)
	}
	return ans, nil
}

// digest prints the number of the Store's keys and a hash of every key
// and value.
func (h *scriptHarness) digest() string {
	keys, err := h.store.List(h.ctx, "")
	if err != nil {
		return "list: " + scriptErr(err)
	}
	sum := sha256.New()
	for _, k := range keys {
		v, err := h.store.Get(h.ctx, k)
		if err != nil {
			return "get: " + scriptErr(err)
		}
		fmt.Fprintf(sum, "%s\x00%d\x00", k, len(v))
		sum.Write(v)
	}
	return fmt.Sprintf("store: %d keys, sha256 %x", len(keys), sum.Sum(nil)[:8])
}

// status prints what Status reports that a script checks.
func (h *scriptHarness) status() string {
	st, err := h.s.Status(h.ctx)
	if err != nil {
		return "status: " + scriptErr(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s round %d phase %q, %d calls", st.Outcome, st.Round, st.Phase, st.Calls)
	if len(st.Rollbacks) > 0 {
		fmt.Fprintf(&b, ", %d rollbacks", len(st.Rollbacks))
	}
	b.WriteString("\n")
	for _, g := range st.Gaps {
		fmt.Fprintf(&b, "  %s %s %s\n", g.ID, g.Severity, g.State)
	}
	for _, d := range st.Decisions {
		issue := d.Issue
		if issue == "" {
			issue = "-"
		}
		fmt.Fprintf(&b, "  decision %s %s %s\n", d.ID, issue, d.Option)
	}
	for _, q := range st.Pending {
		b.WriteString(printQuestion(q))
	}
	return b.String()
}

// prompt prints, for each input line, the first line of the prompt of
// one of the last Ready's calls that contains it, or that none does.
func (h *scriptHarness) prompt(t *testing.T, td *datadriven.TestData) string {
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
		td.Fatalf(t, "prompt: the last Ready has no %s call %d", role, call)
	}
	var b strings.Builder
	for _, want := range strings.Split(td.Input, "\n") {
		if want = strings.TrimSpace(want); want == "" {
			continue
		}
		i := slices.IndexFunc(text, func(l string) bool { return strings.Contains(l, want) })
		if i < 0 {
			fmt.Fprintf(&b, "missing: %s\n", want)
			continue
		}
		fmt.Fprintf(&b, "found: %s\n", strings.TrimSpace(text[i]))
	}
	return b.String()
}

// validation prints the session's validation log.
func (h *scriptHarness) validation() string {
	st, err := h.s.Status(h.ctx)
	if err != nil {
		return "status: " + scriptErr(err)
	}
	var b strings.Builder
	for _, v := range st.Validation {
		fmt.Fprintf(&b, "round %d %s attempt %d %s %s: %s\n", v.Round, v.Role, v.Attempt, v.Tier, v.Result, v.Message)
	}
	return b.String()
}

// printReady prints a Ready as the scripts expect it.
func printReady(r refine.Ready, err error) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error: %s\n", scriptErr(err))
	}
	if len(r.Persist) > 0 {
		fmt.Fprintf(&b, "persist: %d writes\n", len(r.Persist))
		for _, op := range r.Persist {
			b.WriteString("  " + printOp(op) + "\n")
		}
	}
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "call: %s call %d round %d attempt %d gaps %v\n  %s\n", c.Role, c.Call, c.Round, c.Attempt, c.Gaps, promptLine(c))
	}
	o := r.Outcome
	fmt.Fprintf(&b, "outcome: %s round %d", o.Status, o.Round)
	if o.Reason != "" && o.Status != refine.StatusRunning {
		fmt.Fprintf(&b, " (%s)", o.Reason)
	}
	b.WriteString("\n")
	for _, q := range o.Pending {
		b.WriteString(printQuestion(q))
	}
	return b.String()
}

// printOp names a write's kind, key and size.
func printOp(op store.Op) string {
	switch op.Kind {
	case store.OpPut:
		return fmt.Sprintf("put %s (%d bytes)", op.Key, len(op.Value))
	case store.OpAppend:
		return fmt.Sprintf("append %s (%d bytes)", op.Key, len(op.Value))
	case store.OpDelete:
		return "delete " + op.Key
	case store.OpCopy:
		return fmt.Sprintf("copy %s from %s", op.Key, op.From)
	}
	return fmt.Sprintf("op %d %s", op.Kind, op.Key)
}

// printQuestion prints a pending question: ID, kind, title, option keys
// (the default marked *).
func printQuestion(q refine.Question) string {
	keys := make([]string, 0, len(q.Options))
	for _, o := range q.Options {
		k := o.Key
		if k == q.Default {
			k += "*"
		}
		keys = append(keys, k)
	}
	return fmt.Sprintf("pending: %s (%s) %q [%s]\n", q.ID, q.Kind, q.Title, strings.Join(keys, " "))
}

// promptLine is the first line with a word in it of the call's last
// message: what this call asks, after the stable prefix (system text,
// spec, decisions), and past banner rules.
func promptLine(r refine.Request) string {
	if len(r.Messages) == 0 {
		return "(no prompt)"
	}
	for _, l := range strings.Split(r.Messages[len(r.Messages)-1].Content, "\n") {
		if strings.IndexFunc(l, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) >= 0 {
			return strings.TrimSpace(l)
		}
	}
	return "(no words in the prompt)"
}

// scriptErr is an error's message, with its sentinel's name when it wraps
// one a script checks for.
func scriptErr(err error) string {
	for _, s := range []struct {
		name string
		err  error
	}{
		{"ErrNotPersisted", refine.ErrNotPersisted}, {"ErrUnknownCall", refine.ErrUnknownCall},
		{"ErrFinished", refine.ErrFinished}, {"ErrCorrupt", refine.ErrCorrupt},
	} {
		if errors.Is(err, s.err) {
			return s.name + ": " + err.Error()
		}
	}
	return err.Error()
}
