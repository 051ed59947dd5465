package main

import (
	"fmt"
	"slices"
)

// cycle writes §S1: the uncontended cycle in both regimes and where its
// time goes.
func (r *report) cycle() {
	c := r.res.Cycle
	o := r.res.Opts
	r.p("### S1. The uncontended cycle, one truth\n\n")
	r.p("One goroutine, acquire + release, against one local redis-server. Every implementation's block of %d cycles "+
		"runs **one cycle of its client's floor and one of its own in turn** (`scenario.Paired`; the floor first in even "+
		"rounds), ", o.CycleOps)
	r.p("and the floor is **the minimal correct token lock** on that client: a fresh random 16-byte token per acquire " +
		"(crypto/rand, as lockbridge and bsm/redislock draw theirs), `SET key token NX PX ttl`, then `EVALSHA` of a " +
		"compare-and-delete, on the same client. ")
	r.p("The floor's own row pairs it with a twin on a client of its own: its ratio shows the method's noise. ")
	r.p("%d rounds in each of two states of the machine, interleaved round by round: the cores kept awake (a 0 µs CPU "+
		"latency request) and free to halt when idle (the VM's default); ", o.CycleRounds)
	r.p("and, with the cores awake, pairs formed the earlier way, two blocks of %d one after the other, for comparison.",
		o.CycleOps)
	if c.AwakeNote != "" {
		r.p(" **The cores could not be kept awake in this run** (%s): both regimes are the same.", c.AwakeNote)
	}
	r.p("\n\n")
	for _, rg := range c.Regimes {
		r.p("**%s** — a go-redis PING takes %s µs (median of the rounds):\n\n", rg.Name, us(median(rg.PingNs)))
		pairTable(r, rg.Rows)
	}
	if ref, ok := r.refs[chartCycle]; ok {
		r.p("![the cycle's time over its floor's, by round trip](%s)\n\n", ref)
	}
	r.p("\"÷ floor\": the median over the rounds of the block's time per cycle ÷ its floor's, min–max in small print; " +
		"\"+ µs\": the same pairs' difference. \"µs / cycle\" and \"floor beside it\": medians of the blocks. ")
	r.p("The ratio depends on what a round trip costs; the microseconds added depend on what the implementation does. ")
	r.p("With the cores free to halt, each round trip pays a core's wake-up or not, by chance, which adds the same to " +
		"both sides of a pair: the ratio comes out nearer 1 and its spread wide.\n\n")
	r.costs()
}

// pairTable writes the uncontended cycle of rows.
func pairTable(r *report, rows []PairRow) {
	r.p("| implementation | client | µs / cycle | floor beside it, µs | ÷ floor | + µs over the floor " +
		"|\n|---|---|---:|---:|---:|---:|\n")
	for _, row := range rows {
		r.p("| %s | %s | %s | %s | %s | %s |\n", row.Name, row.Client, us(median(row.Ns)), us(median(row.FloorNs)),
			ratioCell(ratios(row.Ns, row.FloorNs)), usDiffCell(diffs(row.Ns, row.FloorNs)))
	}
	r.p("\n")
}

// costs writes where the cycle's time goes.
func (r *report) costs() {
	c := r.res.Cycle
	if len(c.Costs) == 0 {
		return
	}
	o := r.res.Opts
	var awake []PairRow
	for _, rg := range c.Regimes {
		if rg.Awake && !rg.Blocks {
			awake = rg.Rows
		}
	}
	r.p("**Where the time goes.** Per cycle: the commands sent (round trips, counted under `MONITOR`); the server's "+
		"execution of them (INFO commandstats) and its process CPU (INFO cpu, %d cycles of one goroutine); ", o.ServerOps)
	r.p("this process's CPU (getrusage) with 64 goroutines over 1,000 keys keeping both cores busy, %d cycles, so that "+
		"the Go runtime's spinning while a lone goroutine waits is not counted, and the server's CPU in that same pass; "+
		"heap allocations (least of three runs of %d cycles). ", o.ClientOps, o.AllocOps)
	r.p("\"Δ\" columns are against the floor of the same client.\n\n")
	r.p("| implementation | round trips | sent per cycle | server exec µs | server CPU µs | client CPU µs (busy) | " +
		"server CPU µs (busy) | allocs | + µs over the floor, cores awake | Δ client CPU µs | Δ server CPU µs |\n")
	r.p("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range c.Costs {
		fl := costRow(c.Costs, floorIDOfClient(row.Client))
		extra := "–"
		if pr, ok := pairRow(awake, row.ID); ok {
			extra = fmt.Sprintf("%+.1f", median(diffs(pr.Ns, pr.FloorNs))/1e3)
		}
		r.p("| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.0f | %s | %+.1f | %+.1f |\n", row.Name, num(row.RoundTrips),
			row.Sent, row.ExecUs, row.ServerCPUUs,
			row.ClientCPUUs, row.ServerCPUBusyUs, row.Allocs, extra, row.ClientCPUUs-fl.ClientCPUUs,
			row.ServerCPUBusyUs-fl.ServerCPUBusyUs)
	}
	r.p("\nEvery implementation here sends two commands per cycle, so round trips add nothing over the floor: what an " +
		"implementation adds is client CPU (its lock logic, its allocations, goroutines it hands work to) and server time " +
		"(what its scripts run beyond a compare-and-delete). ")
	r.p("With the cores awake a loopback cycle is a sum of CPU work on both sides, so the extra microseconds come close " +
		"to Δ client + Δ server; with the cores halting, or on a network, the same microseconds stand beside a much longer " +
		"cycle (§S4).\n\n")
}

func costRow(rows []CostRow, id string) CostRow {
	i := slices.IndexFunc(rows, func(r CostRow) bool { return r.ID == id })
	if i < 0 {
		return CostRow{}
	}
	return rows[i]
}

func num(x float64) string {
	if x == float64(int64(x)) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}
