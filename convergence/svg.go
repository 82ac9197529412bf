package convergence

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Chart geometry in SVG user units. The plot area leaves room for the
// title above, the two y axes on the sides and the legend below.
const (
	svgWidth    = 800
	svgHeight   = 420
	plotLeft    = 70
	plotRight   = 730
	plotTop     = 60
	plotBottom  = 320
	plotPadding = 16 // keeps the first and last point off the axes
	yTicks      = 5
	maxXLabels  = 10
)

// Series and state colours (a colour-blind-safe subset of Tableau 10).
const (
	colourOpen      = "#1f77b4"
	colourWeighted  = "#9467bd"
	colourConverge  = "#2ca02c"
	colourStalled   = "#ff7f0e"
	colourDiverge   = "#d62728"
	colourUnknown   = "#7f7f7f"
	colourAxis      = "#333333"
	colourGridLine  = "#e5e5e5"
	chartTitle      = "Convergence: open gaps per round"
	openAxisLabel   = "Open gaps"
	weightAxisLabel = "Weighted open load"
)

// SVG draws rows as a standalone SVG chart using only the standard library:
// open gaps at the end of each round (left axis, solid line) and the
// weighted open load (right axis, dashed line), with each round's point on
// the open-gaps line coloured by its state and titled with its numbers for
// hover. Rows are plotted in the order given. The output is valid XML and
// byte-for-byte deterministic; zero rows give empty axes with a note.
func SVG(rows []Row) []byte {
	open := make([]int, len(rows))
	weighted := make([]int, len(rows))
	for i, r := range rows {
		open[i] = r.GapsEnd
		weighted[i] = r.WeightedOpen
	}
	left, right := niceScale(open), niceScale(weighted)

	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(chartTitle))
	fmt.Fprintf(&b, `<rect class="background" width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<text class="title" x="%d" y="30" text-anchor="middle" font-size="16" font-weight="bold">%s</text>`+"\n", svgWidth/2, esc(chartTitle))

	writeAxes(&b, rows, left, right)
	if len(rows) == 0 {
		fmt.Fprintf(&b, `<text class="empty" x="%d" y="%d" text-anchor="middle" fill="%s">No rounds recorded yet</text>`+"\n", (plotLeft+plotRight)/2, (plotTop+plotBottom)/2, colourUnknown)
	} else {
		writeSeries(&b, rows, left, right)
	}
	writeLegend(&b)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func writeAxes(b *bytes.Buffer, rows []Row, left, right scale) {
	b.WriteString(`<g class="grid">` + "\n")
	for _, v := range left.ticks() {
		y := fmtCoord(left.y(v))
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s"/>`+"\n", plotLeft, y, plotRight, y, colourGridLine)
	}
	b.WriteString("</g>\n")

	fmt.Fprintf(b, `<g class="axis axis-left" stroke="%s">`+"\n", colourAxis)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", plotLeft, plotTop, plotLeft, plotBottom)
	for _, v := range left.ticks() {
		y := fmtCoord(left.y(v))
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s"/>`+"\n", plotLeft-5, y, plotLeft, y)
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle" stroke="none" fill="%s">%d</text>`+"\n", plotLeft-8, y, colourAxis, v)
	}
	b.WriteString("</g>\n")

	fmt.Fprintf(b, `<g class="axis axis-right" stroke="%s">`+"\n", colourWeighted)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", plotRight, plotTop, plotRight, plotBottom)
	for _, v := range right.ticks() {
		y := fmtCoord(right.y(v))
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s"/>`+"\n", plotRight, y, plotRight+5, y)
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="start" dominant-baseline="middle" stroke="none" fill="%s">%d</text>`+"\n", plotRight+8, y, colourWeighted, v)
	}
	b.WriteString("</g>\n")

	fmt.Fprintf(b, `<g class="axis axis-x" stroke="%s">`+"\n", colourAxis)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", plotLeft, plotBottom, plotRight, plotBottom)
	every := labelEvery(len(rows))
	for i, r := range rows {
		if i%every != 0 {
			continue
		}
		x := fmtCoord(xAt(i, len(rows)))
		fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d"/>`+"\n", x, plotBottom, x, plotBottom+5)
		fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle" stroke="none" fill="%s">%d</text>`+"\n", x, plotBottom+20, colourAxis, r.Round)
	}
	b.WriteString("</g>\n")

	midY := (plotTop + plotBottom) / 2
	fmt.Fprintf(b, `<text class="axis-label" x="%d" y="%d" text-anchor="middle">Round</text>`+"\n", (plotLeft+plotRight)/2, plotBottom+40)
	fmt.Fprintf(b, `<text class="axis-label" x="20" y="%d" text-anchor="middle" transform="rotate(-90 20 %d)" fill="%s">%s</text>`+"\n", midY, midY, colourOpen, esc(openAxisLabel))
	fmt.Fprintf(b, `<text class="axis-label" x="%d" y="%d" text-anchor="middle" transform="rotate(90 %d %d)" fill="%s">%s</text>`+"\n", svgWidth-20, midY, svgWidth-20, midY, colourWeighted, esc(weightAxisLabel))
}

func writeSeries(b *bytes.Buffer, rows []Row, left, right scale) {
	n := len(rows)
	openPts := make([]string, n)
	weightPts := make([]string, n)
	for i, r := range rows {
		x := fmtCoord(xAt(i, n))
		openPts[i] = x + "," + fmtCoord(left.y(r.GapsEnd))
		weightPts[i] = x + "," + fmtCoord(right.y(r.WeightedOpen))
	}
	fmt.Fprintf(b, `<polyline class="series series-weighted" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="6 4" points="%s"/>`+"\n", colourWeighted, strings.Join(weightPts, " "))
	fmt.Fprintf(b, `<polyline class="series series-open" fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colourOpen, strings.Join(openPts, " "))

	b.WriteString(`<g class="points-weighted">` + "\n")
	for i, r := range rows {
		x, y := xAt(i, n), right.y(r.WeightedOpen)
		fmt.Fprintf(b, `<rect class="point-weighted" x="%s" y="%s" width="6" height="6" fill="%s"><title>Round %d: weighted open load %d</title></rect>`+"\n",
			fmtCoord(x-3), fmtCoord(y-3), colourWeighted, r.Round, r.WeightedOpen)
	}
	b.WriteString("</g>\n")

	b.WriteString(`<g class="points-open">` + "\n")
	for i, r := range rows {
		class, colour := stateStyle(r.State)
		state := string(r.State)
		if state == "" {
			state = "no state"
		}
		fmt.Fprintf(b, `<circle class="point %s" cx="%s" cy="%s" r="4" fill="%s" stroke="#ffffff"><title>%s</title></circle>`+"\n",
			class, fmtCoord(xAt(i, n)), fmtCoord(left.y(r.GapsEnd)), colour,
			esc(fmt.Sprintf("Round %d: %d open gaps (net %s, weighted net %s), %s", r.Round, r.GapsEnd, signed(r.Net), signed(r.WeightedNet), state)))
	}
	b.WriteString("</g>\n")
}

func writeLegend(b *bytes.Buffer) {
	y := svgHeight - 25
	b.WriteString(`<g class="legend">` + "\n")
	x := plotLeft
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", x, y, x+24, y, colourOpen)
	fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", x+30, y, esc(openAxisLabel))
	x += 120
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="6 4"/>`+"\n", x, y, x+24, y, colourWeighted)
	fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", x+30, y, esc(weightAxisLabel))
	x += 170
	for _, item := range []struct{ colour, label string }{
		{colourConverge, "Converging"},
		{colourStalled, "Stalled"},
		{colourDiverge, "Divergence warning"},
	} {
		fmt.Fprintf(b, `<circle cx="%d" cy="%d" r="5" fill="%s"/>`+"\n", x+5, y, item.colour)
		fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", x+14, y, esc(item.label))
		x += 30 + 8*len(item.label)
	}
	b.WriteString("</g>\n")
}

// stateStyle returns the CSS class and colour of a state's point.
func stateStyle(s State) (class, colour string) {
	switch {
	case s == Converging:
		return "state-converging", colourConverge
	case s == DivergenceWarning:
		return "state-divergence", colourDiverge
	case s.StallCount() > 0:
		return "state-stalled", colourStalled
	}
	return "state-unknown", colourUnknown
}

// scale maps integer values onto the plot's vertical extent.
type scale struct{ lo, hi, step int }

// niceScale covers values (and zero) with bounds on multiples of a 1/2/5
// step, about yTicks ticks in all.
func niceScale(values []int) scale {
	lo, hi := 0, 0
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	step := niceStep(hi - lo)
	s := scale{lo: floorTo(lo, step), hi: ceilTo(hi, step), step: step}
	if s.hi == s.lo {
		s.hi = s.lo + step
	}
	return s
}

// niceStep returns the smallest step of the form {1,2,5}×10^k that divides
// span into at most yTicks intervals.
func niceStep(span int) int {
	if span <= 0 {
		return 1
	}
	for mag := 1; mag <= math.MaxInt/(10*yTicks*5); mag *= 10 {
		for _, f := range [...]int{1, 2, 5} {
			if f*mag*yTicks >= span {
				return f * mag
			}
		}
	}
	return span // absurd values: one interval
}

func floorTo(v, step int) int {
	q := v / step
	if v%step != 0 && v < 0 {
		q--
	}
	return q * step
}

func ceilTo(v, step int) int {
	q := v / step
	if v%step != 0 && v > 0 {
		q++
	}
	return q * step
}

func (s scale) ticks() []int {
	var out []int
	for v := s.lo; v <= s.hi; v += s.step {
		out = append(out, v)
		if v > s.hi-s.step { // stop before v+step could overflow
			break
		}
	}
	return out
}

// y returns the vertical coordinate of v; larger values sit higher.
func (s scale) y(v int) float64 {
	frac := (float64(v) - float64(s.lo)) / (float64(s.hi) - float64(s.lo))
	return plotBottom - frac*(plotBottom-plotTop)
}

// xAt spreads n points evenly across the plot; a single point is centred.
func xAt(i, n int) float64 {
	if n <= 1 {
		return (plotLeft + plotRight) / 2
	}
	inner := float64(plotRight - plotLeft - 2*plotPadding)
	return float64(plotLeft+plotPadding) + inner*float64(i)/float64(n-1)
}

// labelEvery thins round labels to at most maxXLabels, on a 1/2/5 stride.
func labelEvery(n int) int {
	for mag := 1; ; mag *= 10 {
		for _, f := range [...]int{1, 2, 5} {
			if s := f * mag; (n+s-1)/s <= maxXLabels {
				return s
			}
		}
	}
}

func fmtCoord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// esc escapes text for XML character data and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // writing to a strings.Builder cannot fail
	return b.String()
}
