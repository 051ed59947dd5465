package main

import (
	"fmt"
	"strings"
)

// handoff writes §S3: many waiters on one key.
func (r *report) handoff() {
	o := r.res.Opts
	r.p("### S3. Hand-off with many waiters, on a cluster\n\n")
	r.p("%s waiters on one key, **each with a locker and a client of its own**, as so many processes: a release reaches "+
		"the other waiters only through Redis — ", joinInts(o.Waiters, " and "))
	r.p("lockbridge modern's release notice (`PUBLISH`, on a cluster `SPUBLISH` to the key's shard, subscribers on " +
		"`SSUBSCRIBE`), rueidislock's client-side-caching invalidation. ")
	r.p("A holder stays inside working for %v; a goroutine that released calls `Lock` again only once another has the "+
		"lock, so every hand-off goes to a waiter. %d round(s) of %v per row, the first calls spread over %v. ", o.Hold,
		o.HandoffRounds, o.HandoffDur, o.Stagger)
	r.p("**Wait**: a `Lock` call's time from call to return; **hand-off**: from one holder's `Unlock` returning to the " +
		"next holder's `Lock` returning. \"commands / cycle\": commands the servers ran per lock cycle (commandstats, " +
		"scripts' inner commands included), by name in small print, connection set-up (HELLO, CLIENT) too.\n\n")
	if ref, ok := r.refs[chartHandoff]; ok {
		r.p("![wait by waiters and deployment](%s)\n\n", ref)
	}
	handoffTable(r, r.res.Handoff.Rows, true)
}

func handoffTable(r *report, rows []HandoffRow, withDeployment bool) {
	head := "| implementation | waiters |"
	if withDeployment {
		head = "| implementation | deployment | waiters |"
	}
	r.p("%s cycles/s | wait p50 | wait p99 | wait max | hand-off p50 | hand-off p99 | commands / cycle | client CPU µs "+
		"/ cycle | server CPU µs / cycle | gave up | overlaps |\n", head)
	r.p("|---|%s---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n", map[bool]string{true: "---|",
		false: ""}[withDeployment])
	for _, row := range rows {
		r.p("| %s |", row.Name)
		if withDeployment {
			r.p(" %s |", row.Deployment)
		}
		r.p(" %d | %.0f | %s | %s | %s | %s | %s | %.1f <sub>%s</sub> | %.0f | %.0f | %d | %d |\n", row.Waiters,
			median(row.CyclesPerSec), dur(row.WaitP50), dur(row.WaitP99), dur(row.WaitMax),
			dur(row.P50), dur(row.P99), row.CmdsPerCycle, row.ByName, row.ClientCPUUs, row.ServerCPUUs, row.GaveUp,
			row.Violations)
	}
	r.p("\n\"overlaps\": two holders inside at once (an in-process guard that is not the lock); must be 0.\n\n")
}

// latency writes §S4: the scenarios through the delay proxy.
func (r *report) latency() {
	lr := r.res.Latency
	o := r.res.Opts
	r.p("### S4. A real network: added round-trip time\n\n")
	r.p("The single server behind a loopback proxy (bench/internal/delayproxy) that passes every chunk of bytes on a " +
		"fixed time after it arrived, half the added round trip each way, while the chunks after it flow on: pipelined " +
		"commands are not serialized. ")
	r.p("It runs in a process of its own, as a network is no part of the client (its CPU still shares the machine's " +
		"cores); every client connects through it. A PING through it takes:")
	for _, lv := range lr.Levels {
		r.p(" %s for +%v (p50 of %d; max %s);", dur(median(lv.PingNs)), lv.RTT, len(lv.PingNs), dur(maxOf(lv.PingNs)))
	}
	r.p(" the proxy wakes 10–30 µs after a chunk is due, which the figures include.\n\n")
	r.p("**Uncontended cycle**, paired with its floor as in §S1 (blocks of %d, %d rounds):\n\n", o.LatCycleOps,
		o.LatCycleRounds)
	r.p("| implementation | client |")
	for _, lv := range lr.Levels {
		r.p(" +%v: ms / cycle | ÷ floor | + µs over the floor |", lv.RTT)
	}
	r.p("\n|---|---|%s\n", strings.Repeat("---:|---:|---:|", len(lr.Levels)))
	for i, row := range lr.Levels[0].Cycle {
		r.p("| %s | %s |", row.Name, row.Client)
		for _, lv := range lr.Levels {
			pr := lv.Cycle[i]
			r.p(" %.2f | %s | %s |", median(pr.Ns)/1e6, ratioCell(ratios(pr.Ns, pr.FloorNs)), usDiffCell(diffs(pr.Ns,
				pr.FloorNs)))
		}
		r.p("\n")
	}
	r.p("\n**Hand-off**, 8 waiters on one key, each on a locker and client of its own (as §S3):\n\n")
	var rows []HandoffRow
	for _, lv := range lr.Levels {
		for _, h := range lv.Handoff {
			h.Name = fmt.Sprintf("%s, +%v", h.Name, lv.RTT)
			rows = append(rows, h)
		}
	}
	handoffTable(r, rows, false)
	r.latencyMany()
}

func (r *report) latencyMany() {
	lr := r.res.Latency
	r.p("**Many locks**, %d goroutines over 1,000 keys (acquisitions/s; ÷ the floor of its client as time per "+
		"acquisition, below 1 is faster):\n\n| implementation | client |", r.res.Opts.ManyWorkers)
	for _, lv := range lr.Levels {
		r.p(" +%v: acquisitions/s | ÷ floor |", lv.RTT)
	}
	r.p("\n|---|---|%s\n", strings.Repeat("---:|---:|", len(lr.Levels)))
	for i, row := range lr.Levels[0].Many {
		r.p("| %s | %s |", row.Name, row.Client)
		for _, lv := range lr.Levels {
			fl := floorManyRow(lv.Many, row.Client)
			r.p(" %.0f | %s |", median(lv.Many[i].rate()), ratioCell(ratios(fl.rate(), lv.Many[i].rate())))
		}
		r.p("\n")
	}
	r.p("\ngo-redis runs at most its pool's 20 connections' worth of commands at once (10 × GOMAXPROCS), each waiting a " +
		"round trip; rueidis pipelines every goroutine's commands on one connection.\n\n")
}

func floorManyRow(rows []ManyRow, client string) ManyRow {
	id := floorIDOfClient(client)
	for _, r := range rows {
		if r.ID == id {
			return r
		}
	}
	return ManyRow{}
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
