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
// validates its response with check: the prompt journaled and durable
// before the call, a journaled response reused, the driver asked to make
// the call (errNeedCalls). The attempt's usage is recorded and its end
// reported to observers.
func (s *Engine) integrationCall(role llm.RoleName, k int, msgs []llm.Message, stable int, gaps []gap.ID, check func(string) validate.Result) (integrationAttempt, error) {
	in := s.st.Integration
	promptKey, respKey := state.FinalAttemptKeys(role, k)
	where := fmt.Sprintf("integration %s attempt %d", role, k)
	plan := attemptPlan{Role: role, K: k, where: where, msgs: msgs, started: s.at(), Phase: state.PhaseIntegration}
	prior := in.RunAttempts(role)
	plan.req = llm.Request{Role: role, Round: in.Round, Attempt: k, Call: s.st.Usage.CallIndex(role, respKey),
		Gaps: slices.Clone(gaps), Messages: msgs, MaxTokens: nextMaxTokens(s.cfg.MaxTokens, s.cfg.TokensCap(), prior), Stable: stable}
	if b, err := s.get(respKey); err == nil {
		c := string(b)
		plan.journaled, plan.journaledFinish = &c, s.journaledFinish(respKey)
	} else if !errors.Is(err, store.ErrNotFound) {
		return integrationAttempt{}, fmt.Errorf("%s: read response journal: %w", where, err)
	} else if res, ok := s.ext.take(plan.req); ok {
		plan.delivered = &res
	} else {
		// The driver makes the call; its prompt, and everything staged
		// before it, is durable before the call: a crash during the call
		// repeats this call only.
		s.stage(store.Put(promptKey, []byte(renderPrompt(where, msgs))))
		s.keepPlan(plan)
		return integrationAttempt{}, ErrNeedCalls
	}
	s.startPlan(&plan)
	res := plan.result()
	if res.Err != nil && errors.Is(res.Err, llm.ErrNoResponse) && s.st.Usage.NextCall[string(role)] == plan.req.Call {
		// No response is no call: the number goes to the role's next call
		// (a session rolled back and replayed again numbers its calls as
		// its recording does).
		s.st.Usage.NextCall[string(role)]--
		delete(s.st.Usage.InFlight, respKey)
	}
	if res.Err != nil {
		s.emit(Event{Kind: EventAttemptFinished, Role: role, Call: plan.req.Call, Attempt: k, Phase: state.PhaseIntegration, Elapsed: s.at().Sub(plan.started),
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
		s.emit(Event{Kind: EventAttemptFinished, Role: role, Call: plan.req.Call, Attempt: k, Phase: state.PhaseIntegration, Elapsed: s.at().Sub(plan.started),
			FailureType: validate.ExecutionError, Message: err.Error(), Err: err})
		return integrationAttempt{}, err
	}
	// The verdict, the usage, and the attempt's end for observers.
	vr := readAnswer(at.content, finish, s.cfg.MaxOutputBytes, check)
	rec.At, rec.Success, rec.FailureType, rec.Tier = s.at(), vr.Success, vr.FailureType, string(vr.Tier)
	rec.Line, rec.Message, rec.Warnings = vr.Line, vr.Message, vr.Warnings
	rec.Normalized = state.NormalizedQuirks(vr.Normalized)
	if rec.Free = !vr.Success && freeReask(rec, prior, s.cfg.TokensCap()); rec.Free {
		extendBudget(in, role) // re-asked without spending the retry budget
	}
	s.st.Usage.Add(role, rec.Usage, rec.Calls)
	delete(s.st.Usage.InFlight, respKey)
	if !vr.Success {
		s.emit(Event{Kind: EventValidationFailed, Role: role, Attempt: k, Phase: state.PhaseIntegration, FailureType: rec.FailureType, Message: rec.Message})
	}
	s.emit(Event{Kind: EventAttemptFinished, Role: role, Call: plan.req.Call, Attempt: k, Phase: state.PhaseIntegration,
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
