package web

import (
	"slices"
	"sort"
	"strings"

	mdscan "github.com/refine-spec/refine/internal/markdown"
)

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

// maxDiffCells bounds the LCS table (old lines × new lines) of the
// fallback diff: beyond it a region with no line unique to both sides
// shows the old text removed and the new one added, in linear time.
const maxDiffCells = 4 << 20

// lineDiff returns the line diff of markdown a against b (#40): first by
// section, then by line. The texts are cut at their headings (outside
// code); sections are paired by heading title, in order, so a heading
// kept by the new text stays a context line however much moved around
// it; each pair, and each run of unpaired sections between two pairs, is
// then diffed line by line with a patience diff (lines unique to both
// sides anchor the alignment), which never pairs a heading with an
// unrelated line because a blank or a brace repeats.
func lineDiff(a, b string) []diffLine {
	x, y := sectionsOf(a), sectionsOf(b)
	pairs := pairSections(x, y)
	out := make([]diffLine, 0, lineCount(x)+lineCount(y))
	d := &differ{budget: maxDiffCells}
	i, j := 0, 0
	for _, p := range append(pairs, [2]int{len(x), len(y)}) {
		// The sections between two pairs: diffed together.
		out = append(out, d.patience(joinSections(x[i:p[0]]), joinSections(y[j:p[1]]))...)
		if p[0] < len(x) {
			out = append(out, d.patience(x[p[0]].lines, y[p[1]].lines)...)
		}
		i, j = p[0]+1, p[1]+1
	}
	return out
}

// differ bounds a diff's work: each search for anchors costs the lines it
// reads, and once budget lines are read the rest is diffed by lcsDiff
// (itself bounded), so a text made to defeat patience (few anchors per
// level, many levels) costs time linear in maxDiffCells, not quadratic in
// its lines.
type differ struct{ budget int }

// diffSection is a text's lines from one heading to the next (the first
// holds what precedes the first heading); key is its heading's title as
// compared ("" for the first).
type diffSection struct {
	key   string
	lines []string
}

// sectionsOf cuts text at each heading outside code.
func sectionsOf(text string) []diffSection {
	lines := splitLines(text)
	if len(lines) == 0 {
		return nil
	}
	d := mdscan.Parse(text)
	var out []diffSection
	start, key := 0, ""
	for _, h := range d.Headings {
		switch at := h.Line - 1; {
		case at == start: // the text starts with a heading: it names the first section
			key = headingKey(h.Title)
		case at > start && at < len(lines):
			out = append(out, diffSection{key, lines[start:at]})
			start, key = at, headingKey(h.Title)
		}
	}
	return append(out, diffSection{key, lines[start:]})
}

// headingKey is a heading's title as sections are paired by: letter
// case, emphasis and spacing aside.
func headingKey(title string) string {
	return "#" + strings.ToLower(strings.Join(strings.Fields(strings.NewReplacer("**", "", "__", "", "`", "").Replace(title)), " "))
}

func lineCount(s []diffSection) int {
	n := 0
	for _, sec := range s {
		n += len(sec.lines)
	}
	return n
}

func joinSections(s []diffSection) []string {
	var out []string
	for _, sec := range s {
		out = append(out, sec.lines...)
	}
	return out
}

// pairSections pairs x's sections with y's by key, in order: the longest
// common subsequence of their keys (a few dozen sections: the table is
// small), each pair as [i, j].
func pairSections(x, y []diffSection) [][2]int {
	if len(x)*len(y) > maxDiffCells {
		return nil
	}
	w := len(y) + 1
	lcs := make([]int32, (len(x)+1)*w)
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i].key == y[j].key {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	var pairs [][2]int
	for i, j := 0, 0; i < len(x) && j < len(y); {
		switch {
		case x[i].key == y[j].key:
			pairs = append(pairs, [2]int{i, j})
			i++
			j++
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	return pairs
}

// patience diffs x against y: the common prefix and suffix kept, then the
// lines that occur once in each side, in the longest run that keeps their
// order, anchor the alignment, and the stretches between anchors are
// diffed the same way; a stretch with no such line falls back to a
// longest common subsequence (bounded by maxDiffCells).
func (d *differ) patience(x, y []string) []diffLine {
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
	out = append(out, d.middle(x[pre:len(x)-suf], y[pre:len(y)-suf])...)
	for _, l := range x[len(x)-suf:] {
		out = append(out, diffLine{' ', l})
	}
	return out
}

func (d *differ) middle(x, y []string) []diffLine {
	if len(x) == 0 || len(y) == 0 || d.budget < len(x)+len(y) {
		return lcsDiff(x, y)
	}
	d.budget -= len(x) + len(y)
	anchors := uniqueAnchors(x, y)
	if len(anchors) == 0 {
		return lcsDiff(x, y)
	}
	var out []diffLine
	i, j := 0, 0
	for _, a := range anchors {
		out = append(out, d.patience(x[i:a[0]], y[j:a[1]])...)
		out = append(out, diffLine{' ', x[a[0]]})
		i, j = a[0]+1, a[1]+1
	}
	return append(out, d.patience(x[i:], y[j:])...)
}

// uniqueAnchors are the pairs [i, j] of lines occurring once in x and once
// in y, x[i] == y[j], forming the longest sequence increasing in both
// (patience sorting).
func uniqueAnchors(x, y []string) [][2]int {
	type seen struct{ nx, ny, ix, iy int }
	count := map[string]*seen{}
	for i, l := range x {
		s := count[l]
		if s == nil {
			s = &seen{}
			count[l] = s
		}
		s.nx++
		s.ix = i
	}
	for j, l := range y {
		if s := count[l]; s != nil {
			s.ny++
			s.iy = j
		}
	}
	var cand [][2]int
	for _, s := range count {
		if s.nx == 1 && s.ny == 1 {
			cand = append(cand, [2]int{s.ix, s.iy})
		}
	}
	slices.SortFunc(cand, func(a, b [2]int) int { return a[0] - b[0] })
	// Longest increasing subsequence of the j's.
	var tails []int // index into cand of the smallest tail of each length
	prev := make([]int, len(cand))
	for k, c := range cand {
		n := sort.Search(len(tails), func(t int) bool { return cand[tails[t]][1] >= c[1] })
		if n > 0 {
			prev[k] = tails[n-1]
		} else {
			prev[k] = -1
		}
		if n == len(tails) {
			tails = append(tails, k)
		} else {
			tails[n] = k
		}
	}
	if len(tails) == 0 {
		return nil
	}
	out := make([][2]int, len(tails))
	for k, n := tails[len(tails)-1], len(tails)-1; n >= 0; k, n = prev[k], n-1 {
		out[n] = cand[k]
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
