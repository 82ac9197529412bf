// Package statusjson is the one JSON shape of a session's status, shared by
// `refine status --json` and the web console's GET /api/sessions/{id}:
// snake_case keys, every field present, empty lists as [].
package statusjson

import (
	"io"
	"strconv"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/internal/termtext"
)

// Status is the document. Round is the last round played; Outcome is
// RUNNING, PAUSED, FAILED or a terminal outcome. Running says a process
// drives the session now (From leaves it false: the caller knows);
// Waiting says a question waits for an answer.
type Status struct {
	Round       int               `json:"round"`
	Outcome     string            `json:"outcome"`
	Running     bool              `json:"running"`
	Waiting     bool              `json:"waiting"`
	Gaps        []Gap             `json:"gaps"`
	Convergence []convergence.Row `json:"convergence"`
	Decisions   []DecisionEntry   `json:"decisions"`
	Conflicts   []Conflict        `json:"conflicts"`
	Rollbacks   []Rollback        `json:"rollbacks"`
	Pending     []Pending         `json:"pending"`
	Usage       Usage             `json:"usage"`
	// Integrated says final_spec.md is the refined spec the integration
	// step wrote; FinalSpec says which form it has and why.
	Integrated bool      `json:"integrated"`
	FinalSpec  FinalSpec `json:"final_spec"`
	// Roles say which provider and model play each role.
	Roles Roles `json:"roles"`
	// Normalized counts, per role and kind, the quirks of form the
	// session's answers were read through (a wrapper fence, shifted
	// headings, …; DESIGN §18): places mapped, and answers that had any.
	Normalized []Normalized `json:"normalized"`
	// Settings are the session's settings as stored with it (changed by
	// `refine resume --FLAG`, Session.SetSettings). Never a key or token.
	Settings Settings `json:"settings"`
	// Repairs are the files the session's store found damaged and wrote
	// again from its own log, oldest first.
	Repairs []Repair `json:"repairs"`
}

// Normalized is one role's count of one kind of normalized quirk.
type Normalized struct {
	Role    string `json:"role"`
	Kind    string `json:"kind"`
	Count   int    `json:"count"`
	Answers int    `json:"answers"`
}

// Settings are a session's tunables: the values it runs with, unset ones
// as the defaults they stand for (rollback_limit 7, rollback_mode
// INTERACTIVE). Durations are in seconds.
type Settings struct {
	MaxRounds                 int     `json:"max_rounds"`
	GapsPerRound              int     `json:"gaps_per_round"`
	ParallelGaps              int     `json:"parallel_gaps"`
	MaxRetries                int     `json:"max_retries"`
	StallRounds               int     `json:"stall_rounds"`
	RollbackMode              string  `json:"rollback_mode"`
	RollbackLimit             int     `json:"rollback_limit"`
	RollbackAnalysisThreshold int     `json:"rollback_analysis_threshold"`
	BackupRetention           int     `json:"backup_retention"`
	ColdStorage               string  `json:"cold_storage"`
	ArchiveRetentionSeconds   float64 `json:"archive_retention_seconds"`
	Integrate                 bool    `json:"integrate"`
	TransportRetries          int     `json:"transport_retries"`
	BackoffBaseSeconds        float64 `json:"backoff_base_seconds"`
	BackoffMaxSeconds         float64 `json:"backoff_max_seconds"`
	PromptBudget              int     `json:"prompt_budget"`
	MaxTokens                 int     `json:"max_tokens"`
	MaxTokensCap              int     `json:"max_tokens_cap"`
	MaxOutputBytes            int     `json:"max_output_bytes"`
}

// settingsOf shapes set; the rollback limit, mode and analysis threshold
// as Settings.View gives them (their effective values).
func settingsOf(set refine.Settings) Settings {
	view := map[string]string{}
	for _, v := range set.View() {
		view[v.Name] = v.Value
	}
	atoi := func(name string) int { n, _ := strconv.Atoi(view[name]); return n }
	return Settings{
		MaxRounds: set.MaxRounds, GapsPerRound: set.GapsPerRound, ParallelGaps: set.ParallelGaps, MaxRetries: set.MaxRetries, StallRounds: set.StallRounds,
		RollbackMode: view["rollback_mode"], RollbackLimit: atoi("rollback_limit"), RollbackAnalysisThreshold: atoi("rollback_analysis_threshold"),
		BackupRetention: set.BackupRetention, ColdStorage: set.ColdStorage, ArchiveRetentionSeconds: set.ArchiveRetention.Seconds(),
		Integrate: set.Integrate, TransportRetries: set.TransportRetries, BackoffBaseSeconds: set.BackoffBase.Seconds(), BackoffMaxSeconds: set.BackoffMax.Seconds(),
		PromptBudget: set.PromptBudget, MaxTokens: set.MaxTokens, MaxTokensCap: set.MaxTokensCap, MaxOutputBytes: set.MaxOutputBytes,
	}
}

// Repair is one value the store repaired from its log: the key, when,
// and what it held instead.
type Repair struct {
	Key    string `json:"key"`
	At     string `json:"at"`
	Detail string `json:"detail"`
	ID     string `json:"id"`
}

// Roles are the backends of the two roles.
type Roles struct {
	Engineer RoleBackend `json:"engineer"`
	Reviewer RoleBackend `json:"reviewer"`
}

// RoleBackend is one role's provider ("anthropic", "openai", "ollama",
// "replay", "" when the session does not say) and model.
type RoleBackend struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// FinalSpec is the form of final_spec.md: "integrated", "appendix",
// "pending" while the integration step runs, "" before the session ends;
// Reason says why an appendix form was kept ("" when integration was not
// tried).
type FinalSpec struct {
	Form   string `json:"form"`
	Reason string `json:"reason"`
}

// Gap is one gap of the ledger with its state changes.
type Gap struct {
	ID       string       `json:"id"`
	Title    string       `json:"title"`
	Severity string       `json:"severity"`
	State    string       `json:"state"`
	Location string       `json:"location,omitempty"`
	Why      string       `json:"why,omitempty"`
	History  []Transition `json:"history"`
}

// Transition is one state change of a gap.
type Transition struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Round  int    `json:"round"`
	At     string `json:"at"`
	Reason string `json:"reason"`
}

// DecisionEntry is one recorded user decision.
type DecisionEntry struct {
	ID       string `json:"id"`
	Issue    string `json:"issue"`
	Option   string `json:"option"`
	Decision string `json:"decision"`
}

// Conflict is one disagreement between the roles: the issue, its type
// (explicit or converted), severity, gap and round, whether it is resolved,
// and the decision that resolved it.
type Conflict struct {
	Issue    string `json:"issue"`
	Type     string `json:"type"`
	Severity string `json:"severity"`
	Gap      string `json:"gap"`
	Round    int    `json:"round"`
	Status   string `json:"status"`
	Decision string `json:"decision"`
}

// Rollback is one rollback of the session's history.
type Rollback struct {
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

// Pending is a question waiting for an answer, whole: Body is markdown,
// Default the option automated mode picks, AllowText whether free text may
// accompany the answer.
type Pending struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	Round     int      `json:"round"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	Default   string   `json:"default"`
	AllowText bool     `json:"allow_text"`
	Options   []Option `json:"options"`
}

// Option is one choice of a pending question; Text says whether it needs
// free text with it.
type Option struct {
	Key         string `json:"key"`
	Label       string `json:"label"`
	Effect      string `json:"effect"`
	Recommended bool   `json:"recommended"`
	Text        bool   `json:"text"`
}

// Usage is the tokens and calls spent, failed attempts included.
// CachedPromptTokens (read from the provider's prompt cache) and
// CacheWriteTokens (written to it) are part of PromptTokens.
type Usage struct {
	PromptTokens       int `json:"prompt_tokens"`
	CompletionTokens   int `json:"completion_tokens"`
	CachedPromptTokens int `json:"cached_prompt_tokens"`
	CacheWriteTokens   int `json:"cache_write_tokens"`
	Calls              int `json:"calls"`
}

const timeFormat = "2006-01-02T15:04:05Z"

// From shapes st.
func From(st refine.Status) Status {
	out := Status{
		Round: st.Round, Outcome: string(st.Outcome),
		Gaps: []Gap{}, Convergence: []convergence.Row{}, Decisions: []DecisionEntry{}, Conflicts: []Conflict{}, Rollbacks: []Rollback{}, Pending: []Pending{},
		Normalized: []Normalized{}, Repairs: []Repair{},
		Usage: Usage{PromptTokens: st.Usage.PromptTokens, CompletionTokens: st.Usage.CompletionTokens,
			CachedPromptTokens: st.Usage.CachedPromptTokens, CacheWriteTokens: st.Usage.CacheWriteTokens, Calls: st.Calls},
		Waiting:    len(st.Pending) > 0,
		Integrated: st.FinalSpec == refine.FinalSpecIntegrated,
		FinalSpec:  FinalSpec{Form: st.FinalSpec, Reason: st.FinalSpecReason},
		Settings:   settingsOf(st.Settings),
	}
	for _, r := range []struct {
		role refine.RoleName
		dst  *RoleBackend
	}{{refine.Engineer, &out.Roles.Engineer}, {refine.Reviewer, &out.Roles.Reviewer}} {
		b := st.Settings.Backend.Role(r.role)
		*r.dst = RoleBackend{Provider: b.Kind, Model: b.Model}
	}
	for _, g := range st.Gaps {
		j := Gap{ID: string(g.ID), Title: g.Title, Severity: g.Severity.String(), State: string(g.State), Location: g.Location, Why: g.Why, History: []Transition{}}
		for _, h := range g.History {
			j.History = append(j.History, Transition{From: string(h.From), To: string(h.To), Round: h.Round, At: h.At.UTC().Format(timeFormat), Reason: h.Reason})
		}
		out.Gaps = append(out.Gaps, j)
	}
	out.Convergence = append(out.Convergence, st.Convergence...) // its JSON tags are the contract
	for _, c := range st.Conflicts {
		out.Conflicts = append(out.Conflicts, Conflict{Issue: c.IssueID, Type: string(c.Type), Severity: c.Issue.Severity.String(),
			Gap: string(c.Issue.Gap), Round: c.Round, Status: string(c.Status), Decision: c.DecisionID})
	}
	for _, r := range st.Rollbacks {
		out.Rollbacks = append(out.Rollbacks, Rollback{Round: r.Round, Attempt: r.Attempt, Target: r.Target, At: r.At.UTC().Format(timeFormat),
			Reason: r.Reason, Mode: string(r.Mode), Trigger: string(r.Trigger), Archive: r.Archive, Outcome: r.Outcome})
	}
	for _, d := range st.Decisions {
		out.Decisions = append(out.Decisions, DecisionEntry{ID: d.ID, Issue: d.Issue, Option: d.Option, Decision: d.Decision})
	}
	for _, q := range st.Pending {
		out.Pending = append(out.Pending, PendingOf(q))
	}
	for _, n := range st.Normalized {
		out.Normalized = append(out.Normalized, Normalized{Role: string(n.Role), Kind: n.Kind, Count: n.Count, Answers: n.Answers})
	}
	for _, r := range st.Repairs {
		out.Repairs = append(out.Repairs, Repair{Key: r.Key, At: r.At.UTC().Format(timeFormat), Detail: r.Detail, ID: r.ID})
	}
	return out
}

// PendingOf shapes one question.
func PendingOf(q refine.Question) Pending {
	p := Pending{ID: q.ID, Kind: string(q.Kind), Round: q.Round, Title: q.Title, Body: q.Body, Default: q.Default, AllowText: q.AllowText, Options: []Option{}}
	for _, o := range q.Options {
		p.Options = append(p.Options, Option{Key: o.Key, Label: o.Label, Effect: o.Effect, Recommended: o.Recommended, Text: TakesText(q, o.Key)})
	}
	return p
}

// TakesText reports whether option key of q needs free text with it.
func TakesText(q refine.Question, key string) bool {
	for _, k := range q.TextRequired {
		if k == key {
			return true
		}
	}
	return false
}

// Write writes st's document to w, indented, with a final newline, and
// every character a terminal would obey written as a \u escape (the
// escape policy of text output, termtext).
func Write(w io.Writer, st refine.Status) error {
	return WriteDoc(w, From(st))
}

// WriteDoc writes the document d as Write does.
func WriteDoc(w io.Writer, d Status) error {
	return termtext.WriteJSON(w, d)
}
