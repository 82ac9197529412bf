package core

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/validate"
)

// ErrNeedCalls stops a Next at the role calls it needs made; run turns it
// into Ready.Calls.
var ErrNeedCalls = errors.New("role calls needed")

// CallID names a role call: the role and its session-wide call number.
type CallID struct {
	Role llm.RoleName
	Call int
}

// ExternalCalls are the role calls and answers that come from outside
// the decisions: the calls the last Ready asked for with the attempts
// they were planned for, the results handed back for them, and which
// answers an Immediate asker gave.
type ExternalCalls struct {
	Needed    []llm.Request
	Delivered map[CallID]RoleResult
	// Plans are the attempts whose calls were asked for, kept so that the
	// attempt goes on where it stopped when its result comes back.
	Plans map[CallID]keptPlan
	// Asked are the questions the steps asked since the last Ready: the
	// run's Asker is asked them (Ready.Ask).
	Asked []question.Question
	// Auto marks the questions an Immediate asker answered: their answers
	// are recorded as automatic.
	Auto map[string]bool
	// AtOnce says the run's Asker answers at once (an Immediate asker):
	// a question then needs no commit of its own to be durable before it
	// is asked.
	AtOnce bool
}

// keptPlan is an attempt whose call is outside, and when it started.
type keptPlan struct {
	Started time.Time
	Plan    attemptPlan
}

// NewExternalCalls returns an empty set of calls and answers.
func NewExternalCalls() *ExternalCalls {
	return &ExternalCalls{Delivered: map[CallID]RoleResult{}, Plans: map[CallID]keptPlan{}, Auto: map[string]bool{}}
}

// take returns the result delivered for req, if any, and forgets it;
// otherwise it records req as needed.
func (e *ExternalCalls) take(req llm.Request) (RoleResult, bool) {
	id := CallID{req.Role, req.Call}
	if res, ok := e.Delivered[id]; ok {
		delete(e.Delivered, id)
		return res, true
	}
	e.Needed = append(e.Needed, req)
	return RoleResult{}, false
}

// startPlan starts the attempt of plan: the one kept when its call was
// asked for goes on (its start time), or a new one starts now.
func (s *Engine) startPlan(plan *attemptPlan) {
	id := CallID{plan.req.Role, plan.req.Call}
	if kp, ok := s.ext.Plans[id]; ok {
		delete(s.ext.Plans, id)
		plan.started = kp.Started
		return
	}
	s.emit(plan.startEvent())
}

// resume returns the plan of the attempt whose call (role, call) was
// asked for and is delivered, as it was planned then, with its result:
// the attempt goes on where it stopped, without building its prompt
// again.
func (e *ExternalCalls) resume(role llm.RoleName, call int) (attemptPlan, bool) {
	id := CallID{role, call}
	kp, asked := e.Plans[id]
	res, delivered := e.Delivered[id]
	if !asked || !delivered || kp.Plan.msgs == nil {
		return attemptPlan{}, false
	}
	delete(e.Plans, id)
	delete(e.Delivered, id)
	plan := kp.Plan
	plan.started, plan.needed, plan.delivered = kp.Started, false, &res
	return plan, true
}

// keepPlan keeps plan, whose call the Ready asks for, and reports its
// attempt started.
func (s *Engine) keepPlan(plan attemptPlan) {
	id := CallID{plan.req.Role, plan.req.Call}
	if _, ok := s.ext.Plans[id]; ok {
		return
	}
	s.emit(plan.startEvent())
	s.ext.Plans[id] = keptPlan{Started: plan.started, Plan: plan}
}

// endPlans ends the attempts whose calls were asked for and will not be
// delivered, with err (what stopped the session).
func (s *Engine) endPlans(err error) {
	ids := slices.SortedFunc(maps.Keys(s.ext.Plans), func(a, b CallID) int {
		return cmp.Or(strings.Compare(string(a.Role), string(b.Role)), cmp.Compare(a.Call, b.Call))
	})
	for _, id := range ids {
		kp := s.ext.Plans[id]
		delete(s.ext.Plans, id)
		p := kp.Plan
		s.emit(Event{Kind: EventAttemptFinished, Role: p.Role, Call: p.req.Call, Attempt: p.K, Gap: p.Part, ExampleTier: p.Example.Tier,
			Phase: p.Phase, Elapsed: s.now.Sub(kp.Started), FailureType: validate.ExecutionError, Message: err.Error(), Err: err})
	}
}
