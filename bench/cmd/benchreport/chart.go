package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// handoffChart draws the hand-off latency p50 and p99 of every hand-off
// configuration as horizontal bars on a logarithmic axis, as SVG.
func handoffChart(res *Results) []byte {
	const (
		labelW = 330.0
		plotW  = 430.0
		rightW = 80.0
		top    = 72.0
		barH   = 11.0
		rowH   = 2*barH + 12
		bottom = 44.0
		p50C   = "#4c78a8"
		p99C   = "#f58518"
	)
	rows := res.Handoff
	width := labelW + plotW + rightW
	height := top + rowH*float64(len(rows)) + bottom

	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		for _, v := range []float64{r.P50, r.P99} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1e3, 1e9
	}
	// Decades of nanoseconds, at least 1 µs … 10 µs.
	dLo := math.Floor(math.Log10(lo))
	dHi := math.Ceil(math.Log10(hi))
	if dHi <= dLo {
		dHi = dLo + 1
	}
	x := func(ns float64) float64 {
		if ns <= 0 {
			return labelW
		}
		f := (math.Log10(ns) - dLo) / (dHi - dLo)
		return labelW + math.Max(0, math.Min(1, f))*plotW
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="15" font-weight="bold">Contended hand-off latency (%d goroutines, one key), log scale</text>`+"\n", 10.0, res.Opts.Workers)
	fmt.Fprintf(&b, `<text x="%.0f" y="38" fill="#555">time from the holder's Unlock returning to the next holder's Lock returning · Redis %s · %s</text>`+"\n",
		10.0, html.EscapeString(res.Env.Redis), html.EscapeString(res.Env.Date))
	fmt.Fprintf(&b, `<text x="%.0f" y="54" fill="#555">recommended: the library's defaults or documented settings · tight: poll every 1 ms (lockbridge modern: notifications off)</text>`+"\n", 10.0)
	// Legend.
	fmt.Fprintf(&b, `<rect x="%.0f" y="28" width="12" height="11" fill="%s"/><text x="%.0f" y="38">p50</text>`+"\n",
		width-130, p50C, width-114)
	fmt.Fprintf(&b, `<rect x="%.0f" y="28" width="12" height="11" fill="%s"/><text x="%.0f" y="38">p99</text>`+"\n",
		width-75, p99C, width-59)
	// Grid and ticks.
	axisY := top + rowH*float64(len(rows))
	for d := dLo; d <= dHi; d++ {
		ns := math.Pow(10, d)
		gx := x(ns)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", gx, top-4, gx, axisY)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" fill="#333">%s</text>`+"\n", gx, axisY+16, tick(ns))
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`+"\n", labelW, axisY, labelW+plotW,
		axisY)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle" fill="#333">hand-off latency</text>`+"\n",
		labelW+plotW/2, axisY+34)
	for i, r := range rows {
		y := top + rowH*float64(i)
		label := r.Name + " — " + r.Wait
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", labelW-8, y+barH+4,
			html.EscapeString(label))
		for j, v := range []float64{r.P50, r.P99} {
			c := p50C
			if j == 1 {
				c = p99C
			}
			by := y + float64(j)*barH
			w := x(v) - labelW
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/>`+"\n", labelW, by, math.Max(w, 1),
				barH-1, c)
			label := fmtDur(v)
			if v < math.Pow(10, dLo) {
				label = "< " + tick(math.Pow(10, dLo))
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="#333">%s</text>`+"\n", labelW+math.Max(w, 1)+4,
				by+barH-2, label)
		}
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// tick formats a power of ten of nanoseconds.
func tick(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.0f ms", ns/1e6)
	}
	return fmt.Sprintf("%.0f s", ns/1e9)
}

// fmtDur formats nanoseconds with three significant digits at most.
func fmtDur(ns float64) string {
	switch {
	case ns <= 0:
		return "0"
	case ns < 1e3:
		return trim(ns) + " ns"
	case ns < 1e6:
		return trim(ns/1e3) + " µs"
	case ns < 1e9:
		return trim(ns/1e6) + " ms"
	}
	return trim(ns/1e9) + " s"
}

func trim(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
