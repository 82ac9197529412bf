package core

import (
	"errors"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// The integration step's role calls: journaled under final/, numbered as
// the role's next call, reused after a crash, made by the driver like
// every role call (see integrate.go).

// integrationAttempt is an integration-step role call, played and
// validated.
type integrationAttempt struct {
	// content is the response, capped at MaxOutputBytes+1.
	content string
	vr      validate.Result
	rec     state.AttemptRec
	// ops journal a fresh response.
	ops []store.Op
}

// integrationCall makes attempt k of role in the integration step and
// validates its response with check (stepCall).
func (s *Engine) integrationCall(role llm.RoleName, k int, msgs []llm.Message, stable int, gaps []gap.ID, check func(string) validate.Result) (integrationAttempt, error) {
	in := s.st.Integration
	promptKey, respKey := state.FinalAttemptKeys(role, k)
	return s.stepCall(stepCallSpec{role: role, counter: role, k: k, round: in.Round, msgs: msgs, stable: stable, gaps: gaps,
		promptKey: promptKey, respKey: respKey, where: fmt.Sprintf("integration %s attempt %d", role, k), phase: state.PhaseIntegration,
		prior: in.RunAttempts(role), check: check, extend: func() { extendBudget(in, role) }})
}

// stepCallSpec is one call of a step outside the rounds (the integration
// step, discovery): its role, how its calls are numbered (counter: the
// role, or the discovery calls), its journal keys and how it is read.
type stepCallSpec struct {
	role, counter      llm.RoleName
	k, round           int
	msgs               []llm.Message
	stable             int
	gaps               []gap.ID
	promptKey, respKey string
	where              string
	phase              state.Phase
	discovery          bool
	prior              []state.AttemptRec
	check              func(string) validate.Result
	extend             func()
}

// stepCall makes the call c and validates its response with c.check:
// the prompt journaled and durable before the call, a journaled response
// reused, the driver asked to make the call (errNeedCalls). The attempt's
// usage is recorded and its end reported to observers; a free re-ask
// (freeReask) calls c.extend.
func (s *Engine) stepCall(c stepCallSpec) (integrationAttempt, error) {
	role, k, where, msgs, respKey := c.role, c.k, c.where, c.msgs, c.respKey
	plan := attemptPlan{Role: role, K: k, where: where, msgs: msgs, started: s.at(), Phase: c.phase}
	plan.req = llm.Request{Role: role, Round: c.round, Attempt: k, Call: s.st.Usage.CallIndex(c.counter, respKey),
		Gaps: slices.Clone(c.gaps), Messages: msgs, MaxTokens: nextMaxTokens(s.cfg.MaxTokens, s.cfg.TokensCap(), c.prior), Stable: c.stable, Discovery: c.discovery}
	if b, err := s.get(respKey); err == nil {
		content := string(b)
		plan.journaled, plan.journaledFinish = &content, s.journaledFinish(respKey)
	} else if !errors.Is(err, store.ErrNotFound) {
		return integrationAttempt{}, fmt.Errorf("%s: read response journal: %w", where, err)
	} else if res, ok := s.ext.take(plan.req); ok {
		plan.delivered = &res
	} else {
		// The driver makes the call; its prompt, and everything staged
		// before it, is durable before the call: a crash during the call
		// repeats this call only.
		s.stage(store.Put(c.promptKey, []byte(renderPrompt(where, msgs))))
		s.keepPlan(plan)
		return integrationAttempt{}, ErrNeedCalls
	}
	s.startPlan(&plan)
	res := plan.result()
	if res.Err != nil && errors.Is(res.Err, llm.ErrNoResponse) && s.st.Usage.NextCall[string(c.counter)] == plan.req.Call {
		// No response is no call: the number goes to the role's next call
		// (a session rolled back and replayed again numbers its calls as
		// its recording does).
		s.st.Usage.NextCall[string(c.counter)]--
		delete(s.st.Usage.InFlight, respKey)
	}
	if res.Err != nil {
		s.emit(Event{Kind: EventAttemptFinished, Role: role, Call: plan.req.Call, Attempt: k, Phase: c.phase, Elapsed: s.at().Sub(plan.started),
			FailureType: validate.ExecutionError, Message: res.Err.Error(), Err: res.Err})
		return integrationAttempt{}, res.Err
	}
	at := integrationAttempt{content: res.Resp.Content}
	finish := res.Resp.FinishReason
	rec := state.AttemptRec{N: k, Calls: res.Calls, Model: res.Resp.Model, MaxTokens: plan.req.MaxTokens, FinishReason: finish}
	if plan.journaled == nil {
		rec.Usage, rec.UsageEstimated = callUsage(res.Resp.Usage, msgs, at.content, s.tok)
		at.content = capOutput(at.content, s.cfg.MaxOutputBytes)
		at.ops = append(at.ops, journalResponse(respKey, at.content, finish, s.cfg.MaxOutputBytes)...)
	}
	if validate.ContextExceeded(finish) {
		err := contextExceeded(where, finish, msgs, s.tok)
		s.emit(Event{Kind: EventAttemptFinished, Role: role, Call: plan.req.Call, Attempt: k, Phase: c.phase, Elapsed: s.at().Sub(plan.started),
			FailureType: validate.ExecutionError, Message: err.Error(), Err: err})
		return integrationAttempt{}, err
	}
	// The verdict, the usage, and the attempt's end for observers.
	vr := readAnswer(at.content, finish, s.cfg.MaxOutputBytes, c.check)
	rec.At, rec.Success, rec.FailureType, rec.Tier = s.at(), vr.Success, vr.FailureType, string(vr.Tier)
	rec.Line, rec.Message, rec.Warnings = vr.Line, vr.Message, vr.Warnings
	rec.Normalized = state.NormalizedQuirks(vr.Normalized)
	if rec.Free = !vr.Success && freeReask(rec, c.prior, s.cfg.TokensCap()); rec.Free {
		c.extend() // re-asked without spending the retry budget
	}
	s.st.Usage.Add(role, rec.Usage, rec.Calls)
	delete(s.st.Usage.InFlight, respKey)
	if !vr.Success {
		s.emit(Event{Kind: EventValidationFailed, Role: role, Attempt: k, Phase: c.phase, FailureType: rec.FailureType, Message: rec.Message})
	}
	s.emit(Event{Kind: EventAttemptFinished, Role: role, Call: plan.req.Call, Attempt: k, Phase: c.phase,
		Elapsed: s.at().Sub(plan.started), FailureType: rec.FailureType, Message: rec.Message, Model: rec.Model,
		FinishReason: res.Resp.FinishReason, AttemptUsage: rec.Usage, Success: rec.Success})
	at.vr, at.rec = vr, rec
	return at, nil
}

// callUsage is a fresh response's usage: as the provider reported it, or
// estimated (true) with tok from the prompt and the content.
func callUsage(reported llm.Usage, msgs []llm.Message, content string, tok exemplar.Tokenizer) (llm.Usage, bool) {
	if reported != (llm.Usage{}) {
		return reported, false
	}
	var u llm.Usage
	for _, m := range msgs {
		u.PromptTokens += tok.Count(m.Content)
	}
	u.CompletionTokens = tok.Count(content)
	return u, true
}

// extendBudget gives role one more attempt in the current run: a free
// re-ask (an answer the token limit cut below the cap, a refusal not right after one).
func extendBudget(in *state.IntegrationState, role llm.RoleName) {
	if role == llm.Reviewer {
		in.ReviewerBudget++
		return
	}
	in.EngineerBudget++
}
