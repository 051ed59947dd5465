package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The charts' file names.
const (
	chartCycle   = "scale-cycle.svg"
	chartMany    = "scale-many.svg"
	chartHandoff = "scale-handoff.svg"
)

var palette = []string{"#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2"}

// bars is a horizontal grouped bar chart: one group per label, one bar per
// series in each.
type bars struct {
	title, subtitle, axis string
	series                []string
	groups                []string
	values                [][]float64 // [group][series]; 0 or NaN: no bar
	log                   bool        // logarithmic axis (values > 0)
	base                  float64     // linear axis: where bars start
	label                 func(float64) string
	tick                  func(float64) string
}

func (c *bars) svg() []byte {
	const (
		labelW, plotW, rightW = 300.0, 420.0, 70.0
		barH, gap             = 10.0, 10.0
	)
	width := labelW + plotW + rightW
	// The legend flows over as many lines as it needs.
	type item struct{ x, y float64 }
	items := make([]item, len(c.series))
	lx, ly := 10.0, 48.0
	for i, s := range c.series {
		w := 25 + 6.2*float64(len([]rune(s)))
		if lx > 10 && lx+w > width-10 {
			lx, ly = 10, ly+15
		}
		items[i] = item{lx, ly}
		lx += w
	}
	top := ly + 30
	groupH := barH*float64(len(c.series)) + gap
	axisY := top + groupH*float64(len(c.groups))
	lo, hi := c.domain()
	x := func(v float64) float64 {
		f := (v - lo) / (hi - lo)
		if c.log {
			f = (math.Log10(v) - lo) / (hi - lo)
		}
		return labelW + math.Max(0, math.Min(1, f))*plotW
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif" font-size="11">`+"\n", width, axisY+44, width, axisY+44)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(c.title))
	fmt.Fprintf(&b, `<text x="10" y="37" fill="#555">%s</text>`+"\n", html.EscapeString(c.subtitle))
	for i, s := range c.series {
		it := items[i]
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="11" height="10" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			it.x, it.y, palette[i%len(palette)], it.x+15, it.y+9, html.EscapeString(s))
	}
	for _, t := range c.ticks(lo, hi) {
		gx := x(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", gx, top-4, gx, axisY)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" fill="#333">%s</text>`+"\n", gx, axisY+15, c.tick(t))
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`+"\n", labelW, axisY, labelW+plotW,
		axisY)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle" fill="#333">%s</text>`+"\n", labelW+plotW/2, axisY+32,
		html.EscapeString(c.axis))
	for g, label := range c.groups {
		y := top + groupH*float64(g)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", labelW-8,
			y+barH*float64(len(c.series))/2+4, html.EscapeString(label))
		for s, v := range c.values[g] {
			if v == 0 || math.IsNaN(v) {
				continue
			}
			by, x0 := y+float64(s)*barH, x(c.start(lo))
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/>`+"\n", x0, by, math.Max(x(v)-x0, 1),
				barH-1, palette[s%len(palette)])
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="9" fill="#333">%s</text>`+"\n", math.Max(x(v), x0+1)+3,
				by+barH-2, html.EscapeString(c.label(v)))
		}
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// start is where bars begin on the axis.
func (c *bars) start(lo float64) float64 {
	if c.log {
		return math.Pow(10, lo)
	}
	return c.base
}

// domain is the axis' range: decades (log10) for a log axis.
func (c *bars) domain() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, vs := range c.values {
		for _, v := range vs {
			if v > 0 && !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	if c.log {
		lo, hi = math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if hi <= lo {
			hi = lo + 1
		}
		return lo, hi
	}
	lo = math.Min(c.base, lo)
	return lo, lo + (hi-lo)*1.08 + 1e-9
}

func (c *bars) ticks(lo, hi float64) []float64 {
	var ts []float64
	if c.log {
		for d := lo; d <= hi; d++ {
			ts = append(ts, math.Pow(10, d))
		}
		return ts
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/4)))
	for (hi-lo)/step > 8 {
		step *= 2
	}
	for t := math.Ceil(lo/step) * step; t <= hi; t += step {
		ts = append(ts, t)
	}
	return ts
}
