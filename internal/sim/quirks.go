package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/validate"
)

// Real models, not scripts (#38): with Options.Quirks a branch's roles
// write like chat models (refinetest.Quirky over the scripted roles), and
// two more invariants hold. No silent loss: an answer the validators
// accept leaves no ID unread (validate.Unread). Same reading: the seed
// played without quirks ends with the same gaps, decisions, conflicts and
// outcome, with each cut, refused or transiently failed answer costing
// exactly one more call.

// The invariants of #38.
const (
	// SilentLoss: a validated answer left an ID unread.
	SilentLoss Invariant = "loss"
	// SameReading: the seed played with and without quirks ended
	// differently, or the quirks cost another number of calls.
	SameReading Invariant = "quirks"
)

// quirkRoles are a branch's Quirky roles: made once per branch, so a
// crash, a reopen or an export keeps what they injected (a model's
// behaviour does not restart with the process), each over the scripted
// role the branch's latest open built.
type quirkRoles struct {
	mu      sync.Mutex
	current map[refine.RoleName]refine.Role
	quirky  map[refine.RoleName]*refinetest.QuirkyRole
	// losses are the unread IDs found in accepted answers, reported at
	// the next stop.
	losses []string
}

// quirked returns the Role the session of branch b calls for name:
// scripted itself without quirks, else the branch's Quirky role over it.
func (b *branch) quirked(name refine.RoleName, scripted refine.Role) refine.Role {
	s := b.sim
	if b.plain || s.opt.Quirks == nil {
		return scripted
	}
	q := b.quirks
	if q == nil {
		q = &quirkRoles{current: map[refine.RoleName]refine.Role{}, quirky: map[refine.RoleName]*refinetest.QuirkyRole{}}
		b.quirks = q
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.current[name] = scripted
	if r, ok := q.quirky[name]; ok {
		// A new process (this is its Config): a call made again fails
		// transiently again, as the scripted roles' own errors do.
		r.ForgetTransient()
		return lossChecked{q: q, role: r}
	}
	rates := *s.opt.Quirks
	// The scripted roles fail transiently themselves (Mix.Transient), and
	// a quirk's transient error counts in Status.Calls only once its
	// call's result is committed, so the stops' contexts would differ from
	// the plain twin's: Quirky's own transient errors are tested in
	// refinetest, not here.
	rates.Transient = 0
	if b.benignOnly || name == refine.Engineer && s.sc.Settings.ParallelGaps > 1 {
		// Calls made at once shift the wrapped role's numbering in their
		// order (refinetest.Quirky): benign quirks and transient errors only.
		rates.Truncate, rates.Refuse, rates.Defect = 0, 0, 0
	}
	qr := refinetest.Quirky(q.forward(name), refinetest.QuirkConfig{Seed: hashOf(s.sc.Seed, "quirks", string(name)), Rates: rates})
	q.quirky[name] = qr
	return lossChecked{q: q, role: qr}
}

// clone returns the quirk roles of a fork of the branch: each starts
// where q's stands, over the fork's scripted roles.
func (q *quirkRoles) clone() *quirkRoles {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	c := &quirkRoles{current: map[refine.RoleName]refine.Role{}, quirky: map[refine.RoleName]*refinetest.QuirkyRole{}}
	for name, r := range q.quirky {
		c.quirky[name] = r.Clone(c.forward(name))
	}
	return c
}

// forward is the Role a Quirky role wraps: the scripted role of name the
// branch's latest open built.
func (q *quirkRoles) forward(name refine.RoleName) refine.Role {
	return refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		q.mu.Lock()
		r := q.current[name]
		q.mu.Unlock()
		return r.Respond(ctx, req)
	})
}

// lossChecked validates every answer its role gives as the session will
// read it and records an ID the reading leaves unread.
type lossChecked struct {
	q    *quirkRoles
	role refine.Role
}

func (l lossChecked) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	resp, err := l.role.Respond(ctx, req)
	if err != nil || resp.Content == "" {
		return resp, err
	}
	opt := validate.Options{FinishReason: resp.FinishReason}
	if req.Role == refine.Reviewer {
		opt.Round = req.Round
	}
	res, verr := validate.Validate(gap.Role(req.Role), resp.Content, opt)
	if verr == nil && res.Success {
		if unread := validate.Unread(res); len(unread) > 0 {
			l.q.mu.Lock()
			l.q.losses = append(l.q.losses, fmt.Sprintf("%s call %d: %s", req.Role, req.Call, strings.Join(unread, "; ")))
			l.q.mu.Unlock()
		}
	}
	return resp, err
}

// reportLosses turns the unread IDs found since the last stop into
// violations.
func (s *simulation) reportLosses(b *branch) {
	if b.quirks == nil {
		return
	}
	b.quirks.mu.Lock()
	losses := b.quirks.losses
	b.quirks.losses = nil
	b.quirks.mu.Unlock()
	for _, l := range losses {
		s.violate(b, SilentLoss, "an accepted answer left an ID unread: %s", l)
	}
}

// quirkCalls is how many calls the branch's quirks added: one for each
// cut, refused or otherwise failing answer.
func (b *branch) quirkCalls() int {
	if b.quirks == nil {
		return 0
	}
	b.quirks.mu.Lock()
	defer b.quirks.mu.Unlock()
	n := 0
	for _, r := range b.quirks.quirky {
		for _, a := range r.Applied() {
			if a.FailureType != "" {
				n++
			}
		}
	}
	return n
}

// quirkLog lists what the branch's quirks did, for a violation's message.
func (b *branch) quirkLog() []string {
	if b.quirks == nil {
		return nil
	}
	b.quirks.mu.Lock()
	defer b.quirks.mu.Unlock()
	var out []string
	for _, name := range []refine.RoleName{refine.Engineer, refine.Reviewer} {
		if r := b.quirks.quirky[name]; r != nil {
			for _, a := range r.Applied() {
				out = append(out, fmt.Sprintf("%s call %d (round %d attempt %d): %s %s", a.Role, a.Call, a.Round, a.Attempt, a.Kind, a.Name))
			}
		}
	}
	return out
}

// reading is what a session read and decided, without how many calls or
// tokens it took: what the same seed must end with, with or without
// quirks.
func reading(st refine.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s after round %d\n", st.Outcome, st.Round)
	for _, g := range st.Gaps {
		fmt.Fprintf(&b, "gap %s %s %s\n", g.ID, g.Severity, g.State)
	}
	for _, d := range st.Decisions {
		fmt.Fprintf(&b, "decision %s %s: %s\n", d.ID, d.Option, d.Decision)
	}
	for _, c := range st.Conflicts {
		fmt.Fprintf(&b, "conflict %s %s %s\n", c.IssueID, c.Type, c.Status)
	}
	for _, r := range st.Rollbacks {
		fmt.Fprintf(&b, "rollback %d to %d\n", r.Round, r.Target)
	}
	return b.String()
}

// sameReading plays the seed's plain twin (the same driver, no quirk, no
// perturbation) and holds to it a twin with the benign quirks: the same
// reading, decisions and calls. twin, played with every quirk and no
// perturbation, is held to it too when it read the same: then each cut
// or refused answer cost exactly one more call. (A retry's prompt says
// why the answer before it failed, and a role may answer a truncation's
// notice otherwise than a format error's, so with failing quirks the
// reading may differ.)
func (s *simulation) sameReading(ctx context.Context, twin *branch) {
	if s.opt.Quirks == nil || !s.opt.on(string(SameReading)) || twin == nil || twin.cutShort {
		return
	}
	if s.sc.Settings.ParallelGaps > 1 {
		return // Run settles parallel calls in completion order
	}
	plain, err := s.playWith(ctx, "plain-"+string(twin.driver), twin.driver, Memory, false, s.mix, quirksNone)
	if err != nil {
		s.violate(twin, Errors, "play the plain twin: %v", err)
		return
	}
	if plain.cutShort {
		return
	}
	want := reading(plain.finalSt)
	benign := twin
	if twin.quirkCalls() > 0 {
		if reading(twin.finalSt) == want {
			s.checkQuirkCalls(twin, plain)
		}
		if benign, err = s.playWith(ctx, "benign-"+string(twin.driver), twin.driver, Memory, false, s.mix, quirksBenign); err != nil {
			s.violate(twin, Errors, "play the benign twin: %v", err)
			return
		}
		if benign.cutShort {
			return
		}
	}
	if got := reading(benign.finalSt); want != got {
		s.violate(benign, SameReading, "with benign quirks the session read or decided otherwise (-plain +quirky):\n%s\nquirks:\n  %s\nplain history:\n  %s",
			lineDiff(want, got), strings.Join(benign.quirkLog(), "\n  "), strings.Join(shorten(plain.hist), "\n  "))
		return
	}
	s.checkQuirkCalls(benign, plain)
}

// checkQuirkCalls holds q, which read as plain did, to plain's calls plus
// one for each failing quirk.
func (s *simulation) checkQuirkCalls(q, plain *branch) {
	if extra := q.quirkCalls(); q.finalSt.Calls != plain.finalSt.Calls+extra {
		s.violate(q, SameReading, "the quirky session made %d calls, the plain one %d, and the quirks account for %d\nquirks:\n  %s",
			q.finalSt.Calls, plain.finalSt.Calls, extra, strings.Join(q.quirkLog(), "\n  "))
	}
}
