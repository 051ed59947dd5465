package main

import (
	"fmt"
	"math"
	"slices"
)

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratios are a[i] ÷ b[i].
func ratios(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		if a[i] > 0 && b[i] > 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}

// diffs are a[i] − b[i].
func diffs(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, n)
	for i := 0; i < n; i++ {
		out[i] = a[i] - b[i]
	}
	return out
}

// ratioCell formats the median of rs and its min–max: "1.07× ⁽1.02–1.12⁾".
func ratioCell(rs []float64) string {
	if len(rs) == 0 {
		return "–"
	}
	if len(rs) == 1 {
		return fmt.Sprintf("%.2f×", rs[0])
	}
	return fmt.Sprintf("%.2f× <sub>%.2f–%.2f</sub>", median(rs), slices.Min(rs), slices.Max(rs))
}

// usDiffCell formats the median of ds (ns) in µs with its min–max.
func usDiffCell(ds []float64) string {
	if len(ds) == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.1f <sub>%+.1f…%+.1f</sub>", median(ds)/1e3, slices.Min(ds)/1e3, slices.Max(ds)/1e3)
}

// us formats ns as µs.
func us(ns float64) string {
	if ns == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", ns/1e3)
}

// dur formats ns with three significant digits at most.
func dur(ns float64) string {
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

// pct formats a share as a signed percentage.
func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// maxDev is the largest |x − mean| ÷ mean of xs, signed by the node it is
// found on (positive: above the mean).
func maxDev(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	mean := 0.0
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	if mean == 0 {
		return math.NaN()
	}
	best := 0.0
	for _, x := range xs {
		if d := (x - mean) / mean; math.Abs(d) > math.Abs(best) {
			best = d
		}
	}
	return best
}
