package quirk

import (
	"math/rand/v2"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// Benign returns the benign quirks: each maps a valid answer onto one the
// validators must read the same way (the same gaps, confidences, new gaps,
// issues, severities and disagreements), with a NORMALIZED warning or
// none. A fresh slice each call.
func Benign() []Quirk {
	eng, rev := gap.Engineer, gap.Reviewer
	return []Quirk{
		// The answer as a whole.
		{Name: "wrap-markdown", Layer: Wrapper, Apply: wrap("```markdown", "```")},
		{Name: "wrap-md", Layer: Wrapper, Apply: wrap("```md", "```")},
		{Name: "wrap-bare", Layer: Wrapper, Apply: wrap("```", "```")},
		{Name: "wrap-four-backticks", Layer: Wrapper, Apply: wrap("````markdown", "````")},
		{Name: "wrap-tildes", Layer: Wrapper, Apply: wrap("~~~markdown", "~~~")},
		{Name: "wrap-with-remarks", Layer: Wrapper, Apply: func(t string, r *rand.Rand) (string, bool) {
			out, _ := wrap("```markdown", "```")(t, r)
			return pick(r, preambles[:]) + "\n\n" + out + "\n" + pick(r, closings[:]) + "\n", true
		}},
		{Name: "think-closed", Layer: Outer, Apply: think("<think>", "</think>")},
		{Name: "thinking-closed", Layer: Outer, Apply: think("<thinking>", "</thinking>")},
		{Name: "think-unclosed", Layer: Outer, Apply: thinkUnclosed},
		{Name: "preamble", Apply: func(t string, r *rand.Rand) (string, bool) { return pick(r, preambles[:]) + "\n\n" + t, true }},
		{Name: "closing-remark", Apply: func(t string, r *rand.Rand) (string, bool) {
			return strings.TrimRight(t, "\n") + "\n\n" + pick(r, closings[:]) + "\n", true
		}},
		{Name: "crlf", Layer: Bytes, Apply: func(t string, _ *rand.Rand) (string, bool) {
			return strings.ReplaceAll(t, "\n", "\r\n"), strings.Contains(t, "\n") && !strings.Contains(t, "\r")
		}},
		{Name: "bom", Layer: Bytes, Apply: func(t string, _ *rand.Rand) (string, bool) { return "\uFEFF" + t, !strings.HasPrefix(t, "\uFEFF") }},
		{Name: "trailing-spaces", Layer: Bytes, Apply: func(t string, _ *rand.Rand) (string, bool) {
			crlf := strings.Contains(t, "\r\n")
			out := strings.ReplaceAll(strings.ReplaceAll(t, "\r\n", "\n"), "\n", "  \n")
			if crlf {
				out = strings.ReplaceAll(out, "\n", "\r\n")
			}
			return out, strings.Contains(t, "\n")
		}},
		{Name: "blank-lines", Apply: func(t string, _ *rand.Rand) (string, bool) {
			return mapLines(t, func(s string) bool { return strings.TrimSpace(s) == "" }, nil, func(s string) string { return s + "\n" })
		}},
		{Name: "star-bullets", Apply: bullets("* ")},
		{Name: "plus-bullets", Apply: bullets("+ ")},
		{Name: "rules-between-sections", Apply: rules},
		{Name: "html-comment", Apply: insertAt("<!-- checked against the draft -->")},
		{Name: "unicode-hyphen-ids", Apply: hyphenIDs("\u2011")},
		{Name: "hyphen-u2010-ids", Apply: hyphenIDs("\u2010")},
		{Name: "zero-width-in-id", Apply: zeroWidth},
		{Name: "typographic-quotes", Apply: quotes},

		// Engineer: Gap Resolution headers.
		{Name: "gr-level-3", Role: eng, Apply: replacePrefix("## Gap Resolution:", "### Gap Resolution:")},
		{Name: "gr-level-1", Role: eng, Apply: replacePrefix("## Gap Resolution:", "# Gap Resolution:")},
		{Name: "gr-level-4", Role: eng, Apply: replacePrefix("## Gap Resolution:", "#### Gap Resolution:")},
		{Name: "gr-demote-second", Role: eng, Apply: func(t string, _ *rand.Rand) (string, bool) {
			return mapLines(t, prefixed("## Gap Resolution:"), second, func(s string) string { return "#" + s })
		}},
		{Name: "gr-em-dash", Role: eng, Apply: replacePrefix("## Gap Resolution:", "## Gap Resolution —")},
		{Name: "gr-en-dash", Role: eng, Apply: replacePrefix("## Gap Resolution:", "## Gap Resolution –")},
		{Name: "gr-hyphen", Role: eng, Apply: replacePrefix("## Gap Resolution:", "## Gap Resolution -")},
		{Name: "gr-no-separator", Role: eng, Apply: idHeader("## Gap Resolution: ", "GAP-", func(rest string) string { return "## Gap Resolution " + rest })},
		{Name: "gr-lower-case", Role: eng, Apply: replacePrefix("## Gap Resolution:", "## gap resolution:")},
		{Name: "gr-upper-case", Role: eng, Apply: replacePrefix("## Gap Resolution:", "## GAP RESOLUTION:")},
		{Name: "gr-numbered", Role: eng, Apply: numbered("## Gap Resolution:", "## %d. Gap Resolution:")},
		{Name: "gr-emoji", Role: eng, Apply: replacePrefix("## Gap Resolution:", "## ✅ Gap Resolution:")},
		{Name: "gr-emphasis", Role: eng, Apply: replacePrefix("## Gap Resolution:", "## **Gap Resolution:**")},
		{Name: "gr-bold-line", Role: eng, Apply: idHeader("## Gap Resolution: ", "GAP-", func(rest string) string { return "**Gap Resolution: " + rest + "**" })},
		{Name: "gr-bold-label", Role: eng, Apply: idHeader("## Gap Resolution: ", "GAP-", func(rest string) string { return "**Gap Resolution:** " + rest })},
		{Name: "gr-setext", Role: eng, Apply: setext("## Gap Resolution: ", "-")},
		{Name: "gr-setext-equals", Role: eng, Apply: setext("## Gap Resolution: ", "=")},
		{Name: "gr-closing-hashes", Role: eng, Apply: closingHashes("## Gap Resolution: ")},
		{Name: "gr-title-after-id", Role: eng, Apply: idHeader("## Gap Resolution: ", "GAP-", func(rest string) string { return "## Gap Resolution: " + rest + " — Resolution" })},

		// Engineer: confidence, sections, DISAGREE.
		{Name: "confidence-bold-whole", Role: eng, Apply: confidence(func(v string) string { return "**Confidence: " + v + "**" })},
		{Name: "confidence-colon-outside", Role: eng, Apply: confidence(func(v string) string { return "**Confidence**: " + v })},
		{Name: "confidence-level", Role: eng, Apply: confidence(func(v string) string { return "**Confidence Level:** " + v })},
		{Name: "confidence-plain", Role: eng, Apply: confidence(func(v string) string { return "Confidence: " + v })},
		{Name: "confidence-list", Role: eng, Apply: confidence(func(v string) string { return "- **Confidence:** " + v })},
		{Name: "confidence-heading", Role: eng, Apply: confidence(func(v string) string { return "### Confidence: " + v })},
		{Name: "confidence-lower-case", Role: eng, Apply: confidence(func(v string) string { return "**Confidence:** " + strings.ToLower(v) })},
		{Name: "new-gaps-short", Role: eng, Apply: exact("### New Gaps Introduced", "### New Gaps")},
		{Name: "new-gaps-numbered", Role: eng, Apply: exact("### New Gaps Introduced", "### 4. New Gaps Introduced")},
		{Name: "new-gaps-bold", Role: eng, Apply: exact("### New Gaps Introduced", "**New Gaps Introduced:**")},
		{Name: "tradeoffs-one-word", Role: eng, Apply: exact("### Trade-offs", "### Tradeoffs")},
		{Name: "tradeoffs-numbered", Role: eng, Apply: exact("### Trade-offs", "### 3. Trade-offs")},
		{Name: "disagree-case", Role: eng, Apply: replacePrefix("## DISAGREE:", "## Disagree:")},
		{Name: "disagree-h3-em-dash", Role: eng, Apply: replacePrefix("## DISAGREE:", "### DISAGREE —")},
		{Name: "disagree-bold-line", Role: eng, Apply: idHeader("## DISAGREE: ", "ISSUE-", func(rest string) string { return "**DISAGREE: " + rest + "**" })},
		{Name: "disagree-label-colon-outside", Role: eng, Apply: labels(func(l string) string { return "**" + l + "**:" })},
		{Name: "disagree-label-lower-case", Role: eng, Apply: labels(func(l string) string { return "**" + strings.ToLower(l) + ":**" })},
		{Name: "commented-out-header", Role: eng, Apply: insertAt("<!-- ## Gap Resolution: GAP-ZZZ-990\nan earlier draft -->")},

		// Reviewer: the review header and severity headings.
		{Name: "review-level-3", Role: rev, Apply: replacePrefix("## Review:", "### Review:")},
		{Name: "review-level-1", Role: rev, Apply: replacePrefix("## Review:", "# Review:")},
		{Name: "review-em-dash", Role: rev, Apply: replacePrefix("## Review:", "## Review —")},
		{Name: "review-lower-case", Role: rev, Apply: replacePrefix("## Review:", "## review:")},
		{Name: "review-emoji", Role: rev, Apply: replacePrefix("## Review:", "## 📝 Review:")},
		{Name: "review-bold-line", Role: rev, Apply: idHeader("## Review: ", "", func(rest string) string { return "**Review: " + rest + "**" })},
		{Name: "severity-word-only", Role: rev, Apply: severity(func(sev, title string) string { return "### " + sev })},
		{Name: "severity-priority-issues", Role: rev, Apply: severity(func(sev, title string) string { return "### " + sev + "-Priority Issues" })},
		{Name: "severity-severity", Role: rev, Apply: severity(func(sev, title string) string { return "### " + sev + " Severity" })},
		{Name: "severity-level-2", Role: rev, Apply: severity(func(sev, title string) string { return "## " + title })},
		{Name: "severity-level-4", Role: rev, Apply: severity(func(sev, title string) string { return "#### " + title })},
		{Name: "severity-numbered", Role: rev, Apply: severityNumbered},
		{Name: "severity-bold-line", Role: rev, Apply: func(t string, _ *rand.Rand) (string, bool) {
			return mapLines(t, func(s string) bool { _, _, ok := severityLine(s); return ok }, nil,
				func(s string) string { return "**" + strings.TrimSpace(s[len("### "):]) + "**" })
		}},
		{Name: "severity-emoji", Role: rev, Apply: severity(func(sev, title string) string { return "### " + severityEmoji(sev) + " " + title })},
		{Name: "severity-upper-case", Role: rev, Apply: severity(func(sev, title string) string { return "### " + strings.ToUpper(title) })},
		{Name: "severity-major", Role: rev, Apply: exact("### High Priority", "### Major Issues")},
		{Name: "issues-as-headings", Role: rev, Apply: issueHeadings},
		{Name: "new-gaps-identified-short", Role: rev, Apply: exact("### New Gaps Identified", "### New Gaps")},
		{Name: "commented-out-issue", Role: rev, Apply: insertAt("<!--\n### Critical Issues\n- **ISSUE-R99-999**: a draft finding\n-->")},

		// The integrated spec.
		{Name: "log-level-3", Role: Integration, Apply: replacePrefix("## Resolution Log", "### Resolution Log")},
		{Name: "log-level-1", Role: Integration, Apply: replacePrefix("## Resolution Log", "# Resolution Log")},
		{Name: "log-bold-line", Role: Integration, Apply: exact("## Resolution Log", "**Resolution Log**")},
		{Name: "limitations-numbered", Role: Integration, Apply: replacePrefix("## Known Limitations", "## 9. Known Limitations")},
		{Name: "limitations-upper-case", Role: Integration, Apply: replacePrefix("## Known Limitations", "## KNOWN LIMITATIONS")},
	}
}

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

var (
	preambles = [...]string{"Here is my answer.", "Sure! Below is the revised document.", "Certainly. I have worked through each item in turn."}
	closings  = [...]string{"I hope this helps.", "Let me know if you would like any section expanded.", "All items above are ready for the next step."}
	thoughts  = [...]string{"The task asks for the format below; I will keep every section.", "First the resolutions, then what is new.\nGAP-ZZZ-950 is not mine to resolve."}
)

// think puts a closed thinking block before the answer.
func think(open, close string) func(string, *rand.Rand) (string, bool) {
	return func(t string, r *rand.Rand) (string, bool) {
		return open + "\n" + pick(r, thoughts[:]) + "\n" + close + "\n\n" + t, true
	}
}

// thinkUnclosed puts an unclosed thinking block before an answer whose
// first line is a heading, where the block is read to end.
func thinkUnclosed(t string, r *rand.Rand) (string, bool) {
	first := strings.TrimLeft(strings.TrimPrefix(t, "\uFEFF"), " \t\r\n")
	if !strings.HasPrefix(first, "#") || !hasHeading(first) {
		return t, false
	}
	return "<think>\n" + pick(r, thoughts[:]) + "\n\n" + first, true
}

// rules puts a thematic break before every level-2 heading that follows a
// blank line.
func rules(t string, _ *rand.Rand) (string, bool) {
	ls := split(t)
	var out []line
	changed := false
	for i, l := range ls {
		if i > 0 && !l.fence && strings.HasPrefix(l.text, "## ") && strings.TrimSpace(ls[i-1].text) == "" && !ls[i-1].fence {
			out = append(out, line{text: "---"}, line{text: ""})
			changed = true
		}
		out = append(out, l)
	}
	return join(out), changed
}

// zeroWidth puts a zero-width space inside one gap ID outside fences.
func zeroWidth(t string, r *rand.Rand) (string, bool) {
	return mapLines(t, func(s string) bool { return len(gap.FindIDMatches(s)) > 0 }, one(r), func(s string) string {
		m := gap.FindIDMatches(s)[0]
		return s[:m.Start+4] + "\u200b" + s[m.Start+4:]
	})
}

// quotes turns straight double quotes outside fences into typographic ones.
func quotes(t string, _ *rand.Rand) (string, bool) {
	return mapLines(t, func(s string) bool { return strings.Count(s, `"`) >= 2 && !strings.Contains(s, "`") }, nil, func(s string) string {
		var b strings.Builder
		open := true
		for _, c := range s {
			if c == '"' {
				if open {
					b.WriteString("\u201c")
				} else {
					b.WriteString("\u201d")
				}
				open = !open
				continue
			}
			b.WriteRune(c)
		}
		return b.String()
	})
}

// idHeader rewrites header lines "prefix rest" whose rest starts with lit
// ("GAP-"; "" for any) and holds no emphasis of its own.
func idHeader(prefix, lit string, f func(rest string) string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		return mapLines(t, func(s string) bool {
			rest, ok := strings.CutPrefix(s, prefix)
			return ok && strings.HasPrefix(rest, lit) && !strings.ContainsAny(rest, "*_`") && strings.TrimSpace(rest) != ""
		}, nil, func(s string) string { return f(strings.TrimSpace(s[len(prefix):])) })
	}
}

// numbered numbers the header lines starting with prefix.
func numbered(prefix, format string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		n := 0
		return mapLines(t, prefixed(prefix), nil, func(s string) string {
			n++
			return strings.Replace(format, "%d", itoa(n), 1) + s[len(prefix):]
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// setext writes header lines "prefix rest" as setext headings, where a
// blank line comes before them.
func setext(prefix, under string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		ls := split(t)
		var out []line
		changed := false
		for i, l := range ls {
			if !l.fence && strings.HasPrefix(l.text, prefix) && (i == 0 || strings.TrimSpace(ls[i-1].text) == "") {
				title := strings.TrimPrefix(l.text, "## ")
				out = append(out, line{text: title}, line{text: strings.Repeat(under, len(title))})
				changed = true
				continue
			}
			out = append(out, l)
		}
		return join(out), changed
	}
}

// closingHashes ends header lines starting with prefix with " ##".
func closingHashes(prefix string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		return mapLines(t, func(s string) bool { return strings.HasPrefix(s, prefix) && !strings.HasSuffix(s, "#") }, nil,
			func(s string) string { return strings.TrimRight(s, " ") + " ##" })
	}
}

// exact rewrites lines that read exactly old.
func exact(old, new string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		return mapLines(t, func(s string) bool { return strings.TrimRight(s, " ") == old }, nil, func(string) string { return new })
	}
}

// confidence rewrites "**Confidence:** value" lines through f.
func confidence(f func(value string) string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		return mapLines(t, func(s string) bool {
			v, ok := strings.CutPrefix(s, "**Confidence:**")
			return ok && strings.TrimSpace(v) != "" && !strings.ContainsAny(v, "*_`")
		}, nil, func(s string) string { return f(strings.TrimSpace(s[len("**Confidence:**"):])) })
	}
}

// disagreeLabels are the DISAGREE fields as the format writes them.
var disagreeLabels = [...]string{"Reviewer Concern", "Engineer Position", "Rationale"}

// labels rewrites the DISAGREE labels that open a line of a DISAGREE
// block through f.
func labels(f func(label string) string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		ls := split(t)
		in, changed := false, false
		for i, l := range ls {
			if l.fence {
				continue
			}
			if strings.HasPrefix(l.text, "#") {
				in = strings.HasPrefix(l.text, "## DISAGREE: ")
				continue
			}
			for _, lb := range disagreeLabels {
				if rest, ok := strings.CutPrefix(l.text, "**"+lb+":**"); ok && in {
					ls[i].text, changed = f(lb)+rest, true
				}
			}
		}
		return join(ls), changed
	}
}

// severityTitles are the format's severity headings and their words.
var severityTitles = [...]struct{ title, word string }{
	{"Critical Issues", "Critical"}, {"High Priority", "High"}, {"Medium Priority", "Medium"}, {"Low Priority", "Low"},
}

// severityEmoji is the traffic-light emoji models put before a severity.
func severityEmoji(word string) string {
	switch word {
	case "Critical":
		return "🔴"
	case "High":
		return "🟠"
	case "Medium":
		return "🟡"
	}
	return "🟢"
}

// severity rewrites "### <severity title>" headings through f, keeping
// what follows the title ("### Low Priority / Nits").
func severity(f func(word, title string) string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		return mapLines(t, func(s string) bool { _, _, ok := severityLine(s); return ok }, nil, func(s string) string {
			word, title, _ := severityLine(s)
			return f(word, title) + s[len("### ")+len(title):]
		})
	}
}

// severityLine reads a "### <severity title>…" line.
func severityLine(s string) (word, title string, ok bool) {
	for _, st := range severityTitles {
		if strings.HasPrefix(s, "### "+st.title) {
			return st.word, st.title, true
		}
	}
	return "", "", false
}

func severityNumbered(t string, _ *rand.Rand) (string, bool) {
	n := 0
	return severity(func(_, title string) string {
		n++
		return "### " + itoa(n) + ". " + title
	})(t, nil)
}

// issueHeadings writes the top-level issue entries "- **ISSUE-…**: x" as
// "#### ISSUE-…: x" headings.
func issueHeadings(t string, _ *rand.Rand) (string, bool) {
	return mapLines(t, func(s string) bool {
		ms := gap.FindIssueMatches(s)
		return strings.HasPrefix(s, "- **ISSUE-R") && len(ms) > 0 && strings.HasPrefix(s[ms[0].End:], "**")
	}, nil, func(s string) string {
		m := gap.FindIssueMatches(s)[0]
		return "#### " + m.ID + s[m.End+2:]
	})
}
