package refinetest

import (
	"context"
	"fmt"
	"hash/fnv"
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
	// byCall answers a call made again (after a crash, a transport retry)
	// exactly as the first time; transient marks calls that already
	// failed transiently once.
	byCall    map[callKey]refine.Response
	transient map[callKey]bool
	// held is the wrapped Role's answer to a step's attempt that Quirky
	// made fail: the step's next attempt gets it, without a call.
	held map[stepKey]refine.Response
	// skipped counts the wrapped Role's calls skipped so far, per role,
	// and per step (reset when a step starts again at attempt 1).
	skipped     map[refine.RoleName]int
	stepSkipped map[stepKey]int
	// refused marks steps that had their refusal.
	refused map[stepKey]bool
	log     []QuirkRecord
}

type callKey struct {
	role refine.RoleName
	call int
}

type stepKey struct {
	role  refine.RoleName
	round int
	gaps  string
}

// Quirky wraps role so that its answers come back as real models write
// them, at cfg's rates, from its own random stream (cfg.Seed, the role and
// the call number), so a run is reproducible and the wrapped Role's own
// randomness is untouched.
//
// A benign quirk changes the form only: a session must read the same
// gaps, issues and disagreements, and make the same calls. A failing one
// (a defect, a truncation, a refusal) costs the session one call: Quirky
// never makes two consecutive attempts of one step fail and gives a step
// at most one refusal, and the attempt after a failing one gets the
// wrapped Role's own answer to the failed attempt, without calling it
// again. The wrapped Role sees the calls it would see without Quirky: its
// requests carry Call and Attempt numbers with Quirky's extra calls taken
// out, so a scripted or replayed Role stays in step. A transient error
// costs a transport retry, no call of the wrapped Role.
//
// The numbering assumes one call at a time per role. With calls made
// concurrently (ParallelGaps > 1) the shift depends on their order: give
// such a Role benign and transient rates only, or wrap a Role that does
// not read Request.Call.
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
		byCall: map[callKey]refine.Response{}, transient: map[callKey]bool{}, held: map[stepKey]refine.Response{},
		skipped: map[refine.RoleName]int{}, stepSkipped: map[stepKey]int{}, refused: map[stepKey]bool{}}
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

// Respond implements refine.Role.
func (q *QuirkyRole) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	ck := callKey{req.Role, req.Call}
	sk := stepKey{req.Role, req.Round, gapList(req)}
	q.mu.Lock()
	if resp, ok := q.byCall[ck]; ok {
		q.mu.Unlock()
		return resp, nil
	}
	if req.Attempt <= 1 {
		q.stepSkipped[sk], q.refused[sk] = 0, false // the step starts (again)
		delete(q.held, sk)
	}
	if resp, ok := q.held[sk]; ok {
		// The attempt after a failing one: the wrapped Role's own answer
		// to it, which it is not asked for again.
		delete(q.held, sk)
		q.skipped[req.Role]++
		q.stepSkipped[sk]++
		q.byCall[ck] = resp
		q.mu.Unlock()
		return resp, nil
	}
	d := q.drawFor(ck)
	if d.kind == "transient" && !q.transient[ck] {
		q.transient[ck] = true
		q.logLocked(req, d.kind, "503", "")
		q.mu.Unlock()
		return refine.Response{}, &refine.TransientError{Err: fmt.Errorf("quirky: %s call %d: 503 service unavailable", req.Role, req.Call)}
	}
	if d.kind == "refuse" && q.refused[sk] {
		d.kind = "" // one refusal a step
	}
	inner := req
	inner.Call -= q.skipped[req.Role]
	inner.Attempt -= q.stepSkipped[sk]
	q.mu.Unlock()

	resp, err := q.inner.Respond(ctx, inner)
	if err != nil {
		return resp, err
	}
	out, name, ft := q.apply(d, req.Role, resp)

	q.mu.Lock()
	defer q.mu.Unlock()
	if prev, ok := q.byCall[ck]; ok {
		return prev, nil // a concurrent repeat of the call got there first
	}
	switch d.kind {
	case "truncate", "refuse", "defect":
		if ft != "" {
			q.held[sk] = resp
			if d.kind == "refuse" {
				q.refused[sk] = true
			}
		}
	}
	if name != "" {
		q.logLocked(req, d.kind, name, ft)
	}
	q.byCall[ck] = out
	return out, nil
}

// apply makes resp, the wrapped Role's answer to role, into the answer
// the draw d says: unchanged, with a benign quirk, a defect, cut, or
// refused. name is the quirk applied ("" for none) and ft the failure it
// must cause.
func (q *QuirkyRole) apply(d draw, role refine.RoleName, resp refine.Response) (out refine.Response, name string, ft validate.FailureType) {
	out = resp
	if strings.TrimSpace(resp.Content) == "" {
		return out, "", "" // nothing to perturb: the answer fails as it is
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

func gapList(req refine.Request) string {
	ids := make([]string, len(req.Gaps))
	for i, g := range req.Gaps {
		ids[i] = string(g)
	}
	return strings.Join(ids, ",")
}
