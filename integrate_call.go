package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// The integration step's role calls: journaled under final/, numbered as
// the role's next call, reused after a crash, made by Next's caller in its
// mode (see integrate.go).

// integrationCallResult is an integration-step role call, not yet validated.
type integrationCallResult struct {
	plan      attemptPlan
	res       roleResult
	usage     Usage
	estimated bool
	ops       []Op
}

// integrationCall makes attempt k of role in the integration step: the
// prompt journaled and durable before the call, a journaled response
// reused, Next's caller asked to make the call in its mode. It returns the
// response, capped at MaxOutputBytes+1, with the ops journaling it.
func (s *Session) integrationCall(ctx context.Context, role RoleName, k int, msgs []Message, stable int, gaps []gap.ID) (string, integrationCallResult, error) {
	in := s.st.Integration
	promptKey, respKey := finalAttemptKeys(role, k)
	where := fmt.Sprintf("integration %s attempt %d", role, k)
	plan := attemptPlan{role: role, k: k, where: where, msgs: msgs, started: s.now()}
	plan.req = Request{Role: role, Round: in.Round, Attempt: k, Call: s.st.Usage.callIndex(role, respKey),
		Gaps: slices.Clone(gaps), Messages: msgs, MaxTokens: s.cfg.MaxTokens, Stable: stable}
	if b, err := s.get(ctx, respKey); err == nil {
		c := string(b)
		plan.journaled = &c
	} else if !errors.Is(err, ErrNotFound) {
		return "", integrationCallResult{}, fmt.Errorf("%s: read response journal: %w", where, err)
	} else if s.external() {
		resp, ok := s.takeDelivered(plan.req)
		if !ok {
			s.stage(Put(promptKey, []byte(renderPrompt(where, msgs))))
			return "", integrationCallResult{}, errNeedCalls
		}
		plan.delivered = &resp
	} else {
		// The prompt, and everything staged before it, is durable before
		// the call: a crash during the call repeats this call only.
		s.stage(Put(promptKey, []byte(renderPrompt(where, msgs))))
		if err := s.flush(ctx); err != nil {
			return "", integrationCallResult{}, fmt.Errorf("%s: journal prompt: %w", where, err)
		}
	}
	plan.ctx = s.tel.beginScope(ctx, Event{Kind: EventAttemptStarted, Role: role, Attempt: k, Phase: PhaseIntegration})
	res := s.callRole(plan, s.jitter(), s.noteTransport)
	call := integrationCallResult{plan: plan, res: res}
	if res.err != nil && errors.Is(res.err, ErrNoResponse) && s.st.Usage.NextCall[string(role)] == plan.req.Call {
		// No response is no call: the number goes to the role's next call
		// (a session rolled back and replayed again numbers its calls as
		// its recording does).
		s.st.Usage.NextCall[string(role)]--
		delete(s.st.Usage.InFlight, respKey)
	}
	if res.err != nil {
		s.tel.endScope(plan.ctx, Event{Kind: EventAttemptFinished, Role: role, Attempt: k, Phase: PhaseIntegration, Elapsed: s.now().Sub(plan.started),
			FailureType: validate.ExecutionError, Message: res.err.Error(), Err: res.err})
		return "", call, res.err
	}
	content := res.resp.Content
	if plan.journaled == nil {
		call.usage = res.resp.Usage
		if call.usage == (Usage{}) {
			for _, m := range msgs {
				call.usage.PromptTokens += s.tok.Count(m.Content)
			}
			call.usage.CompletionTokens = s.tok.Count(content)
			call.estimated = true
		}
		content = s.capOutput(content)
		journaled := content
		if len(journaled) > s.cfg.MaxOutputBytes {
			journaled = journaled[:s.cfg.MaxOutputBytes]
		}
		call.ops = append(call.ops, Put(respKey, []byte(journaled)))
	}
	return content, call, nil
}

// settleIntegrationCall records a validated integration-step call: its
// usage, and the attempt's end for observers.
func (s *Session) settleIntegrationCall(call integrationCallResult, vr validate.Result) attemptRec {
	plan := call.plan
	rec := attemptRec{N: plan.k, At: s.now(), Success: vr.Success, FailureType: vr.FailureType, Tier: string(vr.Tier),
		Line: vr.Line, Message: vr.Message, Warnings: vr.Warnings, Usage: call.usage, Calls: call.res.calls,
		UsageEstimated: call.estimated, Model: call.res.resp.Model}
	s.st.Usage.add(plan.role, rec.Usage, rec.Calls)
	_, respKey := finalAttemptKeys(plan.role, plan.k)
	delete(s.st.Usage.InFlight, respKey)
	if !vr.Success {
		s.tel.emit(Event{Kind: EventValidationFailed, Role: plan.role, Attempt: plan.k, Phase: PhaseIntegration, FailureType: rec.FailureType, Message: rec.Message})
	}
	s.tel.endScope(plan.ctx, Event{Kind: EventAttemptFinished, Role: plan.role, Attempt: plan.k, Phase: PhaseIntegration,
		Elapsed: s.now().Sub(plan.started), FailureType: rec.FailureType, Message: rec.Message, Model: rec.Model,
		FinishReason: call.res.resp.FinishReason, AttemptUsage: rec.Usage, Success: rec.Success})
	return rec
}
