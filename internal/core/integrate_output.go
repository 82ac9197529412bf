package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// What the integration step leaves: final_spec.md in its final form,
// final_spec_trace.json, the line of final_summary.md and the section of
// status.md naming the form (see integrate.go).

// integrationDone writes final_spec.md in its final form, the trace, and a
// line of final_summary.md saying which form it is.
func (s *Engine) integrationDone(form, reason string) error {
	in := s.st.Integration
	in.Step, in.Form, in.Reason = state.IntegDone, form, reason
	var written string
	var check validate.IntegrationInput
	if form == state.FinalSpecIntegrated {
		key := in.SpecKey()
		b, err := s.get(key)
		if err != nil {
			return fmt.Errorf("integration: read %s: %w", key, err)
		}
		m, err := s.integrationMaterial()
		if err != nil {
			return err
		}
		written, check = string(b), m.input(s.cfg.MaxOutputBytes, in.Decisions)
	} else {
		ops, err := s.finalOps()
		if err != nil {
			return err
		}
		written = opValue(ops, state.KeyFinalSpec)
	}
	sum, err := s.get(state.KeyFinalSum)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("integration: read %s: %w", state.KeyFinalSum, err)
	}
	ops, err := finalFiles(in, written, check, sum, err == nil)
	if err != nil {
		return err
	}
	s.renderNext = true
	s.stage(ops...)
	msg := "final_spec.md is the integrated spec (v1.0)"
	if form == state.FinalSpecAppendix {
		msg = "final_spec.md is the appendix form: " + reason
	}
	s.log.Info("final spec written", "form", form, "reason", reason)
	s.emit(Event{Kind: EventIntegrated, Phase: state.PhaseIntegration, Message: msg})
	return nil
}

// opValue is the value the last of ops putting key writes ("" if none).
func opValue(ops []store.Op, key string) string {
	var v string
	for _, op := range ops {
		if op.Key == key {
			v = string(op.Value)
		}
	}
	return v
}

// finalFiles are the writes of the integration step's end, in the form
// in names: final_spec.md made from written (the accepted integration,
// validated again against check for its Resolution Log, or the appendix
// form), final_spec_trace.json, and final_summary.md (summary, when
// hasSummary) with its line on the form. The notes gain the accepted
// integration's warnings and its review's lesser issues.
func finalFiles(in *state.IntegrationState, written string, check validate.IntegrationInput, summary []byte, hasSummary bool) ([]store.Op, error) {
	var spec string
	var log []validate.LogEntry
	if in.Form == state.FinalSpecIntegrated {
		log = validate.Integration(written, check).Log
		in.Notes = append(slices.Clone(in.Engineer[in.Accepted-1].Warnings), in.Notes...)
		// What the consistency review leaves open is a known limitation
		// of both files (limitations.go).
		left := consistencyLeft(in)
		spec = withKnownIssues(written, left)
		summary = []byte(withSummaryLimitations(string(summary), left))
	} else {
		spec = fmt.Sprintf("> **Integration failed:** %s. This is the appendix form: the source spec, then each accepted resolution, the decisions and the known limitations.\n\n%s", strings.TrimSuffix(in.Reason, "."), written)
	}
	trace, err := json.MarshalIndent(integrationTraceOf(in, log), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("integration: encode trace: %w", err)
	}
	ops := []store.Op{store.Put(state.KeyFinalSpec, []byte(spec)), store.Put(state.KeyFinalTrace, append(trace, '\n'))}
	if hasSummary {
		ops = append(ops, store.Put(state.KeyFinalSum, []byte(strings.TrimRight(string(summary), "\n")+"\n"+finalSpecLine(in, len(log))+"\n")))
	}
	return ops, nil
}

// finalSpecLine is final_summary.md's line on the final spec's form.
func finalSpecLine(in *state.IntegrationState, logRows int) string {
	if in.Form == state.FinalSpecIntegrated {
		line := fmt.Sprintf("Form: integrated (v1.0): every accepted resolution merged into its section; %d Resolution Log rows, also in `%s`", logRows, state.KeyFinalTrace)
		if n := len(consistencyLeft(in)); n > 0 {
			line += fmt.Sprintf("; %d consistency review issue(s) listed as known limitations", n)
		}
		return line
	}
	return "Form: appendix (" + in.Reason + ")"
}

// integrationTrace is final_spec_trace.json.
type integrationTrace struct {
	Form   string `json:"form"`
	Reason string `json:"reason,omitempty"`
	// Log is the Resolution Log as parsed; empty for the appendix form.
	Log []validate.LogEntry `json:"log"`
	// KnownIssues are the consistency review's issues listed as known
	// limitations: its MEDIUM/LOW ones, and CRITICAL/HIGH ones accepted.
	KnownIssues []traceIssue `json:"known_issues"`
	Notes       []string     `json:"notes"`
	// Attempts and Reviews count the Engineer's integration attempts and
	// the Reviewer's valid consistency reviews.
	Attempts int `json:"attempts"`
	Reviews  int `json:"reviews"`
}

type traceIssue struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
}

// trace is final_spec_trace.json with the Resolution Log log.
func integrationTraceOf(in *state.IntegrationState, log []validate.LogEntry) integrationTrace {
	t := integrationTrace{Form: in.Form, Reason: in.Reason, Log: log, Notes: slices.Clone(in.Notes), Attempts: len(in.Engineer), Reviews: in.Reviews}
	if t.Log == nil {
		t.Log = []validate.LogEntry{}
	}
	if t.Notes == nil {
		t.Notes = []string{}
	}
	t.KnownIssues = []traceIssue{}
	if in.Form != state.FinalSpecIntegrated {
		return t
	}
	for _, is := range consistencyLeft(in) {
		t.KnownIssues = append(t.KnownIssues, traceIssue{ID: is.ID, Severity: is.Severity.String(), Summary: is.Summary})
	}
	return t
}

// FinalSpecStatus is the form of final_spec.md for Status.
func FinalSpecStatus(st *state.State) (form, reason string) {
	switch in := st.Integration; {
	case in != nil && in.Step == state.IntegDone:
		return in.Form, in.Reason
	case in != nil:
		return state.FinalSpecPending, ""
	case st.Outcome.Terminal():
		return state.FinalSpecAppendix, ""
	}
	return "", ""
}
