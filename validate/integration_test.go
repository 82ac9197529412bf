package validate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

const integrationSource = `# Orders API — Draft

## 1. Purpose

The Orders API lets merchants create and list orders.

## 2. Endpoints

- ` + "`GET /v1/orders`" + ` lists orders. How clients page through large
  result sets is not specified (GAP-API-001).

## 3. Errors

Errors are JSON; the shape is not yet specified (GAP-API-002).

## 9. Appendix

Workflow notes.
`

const integrationResolution1 = "Pages use an opaque signed cursor: the response carries `next_cursor`, the client sends it back as `cursor`; `limit` defaults to 50, at most 200."

const integrationResolution2 = "Errors use Problem Details with `type`, `title`, `status` and `detail`; 422 responses add an `errors` array."

// integrationInput is the material the integrated specs below merge.
func integrationInput() IntegrationInput {
	return IntegrationInput{
		Source: integrationSource,
		Resolutions: []Resolution{
			{ID: "GAP-API-001", Text: integrationResolution1},
			{ID: "GAP-API-002", Text: integrationResolution2},
		},
		Decisions:   []string{"DECISION-R2-001"},
		Limitations: []gap.ID{"GAP-API-003"},
	}
}

// integratedSpec is a valid integration of integrationInput.
const integratedSpec = `# Orders API — v1.0

## 1. Purpose

The Orders API lets merchants create and list orders.

## 2. Endpoints

- ` + "`GET /v1/orders`" + ` lists orders, newest first, a page at a time.

### 2.1 Pagination

Pages use an opaque signed cursor: each response carries ` + "`next_cursor`" + `
(absent on the last page) and the client sends it back as ` + "`cursor`" + `.
` + "`limit`" + ` defaults to 50 and is at most 200. Cursors are signed so they
cannot be forged, as decided when the conflict about page numbers was settled.

## 3. Errors

Every error is a Problem Details document with ` + "`type`, `title`, `status`" + `
and ` + "`detail`" + `; 422 responses add an ` + "`errors`" + ` array of field errors.

## Known Limitations

- GAP-API-003 (MEDIUM): rate limits are not yet specified.

## Resolution Log

| Item | Section(s) | Note |
|---|---|---|
| GAP-API-001 | 2.1 Pagination; 2. Endpoints | cursor pagination |
| GAP-API-002 | 3. Errors | Problem Details |
| DECISION-R2-001 | §2.1 | signed cursors, not page numbers |
| ## 9. Appendix | — | removed: workflow notes, not part of the API |
| # Orders API — Draft | # Orders API — v1.0 | renamed: no longer a draft |
`

func TestIntegration(t *testing.T) {
	replace := func(old, new string) string {
		if !strings.Contains(integratedSpec, old) {
			t.Fatalf("fixture has no %q", old)
		}
		return strings.Replace(integratedSpec, old, new, 1)
	}
	tests := []struct {
		name    string
		content string
		in      func(*IntegrationInput)
		want    FailureType
		tier    Tier
		line    int
		msg     string // a substring of the message
	}{
		{name: "valid", content: integratedSpec},
		{name: "empty", content: " \n", want: EmptyOutput, tier: Structure},
		{name: "no log", content: integratedSpec[:strings.Index(integratedSpec, "## Resolution Log")] + strings.Repeat("More prose about the API. ", 20),
			want: IntegrationStructure, tier: Structure, msg: `no "## Resolution Log" section`},
		{name: "log at level 5", content: replace("## Resolution Log", "##### Resolution Log"),
			want: IntegrationStructure, tier: Structure, msg: "line 27 has \"##### Resolution Log\""},
		{name: "log without a table", content: replace("| Item | Section(s) | Note |\n|---|---|---|\n", "The log:\n\n"),
			want: IntegrationStructure, tier: Structure, msg: "header row"},
		{name: "wrong header", content: replace("| Item | Section(s) | Note |", "| Gap | Where | Note |"),
			want: IntegrationStructure, tier: Structure, line: 29, msg: "must read exactly | Item | Section(s) | Note |"},
		{name: "no delimiter", content: replace("|---|---|---|\n", ""),
			want: IntegrationStructure, tier: Structure, line: 30, msg: "delimiter row"},
		{name: "row with two cells", content: replace("| GAP-API-002 | 3. Errors | Problem Details |", "| GAP-API-002 | 3. Errors |"),
			want: IntegrationStructure, tier: Structure, line: 32, msg: "has 2 cells"},
		{name: "source heading dropped", content: replace("## 3. Errors", "## 3. Failures"),
			want: IntegrationStructure, tier: Structure, msg: `"## 3. Errors"`},
		{name: "source heading renamed and logged", content: strings.Replace(replace("## 3. Errors", "## 3. Failures"), "| GAP-API-002 | 3. Errors |", "| 3. Errors | 3. Failures | renamed |\n| GAP-API-002 | 3. Failures |", 1)},
		{name: "a heading demoted is kept", content: replace("## 1. Purpose", "### 1. Purpose")},
		{name: "no known limitations", content: replace("## Known Limitations", "## Open Points"),
			want: IntegrationStructure, tier: Structure, msg: "GAP-API-003 belong under it"},
		{name: "no known limitations needed", content: replace("## Known Limitations", "## Open Points"), in: func(in *IntegrationInput) { in.Limitations = nil }},
		{name: "too large", content: replace("## Known Limitations", strings.Repeat("Repeated commentary. ", 200)+"\n\n## Known Limitations"),
			want: IntegrationStructure, tier: Structure, msg: "more than 1.6×"},
		{name: "gap not logged", content: replace("| GAP-API-002 | 3. Errors | Problem Details |\n", ""),
			want: IntegrationMissing, tier: Content, line: 27, msg: "accepted gap GAP-API-002 has no Resolution Log row"},
		{name: "decision not logged", content: replace("| DECISION-R2-001 | §2.1 | signed cursors, not page numbers |\n", ""),
			want: IntegrationMissing, tier: Content, msg: "decision DECISION-R2-001"},
		{name: "logged section missing", content: replace("| 3. Errors | Problem", "| 4. Error Handling | Problem"),
			want: IntegrationMissing, tier: Content, line: 32, msg: `"4. Error Handling"`},
		{name: "section by number or bare title", content: replace("| 3. Errors | Problem", "| Errors, §2 | Problem")},
		{name: "section with a note in parentheses", content: replace("| 3. Errors | Problem", "| 3. Errors (all responses) | Problem")},
		{name: "open gap not listed", content: replace("- GAP-API-003 (MEDIUM): rate limits are not yet specified.", "- Rate limits are not yet specified."),
			want: IntegrationMissing, tier: Content, msg: "open gap GAP-API-003 is not listed"},
		{name: "too small", content: integratedSpec, in: func(in *IntegrationInput) {
			in.Resolutions[0].Text += strings.Repeat(" More detail about cursors.", 40)
		}, want: IntegrationMissing, tier: Content, msg: "less than 0.8×"},
		{name: "resolved gap still unspecified", content: (replace("lists orders, newest first, a page at a time.", "lists orders. Paging is TBD (GAP-API-001).")),
			want: IntegrationStale, tier: Content, line: 9, msg: "GAP-API-001 is resolved"},
		{name: "source sentence kept without its marker", content: (replace("a page at a time.", "a page at a time. How clients page through large\n  result sets is not specified.")),
			want: IntegrationStale, tier: Content, msg: "the source's sentence"},
		{name: "open gap may be unspecified", content: integratedSpec},
		{name: "a sentence naming an open gap too is not stale", content: (replace("lists orders, newest first, a page at a time.", "lists orders. Rate limits (GAP-API-003) are not yet specified for GAP-API-001's cursors."))},
		{name: "stale words in code do not count", content: replace("a page at a time.", "a page at a time: `GAP-API-001 TBD`.")},
		{name: "the log's notes are not the body", content: replace("| cursor pagination |", "| was not specified in the draft |")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := integrationInput()
			if tc.in != nil {
				tc.in(&in)
			}
			r := Integration(tc.content, in)
			checkInvariants(t, tc.content, r.Result)
			if r.FailureType != tc.want {
				t.Fatalf("failure %q (%s), want %q", r.FailureType, r.Message, tc.want)
			}
			if tc.want == "" {
				if len(r.Warnings) > 0 {
					t.Errorf("warnings: %v", r.Warnings)
				}
				return
			}
			if r.Tier != tc.tier {
				t.Errorf("tier %s, want %s", r.Tier, tc.tier)
			}
			if !r.Retriable {
				t.Errorf("%s is not retriable", r.FailureType)
			}
			if tc.line != 0 && r.Line != tc.line {
				t.Errorf("line %d, want %d (%s)", r.Line, tc.line, r.Message)
			}
			if !strings.Contains(r.Message, tc.msg) {
				t.Errorf("message %q does not contain %q", r.Message, tc.msg)
			}
		})
	}
}

func TestIntegrationLog(t *testing.T) {
	r := Integration(integratedSpec, integrationInput())
	if !r.Success {
		t.Fatalf("invalid: %s", r.Message)
	}
	want := []LogEntry{
		{Item: "GAP-API-001", Sections: []string{"2.1 Pagination", "2. Endpoints"}, Note: "cursor pagination", Line: 31},
		{Item: "GAP-API-002", Sections: []string{"3. Errors"}, Note: "Problem Details", Line: 32},
		{Item: "DECISION-R2-001", Sections: []string{"§2.1"}, Note: "signed cursors, not page numbers", Line: 33},
		{Item: "## 9. Appendix", Note: "removed: workflow notes, not part of the API", Line: 34},
		{Item: "# Orders API — Draft", Sections: []string{"# Orders API — v1.0"}, Note: "renamed: no longer a draft", Line: 35},
	}
	if diff := cmp.Diff(want, r.Log); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestIntegrationKeyTermsWarning(t *testing.T) {
	in := integrationInput()
	in.Resolutions[0].Text += " Cursors carry `created_at` and `order_id`, are signed with `HMAC-SHA256`, replace `page_token` and are rejected with `invalid-cursor` after 3600 seconds."
	r := Integration(integratedSpec, in)
	if !r.Success {
		t.Fatalf("invalid: %s", r.Message)
	}
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "GAP-API-001: only 5 of its resolution's 11 key terms appear") {
		t.Errorf("warnings %q, want one about GAP-API-001's key terms", r.Warnings)
	}
	in.KeyTermsThreshold = 0.4
	if r := Integration(integratedSpec, in); len(r.Warnings) != 0 {
		t.Errorf("at threshold 0.4: warnings %q", r.Warnings)
	}
}

func TestKeyTerms(t *testing.T) {
	text := "Use `next_cursor` and RateLimit-Limit; pageSize 50 (max 200) per ISSUE-R1-001, not 7.\n\n```json\n{\"ignored_field\": 999}\n```\n`next_cursor` again, v1.2 and GAP-API-001."
	want := []string{"next_cursor", "RateLimit-Limit", "pageSize", "50", "200", "v1.2"}
	if diff := cmp.Diff(want, KeyTerms(text)); diff != "" {
		t.Errorf("KeyTerms (-want +got):\n%s", diff)
	}
}

func FuzzIntegration(f *testing.F) {
	addSeeds(f, integratedSpec, integrationSource, "## Resolution Log\n| Item | Section(s) | Note |\n|-|-|-|\n| a `|` b | c | d |\n",
		"## Resolution Log\n|\n|", "## Known Limitations\n## Resolution Log\n| Item | Sections | Notes |\n|---|---|---|\n| GAP-API-001 | § | x |")
	f.Fuzz(func(t *testing.T, s string) {
		r := Integration(s, integrationInput())
		checkInvariants(t, s, r.Result)
		if r.Success && len(r.Log) == 0 {
			t.Fatalf("valid without a log")
		}
		KeyTerms(s)
	})
}
