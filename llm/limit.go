package llm

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"
)

// Limiter caps the number of Role calls in flight. One Limiter can wrap
// several Roles (an Engineer and a Reviewer on the same backend, or the Roles
// of several concurrent sessions) so that they share a single limit. It is
// safe for concurrent use.
type Limiter struct {
	n   int
	sem *semaphore.Weighted
}

// NewLimiter returns a Limiter that lets at most n calls run at once.
// It panics if n < 1: a limit of zero would block every call forever, so
// callers taking n from user input (a --parallel flag) must validate it.
func NewLimiter(n int) *Limiter {
	if n < 1 {
		panic(fmt.Sprintf("llm.NewLimiter: limit %d < 1; pass at least 1", n))
	}
	return &Limiter{n: n, sem: semaphore.NewWeighted(int64(n))}
}

// Limit returns role wrapped so that at most n of its calls are in flight at
// once, across every caller of the returned Role. It is
// NewLimiter(n).Wrap(role); use a [Limiter] to share one limit across Roles.
func Limit(role Role, n int) Role {
	return NewLimiter(n).Wrap(role)
}

// Wrap returns role wrapped so that its calls count against l. A call waits
// for a free slot first; if ctx is done while it waits, Respond returns the
// context's error (wrapped, not transient) without calling role.
//
// The returned Role implements [Resumer] by forwarding to role when role
// implements it, and doing nothing otherwise.
func (l *Limiter) Wrap(role Role) Role {
	if role == nil {
		panic("llm.Limiter.Wrap: nil Role")
	}
	return &limited{l: l, inner: role}
}

// Limit returns the number of calls l lets run at once.
func (l *Limiter) Limit() int { return l.n }

type limited struct {
	l     *Limiter
	inner Role
}

// Respond waits for a free slot, then calls the wrapped Role.
func (r *limited) Respond(ctx context.Context, req Request) (Response, error) {
	if err := r.l.sem.Acquire(ctx, 1); err != nil {
		return Response{}, fmt.Errorf("llm: %s call for round %d attempt %d abandoned while waiting for one of %d backend slots: %w",
			req.Role, req.Round, req.Attempt, r.l.n, err)
	}
	defer r.l.sem.Release(1)
	return r.inner.Respond(ctx, req)
}

// Resume forwards to the wrapped Role if it implements [Resumer].
func (r *limited) Resume(role RoleName, calls int) {
	if rs, ok := r.inner.(Resumer); ok {
		rs.Resume(role, calls)
	}
}

// Resumer is implemented by Roles that number their calls per role, such as
// replay and record: replay answers the n-th call of a role with its n-th
// file, record writes the n-th answer to the n-th file. A session resumed in
// a new process must tell them how many calls each role already made, or
// they would start again from file 1.
//
// Resume sets the number of calls already made for role; the next call is
// number calls+1. The engine calls it on Open, before the first Respond.
type Resumer interface {
	Resume(role RoleName, calls int)
}
