package main

import (
	"encoding/json"
	"io"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/convergence"
)

// statusJSON is the `refine status --json` contract (DESIGN §11): snake_case,
// every field present, empty lists as [].
type statusJSON struct {
	Round       int               `json:"round"`
	Outcome     string            `json:"outcome"`
	Gaps        []gapJSONOut      `json:"gaps"`
	Convergence []convergence.Row `json:"convergence"`
	Decisions   []decisionJSON    `json:"decisions"`
	Conflicts   []conflictJSON    `json:"conflicts"`
	Rollbacks   []rollbackJSON    `json:"rollbacks"`
	Pending     []pendingJSON     `json:"pending"`
	Usage       usageJSON         `json:"usage"`
}

type conflictJSON struct {
	Issue    string `json:"issue"`
	Type     string `json:"type"`
	Severity string `json:"severity"`
	Gap      string `json:"gap"`
	Round    int    `json:"round"`
	Status   string `json:"status"`
	Decision string `json:"decision"`
}

type rollbackJSON struct {
	Round   int    `json:"round"`
	Attempt int    `json:"attempt"`
	Target  int    `json:"target"`
	At      string `json:"at"`
	Reason  string `json:"reason"`
	Mode    string `json:"mode"`
	Trigger string `json:"trigger"`
	Archive string `json:"archive"`
	Outcome string `json:"outcome"`
}

type gapJSONOut struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Severity string `json:"severity"`
	State    string `json:"state"`
}

type decisionJSON struct {
	ID       string `json:"id"`
	Issue    string `json:"issue"`
	Option   string `json:"option"`
	Decision string `json:"decision"`
}

type pendingJSON struct {
	ID      string       `json:"id"`
	Kind    string       `json:"kind"`
	Title   string       `json:"title"`
	Options []optionJSON `json:"options"`
}

type optionJSON struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

type usageJSON struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	Calls            int `json:"calls"`
}

func writeStatusJSON(w io.Writer, st refine.Status) error {
	out := statusJSON{
		Round: st.Round, Outcome: string(st.Outcome),
		Gaps: []gapJSONOut{}, Convergence: []convergence.Row{}, Decisions: []decisionJSON{}, Conflicts: []conflictJSON{}, Rollbacks: []rollbackJSON{}, Pending: []pendingJSON{},
		Usage: usageJSON{PromptTokens: st.Usage.PromptTokens, CompletionTokens: st.Usage.CompletionTokens, Calls: st.Calls},
	}
	for _, g := range st.Gaps {
		out.Gaps = append(out.Gaps, gapJSONOut{ID: string(g.ID), Title: g.Title, Severity: g.Severity.String(), State: string(g.State)})
	}
	out.Convergence = append(out.Convergence, st.Convergence...) // its JSON tags are the §11 contract
	for _, c := range st.Conflicts {
		out.Conflicts = append(out.Conflicts, conflictJSON{Issue: c.IssueID, Type: string(c.Type), Severity: c.Issue.Severity.String(),
			Gap: string(c.Issue.Gap), Round: c.Round, Status: string(c.Status), Decision: c.DecisionID})
	}
	for _, r := range st.Rollbacks {
		out.Rollbacks = append(out.Rollbacks, rollbackJSON{Round: r.Round, Attempt: r.Attempt, Target: r.Target, At: r.At.UTC().Format("2006-01-02T15:04:05Z"),
			Reason: r.Reason, Mode: string(r.Mode), Trigger: string(r.Trigger), Archive: r.Archive, Outcome: r.Outcome})
	}
	for _, d := range st.Decisions {
		out.Decisions = append(out.Decisions, decisionJSON{ID: d.ID, Issue: d.Issue, Option: d.Option, Decision: d.Decision})
	}
	for _, q := range st.Pending {
		p := pendingJSON{ID: q.ID, Kind: string(q.Kind), Title: q.Title, Options: []optionJSON{}}
		for _, o := range q.Options {
			p.Options = append(p.Options, optionJSON{Key: o.Key, Label: o.Label})
		}
		out.Pending = append(out.Pending, p)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
