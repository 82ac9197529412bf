package refine

// The Tier 3 templates of spec round-07 §4, attached to prompts until the
// examples package's tiered selection is wired in.
const (
	tier3Engineer = "## Gap Resolution: [GAP-ID]\n\n**Confidence:** [HIGH | MEDIUM | LOW]\n\n### Proposed Solution\n\n[Describe your solution here. Be specific and concrete.]\n\n### Examples\n\n[Provide at least one concrete example showing the solution in action.]\n\n### Trade-offs\n\n**Pros:**\n- [List at least 2 benefits]\n\n**Cons:**\n- [List at least 2 drawbacks]\n\n### New Gaps Introduced\n\n- [List any new gaps this solution creates, or write \"None\"]"
	tier3Reviewer = "## Review: [Section or Gap ID being reviewed]\n\n### Critical Issues\n\n[List any spec-breaking issues, or write \"None found\"]\n\n### High Priority\n\n[List issues that would cause incorrect implementation, or write \"None found\"]\n\n### Medium Priority\n\n[List suboptimal design issues, or write \"None found\"]\n\n### Low Priority / Nits\n\n[List polish items, or write \"None found\"]\n\n### Consistency Checks\n\n- [ ] Consistent with existing architecture?\n- [ ] Performance implications addressed?\n- [ ] Edge cases covered?"
)

// example picks the example for a prompt: failureType "" for an initial
// prompt. FILE_MISSING gets none (an execution problem, not a format one).
func (s *Session) example(role RoleName, failureType string, budget int) exampleChoice {
	if failureType == "FILE_MISSING" {
		return exampleChoice{}
	}
	text := tier3Engineer
	if role == Reviewer {
		text = tier3Reviewer
	}
	return exampleChoice{Tier: 3, Source: "Tier 3 Generated Template", Text: text, Chars: len(text), Tokens: s.tok.Count(text)}
}

func (s *Session) retryExampleLabel(role RoleName, failureType string) string {
	ex := s.example(role, failureType, s.cfg.RetryExampleBudget)
	if ex.Text == "" {
		return "None (execution issue)"
	}
	return fmtExampleLabel(ex)
}

func fmtExampleLabel(ex exampleChoice) string {
	return ex.Source + " (" + commaInt(ex.Chars) + " chars)"
}

// commaInt formats 1247 as "1,247", as the spec's status.md examples do.
func commaInt(n int) string {
	s := ""
	neg := n < 0
	if neg {
		n = -n
	}
	for n >= 1000 {
		s = "," + pad3(n%1000) + s
		n /= 1000
	}
	s = itoa(n) + s
	if neg {
		s = "-" + s
	}
	return s
}

func pad3(n int) string {
	d := itoa(n)
	for len(d) < 3 {
		d = "0" + d
	}
	return d
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
