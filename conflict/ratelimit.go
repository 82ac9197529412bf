package conflict

import (
	"cmp"
	"fmt"
	"slices"
)

// Limits are the DISAGREE rate limits of §3.
type Limits struct {
	// RoundRate: more than this share of a round's HIGH/CRITICAL issues
	// disagreed with warns the user (0.5; exactly 50% does not warn).
	RoundRate float64 `json:"round_rate"`
	// SessionRate over the last SessionRounds rounds raises the
	// systematic alert (0.4 over 3).
	SessionRate   float64 `json:"session_rate"`
	SessionRounds int     `json:"session_rounds"`
	// MaxPerRound: more DISAGREE blocks than this in one round block the
	// round (5; six block, five do not).
	MaxPerRound int `json:"max_per_round"`
}

// defaultLimits returns §3's limits: 50%, 40% over 3 rounds, 5 per round.
func defaultLimits() Limits {
	return Limits{RoundRate: 0.5, SessionRate: 0.4, SessionRounds: 3, MaxPerRound: 5}
}

// validate checks that rates lie in [0, 1] and counts are positive.
func (l Limits) validate() error {
	switch {
	case l.RoundRate < 0 || l.RoundRate > 1:
		return fmt.Errorf("conflict: DISAGREE round rate %v is outside [0, 1]", l.RoundRate)
	case l.SessionRate < 0 || l.SessionRate > 1:
		return fmt.Errorf("conflict: DISAGREE session rate %v is outside [0, 1]", l.SessionRate)
	case l.SessionRounds < 1:
		return fmt.Errorf("conflict: DISAGREE session window %d must be at least 1 round", l.SessionRounds)
	case l.MaxPerRound < 0:
		return fmt.Errorf("conflict: DISAGREE limit per round %d must not be negative", l.MaxPerRound)
	}
	return nil
}

// rateRecord is one round of DISAGREE history, §3's (round, disagree, total).
type rateRecord struct {
	Round int `json:"round"`
	// Disagreed: distinct HIGH/CRITICAL issues disagreed with; Total: the
	// HIGH/CRITICAL issues the round answered.
	Disagreed int `json:"disagreed"`
	Total     int `json:"total"`
	// Submitted: DISAGREE blocks written, any severity.
	Submitted int `json:"submitted"`
}

// RateHistory is the session's DISAGREE history, one record per round in
// round order.
type RateHistory struct {
	Records []rateRecord `json:"records"`
	// Alerted is the round of the last systematic alert (0: none). A new
	// systematic alert needs a window of rounds all after it, so the same
	// window never raises the alert twice.
	Alerted int `json:"alerted,omitempty"`
}

// RateInput is one round's DISAGREE usage.
type RateInput struct {
	round int
	// highCritical are the HIGH/CRITICAL issues the round answered
	// (overrides applied), for the count and the warning's list.
	highCritical []Issue
	// disagreed are the issue IDs disagreed with: explicit conflicts
	// (exact or soft) and converted implicit ones, as in §9's Phase 2.
	disagreed []string
	// submitted is ExplicitResult.Submitted.
	submitted int
}

// RateInputFor builds a round's RateInput from its issues (overrides
// applied), its conflicts (any type; DOWNGRADED ones do not count) and the
// number of DISAGREE blocks written.
func RateInputFor(round int, issues []Issue, conflicts []Conflict, submitted int) RateInput {
	in := RateInput{round: round, submitted: submitted}
	seen := map[string]bool{}
	for _, is := range issues {
		if is.Severity.AtLeastHigh() && !seen[is.ID] {
			seen[is.ID] = true
			in.highCritical = append(in.highCritical, is)
		}
	}
	for _, c := range conflicts {
		if c.Status != statusDowngraded && !slices.Contains(in.disagreed, c.IssueID) {
			in.disagreed = append(in.disagreed, c.IssueID)
		}
	}
	return in
}

// rateKind is the action a rate check asks for (§3).
type rateKind string

// Rate check actions.
const (
	RateBlock      rateKind = "BLOCK_ROUND"
	rateWarn       rateKind = "WARN_USER"
	rateSystematic rateKind = "SYSTEMATIC_ALERT"
)

// RateAlert is one triggered rate limit.
type RateAlert struct {
	Kind  rateKind `json:"kind"`
	Round int      `json:"round"`
	// Message and Recommendation are §3's texts.
	Message        string `json:"message"`
	Recommendation string `json:"recommendation"`
	// Disagreed of Total over the alert's scope: the round for BLOCK and
	// WARN, the window for SYSTEMATIC. Submitted and Limit for BLOCK.
	Disagreed int     `json:"disagreed"`
	Total     int     `json:"total"`
	Rate      float64 `json:"rate"`
	Submitted int     `json:"submitted,omitempty"`
	Limit     int     `json:"limit,omitempty"`
	// Issues are the disagreed HIGH/CRITICAL issues (WARN), in issue order.
	Issues []Issue `json:"issues,omitempty"`
	// Window is the rounds the systematic alert looked at.
	Window []rateRecord `json:"window,omitempty"`
}

// CheckRate is §3's check_disagree_rate. It records the round in the
// history (replacing an earlier record of the same round, so re-checking
// after severity overrides is idempotent) and returns the new history with
// every limit the round exceeds, not only the first as the spec's sketch
// does, in the order to ask: BLOCK_ROUND (more than MaxPerRound blocks),
// WARN_USER (more than RoundRate of the HIGH/CRITICAL issues),
// SYSTEMATIC_ALERT (more than SessionRate over the last SessionRounds
// rounds that had HIGH/CRITICAL issues, once that many exist). Alerts need
// evidence: the warning at least two disagreements in the round, the
// systematic alert at least one in the round and a window of rounds all
// after the last systematic alert (RateHistory.Alerted). An engine that sends the round
// back on BLOCK_ROUND need not ask the others. h is not modified; zero
// Limits mean defaultLimits.
func CheckRate(h RateHistory, in RateInput, l Limits) (RateHistory, []RateAlert) {
	if l == (Limits{}) {
		l = defaultLimits()
	}
	hc := map[string]Issue{}
	for _, is := range in.highCritical {
		hc[is.ID] = is
	}
	var disagreed []Issue
	for _, id := range in.disagreed {
		if is, ok := hc[id]; ok && !slices.ContainsFunc(disagreed, func(d Issue) bool { return d.ID == id }) {
			disagreed = append(disagreed, is)
		}
	}
	// Listed in issue order, as Example 3 lists them.
	slices.SortStableFunc(disagreed, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(issueRound(a), issueRound(b)), cmp.Compare(a.Number(), b.Number()), cmp.Compare(a.ID, b.ID))
	})
	rec := rateRecord{Round: in.round, Disagreed: len(disagreed), Total: len(hc), Submitted: in.submitted}

	out := RateHistory{Records: slices.DeleteFunc(slices.Clone(h.Records), func(r rateRecord) bool { return r.Round == in.round })}
	out.Records = append(out.Records, rec)
	slices.SortStableFunc(out.Records, func(a, b rateRecord) int { return cmp.Compare(a.Round, b.Round) })

	var alerts []RateAlert
	if rec.Submitted > l.MaxPerRound {
		alerts = append(alerts, RateAlert{
			Kind: RateBlock, Round: in.round,
			Message:        fmt.Sprintf("Engineer submitted %d DISAGREEs (limit: %d per round).", rec.Submitted, l.MaxPerRound),
			Recommendation: "Engineer must reduce disagreements or provide session-level justification.",
			Disagreed:      rec.Disagreed, Total: rec.Total, Rate: rate(rec.Disagreed, rec.Total),
			Submitted: rec.Submitted, Limit: l.MaxPerRound,
		})
	}
	// Minimum evidence: a single disagreement goes straight to conflict
	// resolution; the warning needs at least two.
	if rec.Total > 0 && rec.Disagreed >= 2 {
		if r := rate(rec.Disagreed, rec.Total); r > l.RoundRate {
			alerts = append(alerts, RateAlert{
				Kind: rateWarn, Round: in.round,
				Message:        fmt.Sprintf("Engineer disagreed with %s of HIGH/CRITICAL issues this round.", percent(r)),
				Recommendation: "Review if issues are too prescriptive or Engineer needs guidance.",
				Disagreed:      rec.Disagreed, Total: rec.Total, Rate: r, Issues: disagreed,
			})
		}
	}
	// The window is the last SessionRounds rounds that had HIGH/CRITICAL
	// issues, ending at this round: later rounds (after a rollback) are not
	// part of its pattern. The alert needs a DISAGREE in this round and a
	// window entirely after the last alert.
	var rated []rateRecord
	for _, r := range out.Records {
		if r.Round <= in.round && r.Total > 0 {
			rated = append(rated, r)
		}
	}
	out.Alerted = h.Alerted
	if n := max(l.SessionRounds, 1); rec.Disagreed > 0 && len(rated) >= n && rated[len(rated)-n].Round > h.Alerted {
		window := slices.Clone(rated[len(rated)-n:])
		d, t := 0, 0
		for _, r := range window {
			d += r.Disagreed
			t += r.Total
		}
		if r := rate(d, t); t > 0 && r > l.SessionRate {
			alerts = append(alerts, RateAlert{
				Kind: rateSystematic, Round: in.round,
				Message:        fmt.Sprintf("Systematic DISAGREE pattern: %d/%d (%s) across last %d rounds.", d, t, percent(r), n),
				Recommendation: "Consider: (1) Reviewer feedback style too rigid, (2) Engineer/Reviewer misaligned on scope, (3) User intervention needed.",
				Disagreed:      d, Total: t, Rate: r, Window: window,
			})
			out.Alerted = in.round
		}
	}
	return out, alerts
}

// rate is d/t, 0 when t is 0. Division keeps boundaries exact: 2/4 is
// exactly 0.5 and 2/5 is the same float64 as the literal 0.4.
func rate(d, t int) float64 {
	if t == 0 {
		return 0
	}
	return float64(d) / float64(t)
}
