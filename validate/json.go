package validate

import (
	"encoding/json"

	"github.com/refine-spec/refine/gap"
)

// Report is the JSON form of a Result, the `refine validate --json` shape
// other tools rely on: snake_case keys, every field always present, lists empty
// rather than null, failure_type "" on success.
type Report struct {
	Success       bool                 `json:"success"`
	FailureType   FailureType          `json:"failure_type"`
	Retriable     bool                 `json:"retriable"`
	Message       string               `json:"message"`
	Line          int                  `json:"line"`
	Warnings      []string             `json:"warnings"`
	GapsAddressed []gap.ID             `json:"gaps_addressed"`
	Issues        []ReportIssue        `json:"issues"`
	Disagreements []ReportDisagreement `json:"disagreements"`
}

// ReportIssue is an issue in a Report.
type ReportIssue struct {
	ID       string       `json:"id"`
	Severity gap.Severity `json:"severity"`
	Gap      gap.ID       `json:"gap"`
}

// ReportDisagreement is a DISAGREE block in a Report.
type ReportDisagreement struct {
	IssueID          string `json:"issue_id"`
	ReviewerConcern  string `json:"reviewer_concern"`
	EngineerPosition string `json:"engineer_position"`
	Rationale        string `json:"rationale"`
	Alternative      string `json:"alternative"`
	Line             int    `json:"line"`
}

// Report returns the JSON form of r.
func (r Result) Report() Report {
	rep := Report{
		Success:       r.Success,
		FailureType:   r.FailureType,
		Retriable:     r.Retriable,
		Message:       r.Message,
		Line:          r.Line,
		Warnings:      append([]string{}, r.Warnings...),
		GapsAddressed: append([]gap.ID{}, r.GapsAddressed...),
		Issues:        make([]ReportIssue, 0, len(r.Issues)),
		Disagreements: make([]ReportDisagreement, 0, len(r.Disagreements)),
	}
	for _, is := range r.Issues {
		rep.Issues = append(rep.Issues, ReportIssue{ID: is.ID, Severity: is.Severity, Gap: is.Gap})
	}
	for _, d := range r.Disagreements {
		rep.Disagreements = append(rep.Disagreements, ReportDisagreement(d))
	}
	return rep
}

// MarshalJSON encodes r as its Report, so json.Marshal of a Result gives
// the documented `validate --json` shape. The parsed sections, new gaps and
// issue details are not part of that contract; read them from the Result.
func (r Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.Report()) }
