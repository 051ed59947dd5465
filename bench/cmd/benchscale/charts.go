package main

import (
	"fmt"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
)

// renderCharts returns the charts the results allow, by file name.
func renderCharts(res *Results) map[string][]byte {
	out := map[string][]byte{}
	if c := cycleChart(res); c != nil {
		out[chartCycle] = c.svg()
	}
	if res.Many != nil {
		out[chartMany] = manyChart(res).svg()
	}
	if res.Handoff != nil {
		out[chartHandoff] = handoffChart(res).svg()
	}
	return out
}

// cycleChart: each implementation's cycle ÷ its floor's, on loopback with
// the cores halting and awake, and at each added round trip.
func cycleChart(res *Results) *bars {
	c := &bars{title: "Uncontended cycle ÷ the minimal correct lock on the same client",
		subtitle: "median of paired blocks; the extra µs stay, the round trip around them grows",
		axis:     "time per cycle ÷ the floor's", base: 1,
		label: func(v float64) string { return fmt.Sprintf("%.2f×", v) },
		tick:  func(v float64) string { return fmt.Sprintf("%.2f", v) }}
	var sets [][]PairRow
	if res.Cycle != nil {
		// Halting first, then awake (blocks, then cycles in turn).
		for _, want := range []struct{ awake, blocks bool }{{false, false}, {true, true}, {true, false}} {
			for _, rg := range res.Cycle.Regimes {
				if rg.Awake == want.awake && rg.Blocks == want.blocks {
					c.series = append(c.series, "loopback, "+rg.Name)
					sets = append(sets, rg.Rows)
				}
			}
		}
	}
	if res.Latency != nil {
		for _, lv := range res.Latency.Levels {
			c.series = append(c.series, fmt.Sprintf("+%v round trip", lv.RTT))
			sets = append(sets, lv.Cycle)
		}
	}
	if len(sets) == 0 {
		return nil
	}
	for _, id := range cycleIDs {
		if id == impls.Floor.ID || id == impls.FloorRueidis.ID {
			continue
		}
		im, _ := impls.ByID(id)
		vs := make([]float64, len(sets))
		for i, rows := range sets {
			if row, ok := pairRow(rows, id); ok {
				vs[i] = median(ratios(row.Ns, row.FloorNs))
			}
		}
		c.groups = append(c.groups, im.Name)
		c.values = append(c.values, vs)
	}
	return c
}

// manyChart: server CPU per acquisition on each deployment, the largest
// key count.
func manyChart(res *Results) *bars {
	m := res.Many
	keys := 0
	for _, k := range manyKeyCounts(m) {
		keys = max(keys, k)
	}
	c := &bars{title: fmt.Sprintf("Many locks: server CPU per acquisition (%d goroutines, %s keys)", res.Opts.ManyWorkers,
		thousands(keys)),
		subtitle: "CPU time of all the deployment's redis-servers, idle subtracted, ÷ acquisitions",
		axis:     "µs per acquisition",
		label:    func(v float64) string { return fmt.Sprintf("%.1f", v) },
		tick:     func(v float64) string { return fmt.Sprintf("%.0f", v) }}
	for _, d := range m.Deployments {
		c.series = append(c.series, d.Name)
	}
	for _, id := range rowIDs(m) {
		vs := make([]float64, len(m.Deployments))
		var name string
		for di, d := range m.Deployments {
			if row := m.row(id, keys, di); row != nil {
				vs[di], name = median(row.serverUs(d)), row.Name
			}
		}
		c.groups = append(c.groups, name)
		c.values = append(c.values, vs)
	}
	return c
}

// handoffChart: wait p50 and p99 of every hand-off row, log scale.
func handoffChart(res *Results) *bars {
	c := &bars{title: "Hand-off: a Lock call's wait, waiters each on a client of their own",
		subtitle: fmt.Sprintf("one key, holders inside %v; log scale", res.Opts.Hold),
		axis:     "wait (call to return)", log: true, series: []string{"p50", "p99"},
		label: func(v float64) string { return dur(v) },
		tick:  func(v float64) string { return dur(v) }}
	for _, row := range res.Handoff.Rows {
		dep := "one server"
		if row.Primaries > 0 {
			dep = fmt.Sprintf("%d primaries", row.Primaries)
		}
		c.groups = append(c.groups, fmt.Sprintf("%s · %s · %d waiters", shortName(row.ID, row.Name), dep, row.Waiters))
		c.values = append(c.values, []float64{row.WaitP50, row.WaitP99})
	}
	return c
}

// shortName is a chart label for an implementation.
func shortName(id, name string) string {
	switch id {
	case impls.Modern.ID:
		return "modern (go-redis)"
	case impls.ModernRueidis.ID:
		return "modern (rueidis)"
	case impls.RueidisLock.ID:
		return "rueidislock"
	}
	return name
}
