package convergence

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func TestTableFlow002Example(t *testing.T) {
	ledgers := flow002Ledgers(t)
	tr := mustTracker(t, Settings{StallRounds: 2, DivergenceNet: -2, Weights: gap.UnitWeights()})
	for round := 1; round < len(ledgers); round++ {
		tr.Observe(round, ledgers[round-1], ledgers[round])
	}
	want := `| Round | Gaps Start | Resolved | Deferred | New | Reopened | Gaps End | Net | Weighted Net | State              |
|-------|------------|----------|----------|-----|----------|----------|-----|--------------|--------------------|
| 1     | 25         | 3        | 0        | 2   | 0        | 24       | +1  | +1           | CONVERGING         |
| 2     | 24         | 4        | 0        | 4   | 0        | 24       | 0   | 0            | STALLED(1)         |
| 3     | 24         | 1        | 0        | 5   | 0        | 28       | -4  | -4           | DIVERGENCE_WARNING |
`
	if diff := cmp.Diff(want, Table(tr.Rows())); diff != "" {
		t.Errorf("Table (-want +got):\n%s", diff)
	}
}

func TestTableEmpty(t *testing.T) {
	got := Table(nil)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "| Round ") || !strings.HasPrefix(lines[1], "|---") {
		t.Errorf("Table(nil) = %q, want header and separator only", got)
	}
}

// svgStats walks an SVG document with encoding/xml, failing on any syntax
// error, and counts elements by their class attribute.
type svgStats struct {
	root      string
	classes   map[string]int // each class word → elements carrying it
	polylines map[string]int // series class → number of points
	texts     []string
}

func parseSVG(t *testing.T, doc []byte) svgStats {
	t.Helper()
	st := svgStats{classes: map[string]int{}, polylines: map[string]int{}}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, doc)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				st.root = el.Name.Space + " " + el.Name.Local
			}
			depth++
			var class, points string
			for _, a := range el.Attr {
				switch a.Name.Local {
				case "class":
					class = a.Value
				case "points":
					points = a.Value
				}
			}
			for _, c := range strings.Fields(class) {
				st.classes[c]++
			}
			if el.Name.Local == "polyline" {
				st.polylines[class] = len(strings.Fields(points))
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			if s := strings.TrimSpace(string(el)); s != "" {
				st.texts = append(st.texts, s)
			}
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced SVG, depth %d", depth)
	}
	return st
}

func svgRows(n int) []Row {
	rows := make([]Row, n)
	states := []State{Converging, Stalled(1), DivergenceWarning}
	for i := range rows {
		rows[i] = Row{Round: i + 1, GapsEnd: 30 - i%7, WeightedOpen: 90 - 3*(i%11), Net: i%5 - 2, WeightedNet: i%3 - 1, State: states[i%3]}
	}
	return rows
}

func TestSVG(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 99} {
		t.Run(strings.Repeat("I", min(n, 5)), func(t *testing.T) {
			rows := svgRows(n)
			doc := SVG(rows)
			st := parseSVG(t, doc)
			if st.root != "http://www.w3.org/2000/svg svg" {
				t.Errorf("root element %q, want svg in the SVG namespace", st.root)
			}
			want := map[string]int{"point": n, "point-weighted": n}
			for _, r := range rows {
				cls, _ := stateStyle(r.State)
				want[cls]++
			}
			for cls, count := range want {
				if st.classes[cls] != count {
					t.Errorf("%d elements of class %q, want %d", st.classes[cls], cls, count)
				}
			}
			if n > 0 {
				if got := st.polylines["series series-open"]; got != n {
					t.Errorf("open-gaps line has %d points, want %d", got, n)
				}
				if got := st.polylines["series series-weighted"]; got != n {
					t.Errorf("weighted line has %d points, want %d", got, n)
				}
			} else if st.classes["empty"] != 1 {
				t.Error("no 'No rounds recorded yet' note for zero rows")
			}
			for _, text := range []string{chartTitle, "Round", openAxisLabel, weightAxisLabel, "Converging", "Stalled", "Divergence warning"} {
				if !contains(st.texts, text) {
					t.Errorf("missing text %q", text)
				}
			}
			if !bytes.Equal(doc, SVG(rows)) {
				t.Error("two renderings of the same rows differ")
			}
		})
	}
}

func TestSVGEscapesText(t *testing.T) {
	doc := SVG([]Row{{Round: 1, GapsEnd: 3, State: State(`<b>&"x"`)}})
	st := parseSVG(t, doc)
	if st.classes["state-unknown"] != 1 {
		t.Errorf("unknown state not drawn as such: %v", st.classes)
	}
	if !strings.Contains(strings.Join(st.texts, "\n"), `<b>&"x"`) {
		t.Error("state text did not survive escaping")
	}
}

func TestSVGLabelsThinOut(t *testing.T) {
	st := parseSVG(t, SVG(svgRows(99)))
	// Round labels are the numeric texts of the x axis; 99 rounds on a
	// stride of 10 gives rounds 1, 11, …, 91.
	var labels int
	for _, s := range st.texts {
		if s == "1" || s == "11" || s == "91" {
			labels++
		}
	}
	if labels < 3 {
		t.Errorf("expected round labels 1, 11 and 91, texts: %v", st.texts)
	}
	if contains(st.texts, "2") && contains(st.texts, "3") && contains(st.texts, "4") {
		t.Error("every round is labelled; labels should thin out")
	}
}

func TestNiceScale(t *testing.T) {
	tests := []struct {
		values []int
		want   scale
	}{
		{nil, scale{lo: 0, hi: 1, step: 1}},
		{[]int{0, 0}, scale{lo: 0, hi: 1, step: 1}},
		{[]int{3}, scale{lo: 0, hi: 3, step: 1}},
		{[]int{28, 24, 25}, scale{lo: 0, hi: 30, step: 10}},
		{[]int{90}, scale{lo: 0, hi: 100, step: 20}},
		{[]int{-7, 12}, scale{lo: -10, hi: 15, step: 5}},
		{[]int{1234}, scale{lo: 0, hi: 1500, step: 500}},
	}
	for _, tt := range tests {
		got := niceScale(tt.values)
		if got != tt.want {
			t.Errorf("niceScale(%v) = %+v, want %+v", tt.values, got, tt.want)
		}
		if ticks := got.ticks(); ticks[0] != got.lo || ticks[len(ticks)-1] != got.hi || len(ticks) > yTicks+2 {
			t.Errorf("niceScale(%v) ticks %v", tt.values, ticks)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
