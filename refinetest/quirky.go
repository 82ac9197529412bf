package refinetest

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/quirk"
	"github.com/refine-spec/refine/validate"
)

// QuirkRates are the chances, per call, of each way a real model's
// answer differs from a scripted one. They add up to at most 1: a call
// gets at most one.
type QuirkRates struct {
	// Benign is the chance of one quirk of form a reading must accept: the
	// answer in a ```markdown fence, shifted or numbered headings, a
	// `<think>` block, "**Confidence: HIGH**", Unicode hyphens in IDs, ….
	Benign float64
	// Defect is the chance of one defect validation must catch (a header
	// gone, an issue without its ID, an unterminated fence, …).
	Defect float64
	// Truncate is the chance that the answer is cut at a random point with
	// the finish reason "length", as a token limit cuts it.
	Truncate float64
	// Refuse is the chance of a refusal: a refusal text, or an empty
	// answer with the provider's refusal signal.
	Refuse float64
	// Transient is the chance of a transient error (a 503) before the
	// answer; the driver's transport retry gets the answer.
	Transient float64
}

// RealisticRates are rates seen from chat models asked for refine's
// formats: three answers in ten with one benign quirk, 3 % cut by the
// token limit, 2 % refused, 2 % transient errors, no defects.
var RealisticRates = QuirkRates{Benign: 0.30, Truncate: 0.03, Refuse: 0.02, Transient: 0.02}

// QuirkConfig configures Quirky.
type QuirkConfig struct {
	// Seed seeds Quirky's own random stream: the same seed, role and calls
	// give the same quirks, whatever the wrapped Role does.
	Seed uint64
	// Rates are the chances of each quirk per call.
	Rates QuirkRates
}

// QuirkRecord is one quirk Quirky applied.
type QuirkRecord struct {
	Role refine.RoleName
	// Call, Round and Attempt are the request's.
	Call, Round, Attempt int
	// Kind is "benign", "defect", "truncate", "refuse" or "transient";
	// Name the quirk's name ("wrapper-fence", …), and FailureType the
	// failure validation must report for a failing one.
	Kind        string
	Name        string
	FailureType validate.FailureType
}

// QuirkyRole is a Role that answers as its wrapped Role does, but writes
// like a real model: at the configured rates it applies benign quirks of
// form, defects, truncation, refusals and transient errors (see Quirky).
// It is safe for concurrent use.
type QuirkyRole struct {
	inner refine.Role
	cfg   QuirkConfig
	// benign and defects are the transforms drawn from (less those
	// Quirky draws by themselves: cuts, refusals).
	benign  []quirk.Quirk
	defects []quirk.Defect

	mu sync.Mutex
	// transient marks the calls that already failed transiently in this
	// process (see ForgetTransient); logged the calls whose quirk is in
	// log. Neither changes an answer: what a call gets is a function of
	// the seed, the call and the wrapped Role's answer alone.
	transient map[callKey]bool
	logged    map[callKey]bool
	// errored marks the calls the wrapped Role failed: they do not fail
	// by Quirky's doing (see fails).
	errored map[callKey]bool
	log     []QuirkRecord
}

type callKey struct {
	role refine.RoleName
	call int
}

// Quirky wraps role so that its answers come back as real models write
// them, at cfg's rates, from its own random stream (cfg.Seed, the role and
// the call number), so a run is reproducible and the wrapped Role's own
// randomness is untouched.
//
// A benign quirk changes the form only: a session must read the same
// gaps, issues and disagreements, and make the same calls. A failing one
// (a defect, a truncation, a refusal) costs the session one call: Quirky
// never makes two consecutive calls of a role fail, and the call after a
// failing one asks the wrapped Role the failed call's request again. The
// wrapped Role sees the calls it would see without Quirky: its requests
// carry Call and Attempt numbers with Quirky's failed calls taken out, so
// a scripted or replayed Role that answers by its request stays in step.
// A transient error costs a transport retry, no call of the wrapped Role.
//
// What a call gets depends only on cfg, the call's role and number, the
// wrapped Role's answer and which earlier calls the wrapped Role failed
// with an error: a session reopened, forked (Clone) or replayed gets the
// same answers for the same calls. The numbering assumes one call at
// a time per role, a step's attempts being its role's latest calls. With
// calls made concurrently (ParallelGaps > 1) give such a Role benign and
// transient rates only, or wrap a Role that does not read Request.Call.
func Quirky(role refine.Role, cfg QuirkConfig) *QuirkyRole {
	var defects []quirk.Defect
	for _, d := range quirk.Defects() {
		switch d.Name {
		case quirk.NameCutByTokenLimit, quirk.NameProviderRefusal, quirk.NameRefusal:
		default:
			defects = append(defects, d)
		}
	}
	return &QuirkyRole{inner: role, cfg: cfg, benign: quirk.Benign(), defects: defects,
		transient: map[callKey]bool{}, logged: map[callKey]bool{}, errored: map[callKey]bool{}}
}

// Clone returns a QuirkyRole with q's configuration over role that
// remembers q's quirks so far (Applied) and the transient errors met: a
// copy of a session (a fork) gets from it what it would get from q.
func (q *QuirkyRole) Clone(role refine.Role) *QuirkyRole {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := Quirky(role, q.cfg)
	c.transient, c.logged, c.errored, c.log = maps.Clone(q.transient), maps.Clone(q.logged), maps.Clone(q.errored), slices.Clone(q.log)
	return c
}

// ForgetTransient forgets which calls already failed transiently, so that
// each fails once more when it is made again: what a test of a session
// taken up by a new process wants, as a transient error is met by each
// process that makes the call.
func (q *QuirkyRole) ForgetTransient() {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.transient)
}

// Applied returns the quirks applied so far, in the order the calls came.
func (q *QuirkyRole) Applied() []QuirkRecord {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.log)
}

// draw is what Quirky does to one call.
type draw struct {
	kind string
	rnd  *rand.Rand
}

// drawFor draws the quirk of call k from the call's own stream.
func (q *QuirkyRole) drawFor(k callKey) draw {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", q.cfg.Seed, k.role, k.call)
	seed := h.Sum64()
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	x, r := rnd.Float64(), q.cfg.Rates
	kind := ""
	for _, c := range []struct {
		name string
		p    float64
	}{{"transient", r.Transient}, {"truncate", r.Truncate}, {"refuse", r.Refuse}, {"defect", r.Defect}, {"benign", r.Benign}} {
		if x < c.p {
			kind = c.name
			break
		}
		x -= c.p
	}
	return draw{kind: kind, rnd: rnd}
}

// fails reports, for calls 1..k of role, whether each fails by Quirky's
// doing: its draw is a cut, a refusal or a defect, the call before did
// not fail, and the wrapped Role did not fail it first (an error leaves
// nothing to perturb: the session meets the error as it would without
// Quirky). fails[0] is unused.
func (q *QuirkyRole) fails(role refine.RoleName, k int) []bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]bool, k+1)
	for j := 1; j <= k; j++ {
		ck := callKey{role, j}
		out[j] = !out[j-1] && isFailing(q.drawFor(ck).kind) && !q.errored[ck]
	}
	return out
}

func isFailing(kind string) bool { return kind == "truncate" || kind == "refuse" || kind == "defect" }

func count(fails []bool, from, to int) int {
	n := 0
	for j := max(from, 1); j <= to && j < len(fails); j++ {
		if fails[j] {
			n++
		}
	}
	return n
}

// Respond implements refine.Role.
func (q *QuirkyRole) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	ck := callKey{req.Role, req.Call}
	d := q.drawFor(ck)
	if d.kind == "transient" {
		q.mu.Lock()
		first := !q.transient[ck]
		q.transient[ck] = true
		if first && !q.logged[ck] {
			// Once a call, though each process meets it (ForgetTransient).
			q.logged[ck] = true
			q.logLocked(req, d.kind, "503", "")
		}
		q.mu.Unlock()
		if first {
			return refine.Response{}, &refine.TransientError{Err: fmt.Errorf("quirky: %s call %d: 503 service unavailable", req.Role, req.Call)}
		}
	}
	fail := false
	inner := req
	if req.Call > 0 {
		fails := q.fails(req.Role, req.Call)
		fail = fails[req.Call]
		// The failed calls before this one, and those among the step's
		// earlier attempts (its role's latest calls), are Quirky's own.
		inner.Call -= count(fails, 1, req.Call-1)
		if req.Attempt > 1 {
			inner.Attempt -= count(fails, req.Call-req.Attempt+1, req.Call-1)
		}
	}
	if !fail && isFailing(d.kind) {
		d.kind = "" // the call after a failing one gets the answer as it is
	}
	resp, err := q.inner.Respond(ctx, inner)
	if err != nil {
		q.mu.Lock()
		q.errored[ck] = true
		q.mu.Unlock()
		return resp, err
	}
	out, name, ft := q.apply(d, req.Role, resp)
	if fail && ft == "" {
		// Nothing of the answer to cut or break (it is empty, or no defect
		// fits it): the provider refuses, so the call fails as drawn.
		out = refine.Response{FinishReason: "refusal", Usage: resp.Usage}
		name, ft = quirk.NameProviderRefusal, validate.Refusal
	}
	if name != "" {
		q.mu.Lock()
		if !q.logged[ck] {
			q.logged[ck] = true
			q.logLocked(req, d.kind, name, ft)
		}
		q.mu.Unlock()
	}
	return out, nil
}

// apply makes resp, the wrapped Role's answer to role, into the answer
// the draw d says: unchanged, with a benign quirk, a defect, cut, or
// refused. name is the quirk applied ("" for none) and ft the failure it
// must cause.
func (q *QuirkyRole) apply(d draw, role refine.RoleName, resp refine.Response) (out refine.Response, name string, ft validate.FailureType) {
	out = resp
	if strings.TrimSpace(resp.Content) == "" {
		return out, "", "" // nothing to perturb
	}
	switch d.kind {
	case "benign":
		var qs []quirk.Quirk
		for _, qk := range q.benign {
			if qk.For(role) {
				qs = append(qs, qk)
			}
		}
		if qk, text, ok := pick(qs, resp.Content, d.rnd); ok {
			out.Content = text
			return out, qk.Name, ""
		}
	case "defect":
		var qs []quirk.Quirk
		want := map[string]validate.FailureType{}
		for _, dk := range q.defects {
			if dk.For(role) {
				qs = append(qs, dk.Quirk)
				want[dk.Name] = dk.Want
			}
		}
		if qk, text, ok := pick(qs, resp.Content, d.rnd); ok {
			out.Content = text
			return out, qk.Name, want[qk.Name]
		}
	case "truncate":
		out.Content, out.FinishReason = quirk.Truncate(resp.Content, d.rnd), "length"
		out.Usage.CompletionTokens = max(1, resp.Usage.CompletionTokens*len(out.Content)/max(1, len(resp.Content)))
		return out, quirk.NameCutByTokenLimit, validate.Truncated
	case "refuse":
		if d.rnd.IntN(2) == 0 {
			out.Content, out.FinishReason = "", "refusal"
			return out, quirk.NameProviderRefusal, validate.Refusal
		}
		for _, dk := range quirk.Defects() {
			if dk.Name == quirk.NameRefusal {
				out.Content, _ = dk.Apply(resp.Content, d.rnd)
				out.FinishReason = "stop"
				return out, quirk.NameRefusal, validate.Refusal
			}
		}
	}
	return out, "", ""
}

// pick applies a quirk drawn from qs to text, trying the others in turn
// when the drawn one does not apply (the text has nothing for it).
func pick(qs []quirk.Quirk, text string, rnd *rand.Rand) (quirk.Quirk, string, bool) {
	if len(qs) == 0 {
		return quirk.Quirk{}, "", false
	}
	start := rnd.IntN(len(qs))
	for i := range qs {
		qk := qs[(start+i)%len(qs)]
		if out, ok := qk.Apply(text, rnd); ok && out != text {
			return qk, out, true
		}
	}
	return quirk.Quirk{}, "", false
}

func (q *QuirkyRole) logLocked(req refine.Request, kind, name string, ft validate.FailureType) {
	q.log = append(q.log, QuirkRecord{Role: req.Role, Call: req.Call, Round: req.Round, Attempt: req.Attempt, Kind: kind, Name: name, FailureType: ft})
}
