package web

import "strings"

// diffLine is one line of a line diff: Op is ' ' (kept), '-' (only in the
// old text) or '+' (only in the new one).
type diffLine struct {
	Op   byte
	Text string
}

// Class names the line's CSS class.
func (d diffLine) Class() string {
	switch d.Op {
	case '+':
		return "add"
	case '-':
		return "del"
	}
	return "same"
}

// maxDiffCells bounds the LCS table (old lines × new lines): beyond it the
// diff shows the old text removed and the new one added, in linear time.
const maxDiffCells = 4 << 20

// lineDiff returns the line diff of a against b, from a longest common
// subsequence of lines; a common prefix and suffix are matched first so
// typical edits cost little.
func lineDiff(a, b string) []diffLine {
	x, y := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	out := make([]diffLine, 0, len(x)+len(y))
	for _, l := range x[:pre] {
		out = append(out, diffLine{' ', l})
	}
	out = append(out, lcsDiff(x[pre:len(x)-suf], y[pre:len(y)-suf])...)
	for _, l := range x[len(x)-suf:] {
		out = append(out, diffLine{' ', l})
	}
	return out
}

func lcsDiff(x, y []string) []diffLine {
	var out []diffLine
	if len(x)*len(y) > maxDiffCells || len(x) == 0 || len(y) == 0 {
		for _, l := range x {
			out = append(out, diffLine{'-', l})
		}
		for _, l := range y {
			out = append(out, diffLine{'+', l})
		}
		return out
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	w := len(y) + 1
	lcs := make([]int32, (len(x)+1)*w)
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			out = append(out, diffLine{' ', x[i]})
			i++
			j++
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, diffLine{'-', x[i]})
			i++
		default:
			out = append(out, diffLine{'+', y[j]})
			j++
		}
	}
	for ; i < len(x); i++ {
		out = append(out, diffLine{'-', x[i]})
	}
	for ; j < len(y); j++ {
		out = append(out, diffLine{'+', y[j]})
	}
	return out
}

func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
