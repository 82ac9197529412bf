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
	// Sections are the Engineer's Gap Resolution sections with their
	// confidence; NewGaps the gaps the answer introduces; Verdict the
	// Reviewer's ("" for the Engineer).
	Sections []ReportSection `json:"sections"`
	NewGaps  []ReportNewGap  `json:"new_gaps"`
	Verdict  Verdict         `json:"verdict"`
	// Normalized says what the reading mapped onto the canonical form, one
	// entry per kind (each is also a "NORMALIZED: …" warning).
	Normalized []ReportNormalization `json:"normalized"`
}

// ReportSection is a Gap Resolution section in a Report.
type ReportSection struct {
	ID         gap.ID         `json:"id"`
	Confidence gap.Confidence `json:"confidence"`
	Line       int            `json:"line"`
	EndLine    int            `json:"end_line"`
}

// ReportNewGap is a new gap in a Report.
type ReportNewGap struct {
	ID       gap.ID       `json:"id"`
	Severity gap.Severity `json:"severity"`
	Title    string       `json:"title"`
	Line     int          `json:"line"`
	FromGap  gap.ID       `json:"from_gap"`
}

// ReportNormalization is a Normalization in a Report.
type ReportNormalization struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
	Line  int    `json:"line"`
	First string `json:"first"`
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
		Sections:      make([]ReportSection, 0, len(r.Sections)),
		NewGaps:       make([]ReportNewGap, 0, len(r.NewGaps)),
		Verdict:       r.Verdict,
		Normalized:    make([]ReportNormalization, 0, len(r.Normalized)),
	}
	for _, s := range r.Sections {
		rep.Sections = append(rep.Sections, ReportSection{ID: s.ID, Confidence: s.Confidence, Line: s.Line, EndLine: s.EndLine})
	}
	for _, g := range r.NewGaps {
		rep.NewGaps = append(rep.NewGaps, ReportNewGap{ID: g.ID, Severity: g.Severity, Title: g.Title, Line: g.Line, FromGap: g.FromGap})
	}
	for _, n := range r.Normalized {
		rep.Normalized = append(rep.Normalized, ReportNormalization(n))
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
// the documented `validate --json` shape. The sections' bodies, the issues'
// details and Text are not part of that contract; read them from the Result.
func (r Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.Report()) }
