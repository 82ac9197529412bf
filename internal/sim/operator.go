package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store/memory"
)

// answered is the pending set before an accepted answer, for the
// never-stuck check after the next advance.
type answered struct {
	pending  []refine.Question
	q        string
	progress string
	// live is the branch's count of answers given during runs then.
	live int
}

// progress sums up what a session has done: a run that changes none of
// it did nothing.
func progress(st refine.Status) string {
	return fmt.Sprint(st.Round, st.Phase, st.Calls, len(st.Rollbacks), len(st.Decisions), len(st.Convergence), st.Outcome)
}

// operate plays b from stop to stop until the session ends (or MaxStops).
func (s *simulation) operate(ctx context.Context, b *branch) {
	var last *answered
	failures := 0
	for n := 1; n <= s.opt.MaxStops; n++ {
		var st stop
		if b.per != nil && s.opt.on(string(MoveCrash)) && chance(b.per, 0.08) {
			st = s.crashAdvance(ctx, b)
		} else {
			st = b.advance(ctx)
		}
		if b.name == "main" {
			s.res.Stops++
		}
		s.reportLosses(b)
		status, err := b.sess.Status(ctx)
		if err != nil {
			s.violate(b, Errors, "status after stop %d: %v", n, err)
			return
		}
		b.logf("stop %d: %s (run said %s) round %d phase %q pending %v%s", n, status.Outcome, st.Outcome.Status, status.Round, status.Phase, pendingIDs(status.Pending), errSuffix(st.Err))
		s.checkOutcome(ctx, b, st, status)
		if b.name == "main" {
			for _, q := range status.Pending {
				s.res.Coverage["question:"+string(q.Kind)]++
			}
		}
		if last != nil && st.Err == nil && !st.Stepped && s.opt.stuckChecked(last.q, last.pending) {
			if now := pendingIDs(status.Pending); slices.Contains(now, last.q) && progress(status) == last.progress && b.live == last.live {
				s.violate(b, NeverStuck, "after answering %s and a run, the session paused with it still pending and nothing done (pending %v, round %d phase %q)", last.q, now, status.Round, status.Phase)
			}
		}
		last = nil
		if st.Err != nil {
			failures++
			if failures >= 3 {
				b.logf("giving up after %d failed runs in a row", failures)
				return
			}
			continue // FAILED is resumable: run again
		}
		failures = 0
		if b.per != nil {
			s.probe(ctx, b, status)
			s.perturb(ctx, b, status)
		}
		if st.Stepped {
			continue
		}
		var end bool
		last, end = s.decide(ctx, b, status)
		if end {
			return
		}
	}
	b.logf("stop limit %d reached", s.opt.MaxStops)
	b.cutShort = true
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return "; error: " + oneLine(err.Error())
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}

// current is the round a rollback would undo.
func current(st refine.Status) int {
	if st.Phase != "" {
		return st.Round + 1
	}
	return st.Round
}

// targets lists the rounds the session offers as rollback targets.
func targets(ctx context.Context, st refine.Store, status refine.Status) []int {
	keys, err := st.List(ctx, "")
	if err != nil {
		return nil
	}
	return rollback.AvailableTargets(current(status), keys)
}

// finished reports whether the session ended and asks nothing more.
func finished(status refine.Status) bool {
	return status.Outcome.Terminal() && len(status.Pending) == 0
}

// choice is a stop's decision.
type choice struct {
	move Move // MoveAnswer, MoveRollback, MoveApprove, MoveAbandon, or "" (end, or run on)
	end  bool
	q    refine.Question
	a    refine.Answer
	// rollback and approve requests.
	rollback refine.RollbackRequest
	ack      bool
}

// choose draws the decision at a stop whose session is status from rnd:
// answer a pending question, roll back, approve or abandon; at the end,
// sometimes a rollback that reopens the session.
func (s *simulation) choose(ctx context.Context, b *branch, rnd *rand.Rand, status refine.Status) choice {
	r := rnd.Float64()
	tg := targets(ctx, b.store, status)
	rollbackTo := func() choice {
		req := refine.RollbackRequest{To: tg[rnd.IntN(len(tg))], Reason: "sim: the operator rolls back"}
		if rnd.IntN(2) == 0 {
			req.Adjustments = []string{"sim: narrow each proposal to one mechanism"}
		}
		return choice{move: MoveRollback, rollback: req}
	}
	switch {
	case finished(status):
		if r < 0.2 && len(tg) > 0 && s.opt.on(string(MoveRollback)) {
			return rollbackTo()
		}
		return choice{end: true}
	case len(status.Pending) == 0:
		return choice{} // stopped with nothing to answer: run on
	case r < 0.05 && s.opt.on(string(MoveApprove)) && !status.Outcome.Terminal():
		return choice{move: MoveApprove, ack: rnd.IntN(2) == 0}
	case r < 0.08 && s.opt.on(string(MoveAbandon)) && !status.Outcome.Terminal():
		return choice{move: MoveAbandon}
	case r < 0.16 && len(tg) > 0 && s.opt.on(string(MoveRollback)):
		return rollbackTo()
	}
	q := status.Pending[rnd.IntN(len(status.Pending))]
	return choice{move: MoveAnswer, q: q, a: pickAnswer(rnd, q, s.sc.DefaultBias)}
}

// decide makes the stop's decision and carries it out. end says the
// session is over.
func (s *simulation) decide(ctx context.Context, b *branch, status refine.Status) (*answered, bool) {
	rnd, key := b.stopRand(status)
	c := s.choose(ctx, b, rnd, status)
	b.visits[key]++
	switch c.move {
	case MoveRollback:
		s.rollbackTo(ctx, b, c.rollback)
		return nil, false
	case MoveApprove:
		s.approve(ctx, b, c.ack)
		return nil, false
	case MoveAbandon:
		b.logf("abandon")
		if err := b.sess.Abandon(ctx, "sim: the operator gives up"); errors.Is(err, refine.ErrFinished) {
			s.finishedButPaused(ctx, b, err)
		} else if err != nil {
			s.violate(b, Errors, "Abandon: %v", err)
		}
		return nil, false
	case MoveAnswer:
	default:
		return nil, c.end
	}
	q, a := c.q, c.a
	if b.per != nil && s.opt.on(string(MoveReopen)) && chance(b.per, 0.15) {
		b.perturbed = append(b.perturbed, MoveReopen)
		b.logf("defer, close, reopen as another process")
		if err := b.open(ctx); err != nil {
			s.violate(b, Errors, "reopen to answer %s: %v", q.ID, err)
			return nil, true
		}
	}
	b.logf("answer %s with %q%s", q.ID, a.Key, textNote(a))
	if err := b.sess.Answer(ctx, q.ID, a); err != nil {
		s.violate(b, NeverStuck, "the offered answer %q to %s (%s) was refused: %v", a.Key, q.ID, q.Title, err)
		return nil, true
	}
	if isPause(q, a.Key) {
		return nil, false // the same question is offered again, as documented
	}
	return &answered{pending: status.Pending, q: q.ID, progress: progress(status), live: b.live}, false
}

func textNote(a refine.Answer) string {
	if a.Text == "" {
		return ""
	}
	return " + text"
}

// pickAnswer picks an offered option (the default with odds bias in 5,
// else any),
// with text where the option needs it and sometimes where it is allowed.
func pickAnswer(r draws, q refine.Question, bias int) refine.Answer {
	if len(q.Options) == 0 {
		if q.AllowText {
			return refine.Answer{Text: "sim: a free-text answer"}
		}
		return refine.Answer{}
	}
	i := r.IntN(len(q.Options))
	if r.IntN(5) < bias {
		if d := slices.IndexFunc(q.Options, func(o refine.Option) bool { return o.Key == q.Default }); d >= 0 {
			i = d
		}
	}
	return answerFor(r, q, q.Options[i].Key)
}

// answerFor answers q with key: text where the option needs it, and
// sometimes where text is allowed.
func answerFor(r draws, q refine.Question, key string) refine.Answer {
	a := refine.Answer{Key: key}
	switch {
	case needsText(q, key):
		a.Text = "sim: the operator's reason for " + key
	case q.AllowText && r != nil && r.IntN(4) == 0:
		a.Text = "sim: a note with the answer"
	}
	return a
}

// isPause reports whether key is q's "pause" option, which offers the
// same question again when the session resumes (documented: escalation,
// early termination).
func isPause(q refine.Question, key string) bool {
	o, ok := q.Option(key)
	return ok && (strings.HasPrefix(o.Label, "Pause") || strings.EqualFold(o.Key, "pause"))
}

func needsText(q refine.Question, key string) bool {
	return slices.ContainsFunc(q.TextRequired, func(k string) bool { return strings.EqualFold(k, key) })
}

// rollbackTo rolls back as req says (a target the session offered).
func (s *simulation) rollbackTo(ctx context.Context, b *branch, req refine.RollbackRequest) {
	b.logf("rollback to %d (adjustments %d)", req.To, len(req.Adjustments))
	rep, err := b.sess.Rollback(ctx, req)
	switch {
	case err == nil:
		b.logf("  rolled back %v, pending %v, decision %q", rep.Undone, pendingIDs(rep.Pending), rep.Decision)
	case errors.Is(err, refine.ErrRollbackLimit), errors.Is(err, refine.ErrDeferred), errors.Is(err, refine.ErrRollbackPending):
		// At the limit, or another rollback waits for its answer (#40:
		// a request other than the waiting one is refused).
		b.logf("  refused as documented: %v", oneLine(err.Error()))
	default:
		s.violate(b, RollbackTargets, "Rollback to offered target %d: %v", req.To, err)
	}
}

// approve approves; a refusal the design documents must change nothing.
func (s *simulation) approve(ctx context.Context, b *branch, ack bool) {
	before, _ := b.doc(ctx)
	b.logf("approve (acknowledge HIGH: %v)", ack)
	err := b.sess.Approve(ctx, refine.ApproveRequest{Note: "sim: good enough", AcknowledgeHigh: ack})
	switch {
	case err == nil:
	case errors.Is(err, refine.ErrFinished):
		s.finishedButPaused(ctx, b, err)
	case errors.Is(err, refine.ErrBlocked):
		b.logf("  refused as documented: %v", oneLine(err.Error()))
		if after, _ := b.doc(ctx); after != before {
			s.violate(b, NeverStuck, "a refused Approve changed the status:\n%s", lineDiff(before, after))
		}
	default:
		s.violate(b, Errors, "Approve: %v", err)
	}
}

// perturb makes at most one perturbation at a stop: export/import, a
// move to another store, or refused answers that must change nothing.
func (s *simulation) perturb(ctx context.Context, b *branch, status refine.Status) {
	r := b.per.Float64()
	switch {
	case r < 0.05 && s.opt.on(string(MoveExport)):
		s.exportMove(ctx, b, b.place.kind, MoveExport)
	case r < 0.08 && s.opt.on(string(MoveMove)):
		kinds := []StoreKind{Memory, FS, SQLite}
		kinds = slices.DeleteFunc(kinds, func(k StoreKind) bool { return k == b.place.kind })
		s.exportMove(ctx, b, kinds[b.per.IntN(len(kinds))], MoveMove)
	}
	if len(status.Pending) == 0 {
		return
	}
	q := status.Pending[b.per.IntN(len(status.Pending))]
	if s.opt.on(string(MoveBadKey)) && chance(b.per, 0.1) {
		s.refused(ctx, b, q, refine.Answer{Key: "zz-not-offered"}, "a key not offered")
	}
	if s.opt.on(string(MoveNoText)) && len(q.TextRequired) > 0 && chance(b.per, 0.3) {
		s.refused(ctx, b, q, refine.Answer{Key: q.TextRequired[0]}, "an option that needs text, without it")
	}
	if s.opt.on(string(MoveCaseKey)) && chance(b.per, 0.1) {
		s.caseProbe(ctx, b, q)
	}
}

// refused answers q with a, which must be refused with ErrInvalidAnswer
// and change nothing in the store.
func (s *simulation) refused(ctx context.Context, b *branch, q refine.Question, a refine.Answer, what string) {
	before, err := b.doc(ctx)
	if err != nil {
		s.violate(b, Errors, "status: %v", err)
		return
	}
	b.logf("probe: answer %s with %s (%q): must be refused", q.ID, what, a.Key)
	err = b.sess.Answer(ctx, q.ID, a)
	if !errors.Is(err, refine.ErrInvalidAnswer) {
		s.violate(b, NeverStuck, "answering %s with %s (%q) gave %v, want ErrInvalidAnswer", q.ID, what, a.Key, err)
	}
	if after, _ := b.doc(ctx); after != before {
		s.violate(b, NeverStuck, "a refused answer to %s changed the status:\n%s", q.ID, lineDiff(before, after))
	}
}

// caseProbe answers q with an offered key in another letter case: keys
// match exactly as offered, so it must be refused, changing nothing (a
// terminal canonicalizes what a person types before it gets here).
func (s *simulation) caseProbe(ctx context.Context, b *branch, q refine.Question) {
	for _, o := range q.Options {
		if v := swapCase(o.Key); v != o.Key {
			s.refused(ctx, b, q, answerFor(nil, q, v), "an offered key in another letter case")
			return
		}
	}
}

func swapCase(k string) string {
	var b strings.Builder
	for _, r := range k {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r - 'A' + 'a')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fork copies b's session into a memory store and opens it there, played
// by Run with no perturbation.
func (s *simulation) fork(ctx context.Context, b *branch, name string) (*branch, error) {
	m, err := snapshotStore(ctx, b.store)
	if err != nil {
		return nil, err
	}
	f := &branch{sim: s, name: b.name + "/" + name, driver: DriverRun, place: &place{kind: Memory, mem: m}, calls: &callLog{}, mix: s.quiet()}
	f.quirks, f.plain, f.benignOnly = b.quirks.clone(), b.plain, b.benignOnly // the roles go on as b's would
	if err := f.open(ctx); err != nil {
		return nil, fmt.Errorf("open the fork: %w", err)
	}
	return f, nil
}

// exportMove exports b's session, imports it into a new store of kind,
// checks the status is the same, and continues there.
func (s *simulation) exportMove(ctx context.Context, b *branch, kind StoreKind, m Move) {
	b.perturbed = append(b.perturbed, m)
	b.logf("%s: export, import into %s, continue there", m, kind)
	before, err := b.doc(ctx)
	if err != nil {
		s.violate(b, Errors, "status before export: %v", err)
		return
	}
	folder := memory.New()
	if err := exportTo(ctx, b.store, folder); err != nil {
		s.violate(b, RoundTrip, "%v", err)
		return
	}
	pl, err := s.newPlace(ctx, kind)
	if err != nil {
		s.violate(b, Errors, "make a %s store: %v", kind, err)
		return
	}
	st, err := pl.open(ctx)
	if err == nil {
		err = copyKeys(ctx, folder, st)
	}
	if err != nil {
		pl.close()
		s.violate(b, RoundTrip, "import into %s: %v", kind, err)
		return
	}
	after, err := statusDoc(ctx, st)
	if err != nil {
		pl.close()
		s.violate(b, RoundTrip, "status of the imported copy: %v", err)
		return
	}
	if after != before {
		s.violate(b, RoundTrip, "status --json differs after export/import into %s:\n%s", kind, lineDiff(before, after))
	}
	old := b.place
	b.place = pl
	old.close()
	if err := b.open(ctx); err != nil {
		s.violate(b, RoundTrip, "open the imported copy: %v", err)
	}
}

// crashAdvance plays to the next stop with a crash at a random commit:
// an uncrashed twin on a copy plays first and says how many commits
// there are; the branch then crashes at one of them, reopens as a new
// process, plays on, and must end where the twin did, having repeated
// at most the role calls in flight and none whose response was
// journaled.
func (s *simulation) crashAdvance(ctx context.Context, b *branch) stop {
	twin, err := s.fork(ctx, b, "crash-twin")
	if err != nil {
		s.violate(b, Errors, "fork for the crash: %v", err)
		return b.advance(ctx)
	}
	twin.driver, twin.mix, twin.decides, twin.visits = b.driver, b.mix, true, maps.Clone(b.visits)
	if err := twin.open(ctx); err != nil { // again, with the branch's roles
		s.violate(b, Errors, "open the crash twin: %v", err)
		return b.advance(ctx)
	}
	tw := twin.advance(ctx)
	n := twin.store.count()
	if n == 0 || tw.Err != nil {
		// Nothing to crash at; or the run fails (a role error): the
		// reopened process would meet the error its twin met, the
		// resumed one not.
		return b.advance(ctx)
	}
	b.perturbed = append(b.perturbed, MoveCrash)
	k := 1 + b.per.IntN(n)
	startCalls := len(b.calls.snapshot())
	base := b.store.count()
	b.store.failAt = base + k
	b.logf("crash at commit %d of the %d this run makes", k, n)
	visits := maps.Clone(b.visits) // the new process's operator answers again as it did
	st := b.advance(ctx)
	durable := b.store.count() - base
	if !b.store.crashed {
		s.violate(b, CrashSafe, "the run made fewer commits (%d) than its uncrashed twin (%d)", durable, n)
		return st
	}
	if st.Err == nil { // a best-effort commit may fail behind the error it follows
		s.violate(b, CrashSafe, "the crash at commit %d was not reported: run returned %v", k, st.Err)
	}
	crashedCalls, crashCount := len(b.calls.snapshot()), b.store.count()
	b.visits = visits
	if err := b.open(ctx); err != nil {
		s.violate(b, CrashSafe, "reopen after the crash at commit %d: %v", k, err)
		return stop{Err: err}
	}
	st = b.advance(ctx)
	if (st.Err == nil) != (tw.Err == nil) || st.Outcome.Status != tw.Outcome.Status || !slices.Equal(pendingIDs(st.Outcome.Pending), pendingIDs(tw.Outcome.Pending)) {
		s.violate(b, CrashSafe, "after the crash at commit %d and reopen the run stopped at %s %v (err %v); the uncrashed twin at %s %v (err %v)",
			k, st.Outcome.Status, pendingIDs(st.Outcome.Pending), st.Err, tw.Outcome.Status, pendingIDs(tw.Outcome.Pending), tw.Err)
	}
	got, _ := b.doc(ctx)
	want, _ := twin.doc(ctx)
	if got != want {
		s.violate(b, CrashSafe, "after the crash at commit %d and reopen, status --json differs from the uncrashed twin's (-twin +crashed):\n%s", k, lineDiff(want, got))
	}
	s.checkRepeats(b, twin, b.calls.snapshot()[startCalls:], crashedCalls-startCalls, crashCount, k)
	return st
}

type callKey struct {
	role          refine.RoleName
	call, attempt int
	err           bool
}

// checkRepeats compares the calls of a crashed-and-resumed run with its
// twin's: at most one extra per parallel worker, and none whose response
// returned before a commit that succeeded (it was journaled).
func (s *simulation) checkRepeats(b, twin *branch, calls []callRec, beforeCrash, crashCount, k int) {
	want := map[callKey]int{}
	for _, c := range twin.calls.snapshot() {
		want[callKey{c.Role, c.Call, c.Attempt, c.Err}]++
	}
	got := map[callKey]int{}
	var extra []string
	for _, c := range calls {
		key := callKey{c.Role, c.Call, c.Attempt, c.Err}
		got[key]++
		if got[key] <= want[key] || c.Err {
			continue // a transient failure before the repeat is part of it
		}
		extra = append(extra, fmt.Sprintf("%s call %d attempt %d", c.Role, c.Call, c.Attempt))
	}
	// A call repeated after the crash whose first response returned
	// before a commit that succeeded was journaled: it must not repeat.
	if s.sc.Settings.ParallelGaps == 1 {
		seen := map[callKey]callRec{}
		for _, c := range calls[:beforeCrash] {
			seen[callKey{c.Role, c.Call, c.Attempt, c.Err}] = c
		}
		for _, c := range calls[beforeCrash:] {
			key := callKey{c.Role, c.Call, c.Attempt, c.Err}
			if first, ok := seen[key]; ok && !c.Err && first.Commits < crashCount {
				s.violate(b, CrashSafe, "%s call %d (round %d attempt %d) was made again after the crash at commit %d though its response was followed by a successful commit", c.Role, c.Call, c.Round, c.Attempt, k)
			}
		}
	}
	if bound := max(1, s.sc.Settings.ParallelGaps); len(extra) > bound {
		s.violate(b, CrashSafe, "the crash at commit %d repeated %d role calls (%s), more than the %d in flight", k, len(extra), strings.Join(extra, ", "), bound)
	}
}

// lineDiff shows the lines of two texts that differ, briefly.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)) && len(out) < 12; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("  line %d: -%s\n           +%s", i+1, strings.TrimSpace(x), strings.TrimSpace(y)))
		}
	}
	return strings.Join(out, "\n")
}

// finishedButPaused reports a session that refuses Approve or Abandon as
// finished while its status says PAUSED with questions pending: those
// questions can never apply.
func (s *simulation) finishedButPaused(ctx context.Context, b *branch, err error) {
	st, _ := b.sess.Status(ctx)
	if !slices.ContainsFunc(st.Pending, func(q refine.Question) bool { return !askedWhenFinished(q) }) {
		return // a rollback dialog, the cleanup or the integration step's question waits: documented
	}
	s.violate(b, NeverStuck, "the session says %s with pending %v, but it is finished (%v): its questions can never apply", st.Outcome, pendingIDs(st.Pending), err)
}

// askedWhenFinished reports whether q is a question a finished session
// may ask: a rollback dialog (a rollback reopens it), the archive cleanup,
// or the integration step's escalation (DESIGN §16).
func askedWhenFinished(q refine.Question) bool {
	return q.Kind == refine.KindRollback || strings.HasPrefix(q.ID, "final-integration-")
}
