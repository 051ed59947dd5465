package main

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/machine"
)

// analysis is the hand-written part of the report: the profile findings and
// what is left. Revisit it when the numbers move.
//
//go:embed analysis.md
var analysis string

// IDs the report refers to by name.
const (
	idFloor   = "floor"
	idModern  = "modern"
	idAtomic  = "legacy-atomic"
	idClassic = "legacy-classic"
	idSeed    = "seed"
	idBSM     = "bsm"
	idRedsync = "redsync"

	idFloorRedigo   = "floor-redigo"
	idModernRedigo  = "modern-redigo"
	idFloorRueidis  = "floor-rueidis"
	idModernRueidis = "modern-rueidis"
	idRueidisLock   = "rueidislock"
)

// leadIDs are the rows of the lead table, in order.
var leadIDs = []string{idFloor, idModern, idAtomic, idBSM, idRedsync, idFloorRedigo, idModernRedigo, idFloorRueidis,
	idModernRueidis, idRueidisLock}

// isPeer reports whether id is another library (not lockbridge, not a floor).
func isPeer(id string) bool { return id == idBSM || id == idRedsync || id == idRueidisLock }

// clientOf is the client implementation id runs on.
func clientOf(id string) string {
	if im, ok := impls.ByID(id); ok {
		return im.ClientName()
	}
	return impls.GoRedis
}

// floorIDOf is the ID of the floor on the client id runs on.
func floorIDOf(id string) string {
	switch clientOf(id) {
	case impls.Redigo:
		return idFloorRedigo
	case impls.Rueidis:
		return idFloorRueidis
	}
	return idFloor
}

// floorOf is the cycle row of the floor on the client id runs on.
func floorOf(res *Results, id string) CycleRow { return cycleRow(res, floorIDOf(id)) }

func leadTable(b *strings.Builder, res *Results) {
	fmt.Fprintf(b, "| uncontended acquire + release | client | µs / cycle | its floor beside it, µs | ÷ floor of its "+
		"client | + µs over the floor | Redis commands / cycle | server CPU µs / cycle |\n")
	fmt.Fprintf(b, "|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, id := range leadIDs {
		r := cycleRow(res, id)
		if len(r.Ns) == 0 {
			continue
		}
		name := r.Name
		if strings.HasPrefix(id, "modern") || id == idAtomic {
			name = "**" + name + "**"
		}
		fmt.Fprintf(b, "| %s | %s | %.1f | %.1f | %s | %s | %s | %.1f |\n", name, clientOf(id), median(r.Ns)/1e3,
			median(r.FloorNs)/1e3,
			fspread(res, r, false), extraCell(r.Ns, r.FloorNs), num(math.Round(r.CallsTotal*100)/100), r.ServerCPUUs)
	}
	fmt.Fprintf(b, "\n")
}

// callsCell is the commands per cycle from INFO commandstats, with their
// breakdown.
func callsCell(r CycleRow) string {
	if r.CallsTotal == 0 {
		return "–"
	}
	names := make([]string, 0, len(r.Calls))
	for n := range r.Calls {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if math.Round(r.Calls[n]*100) == 0 {
			continue // a connection's own PING now and then
		}
		// A subcommand (INFO names it "pubsub|numsub") in Markdown table
		// cells: a space, not a column break.
		name := strings.ReplaceAll(n, "|", " ")
		parts = append(parts, fmt.Sprintf("%s %s", name, num(math.Round(r.Calls[n]*100)/100)))
	}
	return fmt.Sprintf("%s (%s)", num(math.Round(r.CallsTotal*100)/100), strings.Join(parts, " + "))
}

// pairedRatios are a[i] ÷ b[i] for the rounds where both were measured.
func pairedRatios(a, b []float64) []float64 {
	if len(a) != len(b) {
		return nil
	}
	rs := make([]float64, 0, len(a))
	for i := range a {
		if a[i] > 0 && b[i] > 0 {
			rs = append(rs, a[i]/b[i])
		}
	}
	return rs
}

// floorRatios are, per round, r's time ÷ its client's floor's: the floor
// block run right beside r's (FloorNs) when there is one, else the floor's
// block of the same round.
func floorRatios(res *Results, r CycleRow, deadline bool) []float64 {
	ns, fns := r.Ns, r.FloorNs
	if deadline {
		ns, fns = r.NsDeadline, r.FloorNsDeadline
	}
	if len(fns) == 0 && r.ID == floorIDOf(r.ID) {
		return pairedRatios(ns, ns)
	}
	if len(fns) == 0 {
		fl := floorOf(res, r.ID)
		fns = fl.Ns
		if deadline {
			fns = fl.NsDeadline
		}
	}
	return pairedRatios(ns, fns)
}

// extraCell formats the median over rounds of ns[i] − floor[i] in µs, with
// its min–max: the time an implementation adds to its floor's cycle.
func extraCell(ns, floor []float64) string {
	if len(ns) != len(floor) || len(ns) == 0 {
		return "–"
	}
	d := make([]float64, len(ns))
	for i := range ns {
		d[i] = (ns[i] - floor[i]) / 1e3
	}
	return fmt.Sprintf("%+.1f <sub>%+.1f…%+.1f</sub>", median(d), slices.Min(d), slices.Max(d))
}

// fspread formats floorRatios: median and min–max.
func fspread(res *Results, r CycleRow, deadline bool) string {
	return spreadOf(floorRatios(res, r, deadline))
}

// peerRatios are, per round, a's time ÷ b's, each first divided by the
// floor of its client measured beside it: drift between a's block and b's
// cancels. Both run on the same client, or the ratio compares clients too.
func peerRatios(res *Results, a, b CycleRow) []float64 {
	ra, rb := floorRatios(res, a, false), floorRatios(res, b, false)
	if len(ra) != len(rb) || len(ra) == 0 {
		return nil
	}
	rs := make([]float64, len(ra))
	for i := range ra {
		rs[i] = ra[i] / rb[i]
	}
	return rs
}

// peerCell formats peerRatios' median.
func peerCell(res *Results, a, b CycleRow) string {
	rs := peerRatios(res, a, b)
	if len(rs) == 0 {
		return "–"
	}
	return ratio(median(rs), 1)
}

func spreadOf(rs []float64) string {
	if len(rs) == 0 {
		return "–"
	}
	if len(rs) == 1 {
		return ratio(rs[0], 1)
	}
	return fmt.Sprintf("%s <sub>%.2f–%.2f</sub>", ratio(median(rs), 1), slices.Min(rs), slices.Max(rs))
}

func markdown(res *Results, chartRef string, quick bool) string {
	var b strings.Builder
	mdIntro(&b, res, chartRef, quick)
	mdMachine(&b, res)
	mdTargets(&b, res)
	mdUncontended(&b, res)
	mdTakeover(&b, res)
	mdContended(&b, res)
	mdManyKeys(&b, res)
	mdAllocs(&b, res)
	mdLeft(&b, res)
	return b.String()
}

func mdIntro(b *strings.Builder, res *Results, chartRef string, quick bool) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	e := res.Env
	p("# Performance\n\n")
	p("<!-- Generated by `make bench` (bench/cmd/benchreport); edits are overwritten. The \"What is left\" section " +
		"comes from bench/cmd/benchreport/analysis.md; the sections between begin/end markers below come from other " +
		"generators (make bench-scale) and are kept. -->\n\n")
	if quick {
		p("> **Quick run** (`-quick`): too few rounds and operations for the numbers to mean much.\n\n")
	}
	p("An uncontended lock cycle (acquire + release, one goroutine), every implementation on its own client, against "+
		"one local redis-server, measured %s:\n\n", e.Date)
	leadTable(b, res)
	p("\"÷ floor\": time per cycle ÷ the raw floor **of the same client**: the minimal correct token lock written by " +
		"hand on that client (a random 16-byte token per acquire, `SET NX PX`, an `EVALSHA` compare-and-delete, nothing " +
		"else), ")
	p("its cycles run in turn with the implementation's; the median of %d paired blocks, min–max in small print; below "+
		"1 is faster. ", len(cycleRow(res, idFloor).Ns))
	p("\"+ µs\": the same pairs' difference. The floor's own row pairs it with a twin on a client of its own: the " +
		"method's noise. ")
	p("\"Redis commands\" are counted by the server (INFO commandstats; commands inside scripts included), \"server " +
		"CPU\" is the redis-server process's CPU time (INFO cpu) per cycle. ")
	p("Targets and whether this run met them: [Targets](#targets); contended and many-lock figures: sections 3 and 4.\n\n")
	if chartRef != "" {
		p("![hand-off latency by library](%s)\n\n", chartRef)
		p("Contended (section 3): %d goroutines on one key, time from one holder's release to the next holder's acquire.\n\n",
			res.Opts.Workers)
	}

}

func mdMachine(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	e := res.Env
	p("## Machine and method\n\n")
	p("| | |\n|---|---|\n")
	p("| date | %s |\n", e.Date)
	shared := "a VM, **shared with other work** while this ran"
	if e.OtherCPU < 0.05 {
		shared = "a VM, otherwise idle while this ran"
	}
	if e.Awake {
		shared += "; its cores kept from halting while idle (a 0 µs CPU latency request, bench/internal/awake): a halted " +
			"core of this VM takes longer to wake than a loopback round trip"
	} else {
		shared += "; its cores **free to halt while idle** (" + e.AwakeNote + "): a halted core of this VM takes longer to " +
			"wake than a loopback round trip, so times per cycle are long and vary"
	}
	p("| machine | %s, %d cores (GOMAXPROCS %d), %s; %s |\n", e.CPU, e.Cores, e.GOMAXPROCS, e.Kernel, shared)
	p("| other load | load average %s before the run, %s after; other processes used %.0f%% of the machine's CPU time "+
		"during the run |\n", e.LoadBefore, e.LoadAfter, 100*e.OtherCPU)
	p("| Go | %s |\n", e.Go)
	p("| Redis | redis-server %s on loopback, started by the bench (persistence off), sharing the machine's cores with "+
		"the client |\n", e.Redis)
	var mods []string
	for _, m := range machine.ReportedModules {
		if v, ok := e.Modules[m]; ok {
			mods = append(mods, fmt.Sprintf("%s %s", strings.TrimPrefix(m, "github.com/"), v))
		}
	}
	p("| libraries | %s |\n", strings.Join(mods, ", "))
	p("| clients | every implementation has a client of its own: go-redis with its defaults (pool of 10 × GOMAXPROCS) " +
		"but retries off and ContextTimeoutEnabled; ")
	p("a redigo `Pool` with MaxIdle 10 × GOMAXPROCS; rueidis with its defaults (one pipelined connection); rueidislock " +
		"builds its own rueidis client |\n")
	p("| regenerate | `make bench` (runs `cd bench && go run ./cmd/benchreport`; a few minutes on two cores), or `cd " +
		"bench && go test -run '^$' -bench Cycle -benchmem -count 10 > new.txt` and `benchstat new.txt` |\n\n")

	p("- **Interleaved blocks.** Every scenario runs in rounds; in each round every implementation runs one block (here "+
		"%d cycles), ", res.Opts.CycleOps)
	p("the order rotating from round to round, so that drift of the machine hits every implementation alike.\n")
	p("- **Paired ratios.** In the uncontended cycle every block of an implementation is run together with its client's " +
		"floor, one cycle of each in turn (the floor first in even rounds, second in odd ones); ")
	p("its ratio to the floor and its extra µs are computed from that pair, and the median, min and max over the rounds " +
		"are shown: a core waking from a halt, a burst of other work or a garbage collection lands on both alike. ")
	p("Blocks of 100 run one after the other do not promise that: on this VM a cycle takes ~40 µs while the cores are " +
		"awake and ~125 µs when they halt between requests, and two blocks a few milliseconds apart often fell on " +
		"different sides of that. ")
	p("A ratio between two libraries on one client is the ratio of their floor ratios in the same round. Times per " +
		"cycle are the median of the rounds, each beside the median of its own floor's blocks. ")
	p("A ratio to the floor shrinks as the round trip grows, while the µs an implementation adds stay: the scale " +
		"section (make bench-scale) shows both, at 0.5 and 2 ms of added round trip too. ")
	p("Other scenarios pair the blocks of one round.\n")
	p("- **Commands and server time** come from a separate pass of %d cycles per implementation with nothing else "+
		"running: INFO commandstats and INFO cpu before and after. ", res.Opts.ServerOps)
	p("Server CPU includes reading and writing the sockets and redis-server's own housekeeping (a timer 10 times a " +
		"second), so it is above the commands' execution time (\"exec µs\").\n")
	p("- **Round trips** (commands a client sends, as opposed to those a script runs) are counted with a `MONITOR` " +
		"connection in another pass.\n")
	p("- **Allocations** are `runtime.MemStats` deltas over %d cycles (whole process, so goroutines a library starts "+
		"count), least of three runs.\n", res.Opts.AllocOps)
	hold := 0.0
	for _, r := range res.Handoff {
		hold += r.HoldNs / float64(len(res.Handoff))
	}
	p("- **Hand-off** latency is the time from one holder's `Unlock` returning to the next holder's `Lock` returning; " +
		"**wait** is a `Lock` call's time from call to return. ")
	p("%d goroutines on one key; a holder stays inside working for %v (it spins, yielding to other goroutines: a "+
		"`time.Sleep` that short lasts up to 1 ms by how busy the process is, which would measure the timer rather than "+
		"the lock; %s on average) and releases. ", res.Opts.Workers, res.Opts.Hold, fmtDur(hold))
	p("A goroutine that released calls `Lock` again only once another one has taken the lock, so every hand-off goes to " +
		"a waiter ")
	p("and %d goroutines are always waiting. The first calls are spread over %v; the measurement starts after that. ",
		res.Opts.Workers-1, res.Opts.Stagger)
	p("%d rounds × %v per configuration; percentiles over all rounds. ", res.Opts.HandoffRounds, res.Opts.HandoffDur)
	p("A next holder whose `Lock` returned before the releaser's `Unlock` did counts as 0.\n")
	p("- Uncontended and many-keys cycles use `TryLock` (one attempt); the hand-off uses each library's waiting " +
		"acquire.\n\n")
	p("**What the numbers do not show.** One machine, one run, loopback: a network round trip of 0.2–1 ms between " +
		"client and server would make every implementation's cycle ")
	p("about that much longer and shrink every ratio towards 1. Client and server share two cores, so client CPU slows " +
		"the server and the other way round. ")
	if !e.Awake {
		p("The VM's cores halted between requests, and a core's wake-up takes longer than a round trip: it adds the same " +
			"to the floor and to the implementation, so every ratio is closer to 1 than with the cores awake. ")
	} else if e.OtherCPU < 0.05 {
		p("The cores were kept awake: on a machine whose cores halt when idle, the wake-ups add the same to every " +
			"implementation and bring every ratio closer to 1. ")
	} else {
		p("The machine was shared with other work; the paired ratios are meant to absorb that, and their min–max shows how " +
			"far they did not. ")
	}
	p("No cluster, no TLS, no failure: the costs of fencing, auto-refresh, phases of a migration and of lost " +
		"connections are not in these figures.\n\n")

}

func mdTargets(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Targets\n\n")
	p("| target | measured | |\n|---|---|---|\n")
	for _, t := range targets(res) {
		p("| %s | %s | %s |\n", t.what, t.measured, t.status)
	}
	p("\n")

	// 1. cycle
}

func mdUncontended(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## 1. Uncontended cycle: acquire + release, one goroutine\n\n")
	ping := median(res.PingNs)
	p("A bare round trip (go-redis `PING`) takes **%s** (median of %d rounds; spread %s).", us(ping), len(res.PingNs),
		spread(res.PingNs))
	if len(res.AdapterPingNs) > 0 {
		p(" The same `PING` through lockbridge's go-redis adapter (`driver.Client.Do`): %s with `context.Background()` (%s "+
			"the go-redis PING), ",
			us(median(res.AdapterPingNs)), pratio(res.AdapterPingNs, res.PingNs))
		p("**%s with a deadline context** %s (%s).", us(median(res.AdapterPingDeadlineNs)), spread(res.AdapterPingDeadlineNs),
			pratio(res.AdapterPingDeadlineNs, res.PingNs))
	}
	p("\n\n")
	p("| implementation | client | µs / cycle | ÷ floor | ÷ bsm/redislock | µs / cycle, ctx with deadline | ÷ floor | " +
		"round trips | sent per cycle | commands in scripts | Redis commands / cycle | exec µs / cycle | server CPU µs / " +
		"cycle |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|\n")
	for _, r := range res.Cycle {
		m := median(r.Ns)
		md := median(r.NsDeadline)
		p("| %s | %s | %s %s | %s | %s | %s %s | %s | %s | %s | %s | %s | %.1f | %.1f |\n", r.Name, clientOf(r.ID), us(m),
			spread(r.Ns),
			fspread(res, r, false), peerCell(res, r, cycleRow(res, idBSM)),
			us(md), spread(r.NsDeadline), fspread(res, r, true),
			num(r.RoundTrips), r.Sent, scriptCell(r.ScriptCmds, r.InScript), callsCell(r), r.ServerUs, r.ServerCPUUs)
	}
	p("\n\"ctx with deadline\": the same cycle with a `context.WithTimeout` context, as a request handler passes (its " +
		"\"÷ floor\" is against the same client's floor with such a context); ")
	p("the other columns use `context.Background()`. \"exec µs\": the time Redis spent executing the commands (INFO " +
		"commandstats `usec`); ")
	p("\"server CPU\": the redis-server process's CPU time (INFO cpu); the rest of a cycle is network, kernel " +
		"and client. ")
	p("\"floor through lockbridge's driver.Client\" sends the floor's two commands through lockbridge's go-redis " +
		"adapter, without any lock logic: the adapter's share. ")
	p("rueidislock takes its lease from its own setting (KeyValidity, 5 s) and keeps extending it from a goroutine " +
		"while held; a cycle here is far shorter than one extension.\n\n")

	// 2. takeover
}

func mdTakeover(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## 2. Expired takeover (Java scheme)\n\n")
	if len(res.Takeover) == 0 {
		p("Not measured: lockbridge's legacy locker and the seed replay are not built into this run.\n\n")
	} else {
		p("Before each attempt the key holds an expiry timestamp a minute in the past (written by a set-up connection, not " +
			"counted); the attempt must take the lock over.\n\n")
		p("| implementation | µs / takeover | ÷ seed sequence | round trips | sent per takeover | commands in scripts " +
			"|\n|---|---:|---:|---:|---|---|\n")
		var seed []float64
		for _, r := range res.Takeover {
			if r.ID == idSeed {
				seed = r.Ns
			}
		}
		for _, r := range res.Takeover {
			m := median(r.Ns)
			p("| %s | %s %s | %s | %s | %s | %s |\n", r.Name, us(m), spread(r.Ns), pratio(r.Ns, seed), num(r.RoundTrips), r.Sent,
				scriptCell(r.ScriptCmds, r.InScript))
		}
		p("\n")
	}

	// 3. hand-off
}

func mdContended(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## 3. Contended hand-off: %d goroutines, one key\n\n", res.Opts.Workers)
	p("The chart at the top shows these hand-off times.\n\n")
	p("| implementation | waiting | settings | cycles/s | hand-off p50 | p90 | p99 | max | wait p50 | wait p99 | wait " +
		"max | hand-offs | PING meanwhile | round trips / cycle | releaser again | gave up | overlaps |\n")
	p("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n")
	for _, r := range res.Handoff {
		self := 0.0
		if r.Samples > 0 {
			self = 100 * float64(r.Self) / float64(r.Samples)
		}
		p("| %s | %s | %s | %.0f %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s (%s) | %.0f%% | %d | %d |\n", r.Name,
			r.Wait, r.WaitDesc,
			median(r.CyclesPerSec), spreadInt(r.CyclesPerSec), fmtDur(r.P50), fmtDur(r.P90), fmtDur(r.P99), fmtDur(r.Max),
			fmtDur(r.WaitP50), fmtDur(r.WaitP99), fmtDur(r.WaitMax), r.Samples, fmtDur(r.PingP50), fmt.Sprintf("%.1f",
				r.RoundTrips), r.Sent, self, r.GaveUp, r.Violations)
	}
	p("\n\"PING meanwhile\": the median round trip of a PING sent every millisecond on a connection of its own during " +
		"the runs, the reference for \"about one round trip\". ")
	p("\"round trips / cycle\": commands sent per lock cycle, all goroutines together (failed attempts, subscriptions "+
		"and releases included), counted in a separate pass of %v under MONITOR. ",
		(res.Opts.HandoffDur / 3).Round(time.Millisecond))
	p("\"releaser again\": hand-offs to the goroutine that released (0 by construction, a check). ")
	p("\"gave up\": waiting acquires that returned an error by themselves and were repeated (redsync after its tries). ")
	p("\"overlaps\": two holders inside at once (an in-process guard); must be 0.\n\n")
	handoffRatios(b, res)
	if len(res.Waiters) > 0 {
		p("lockbridge modern (recommended settings) with fewer goroutines on the key, one round of %v each (the last row "+
			"is the table above):\n\n", res.Opts.HandoffDur)
		p("| goroutines | cycles/s | p50 | p99 | round trips / cycle |\n|---:|---:|---:|---:|---:|\n")
		for _, w := range res.Waiters {
			if w.Workers >= res.Opts.Workers {
				continue
			}
			p("| %d | %.0f | %s | %s | %.1f |\n", w.Workers, w.CyclesPerSec, fmtDur(w.P50), fmtDur(w.P99), w.RoundTrips)
		}
		for _, h := range res.Handoff {
			if h.ID == idModern && h.Wait == impls.Recommended.String() {
				p("| %d | %.0f | %s | %s | %.1f |\n", res.Opts.Workers, median(h.CyclesPerSec), fmtDur(h.P50), fmtDur(h.P99),
					h.RoundTrips)
			}
		}
		p("\n")
	}

	// 4. many keys
}

func mdManyKeys(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## 4. Many keys: %d goroutines over %d keys\n\n", res.Opts.ManyWorkers, res.Opts.ManyKeys)
	p("Each goroutine takes and releases a random key with one attempt; a key another goroutine holds counts as busy, "+
		"not as a cycle. %d rounds × %v.\n\n", res.Opts.ManyRounds, res.Opts.ManyDur)
	p("| implementation | client | cycles/s | ÷ floor of its client | ÷ bsm/redislock | ÷ rueidislock | busy " +
		"|\n|---|---|---:|---:|---:|---:|---:|\n")
	mk := func(id string) []float64 {
		for _, r := range res.ManyKeys {
			if r.ID == id {
				return r.CyclesPerSec
			}
		}
		return nil
	}
	for _, r := range res.ManyKeys {
		m := median(r.CyclesPerSec)
		// Throughput ratios, stated as time ratios (reference ÷ this) so that
		// below 1 is faster here too.
		p("| %s | %s | %.0f %s | %s | %s | %s | %d |\n", r.Name, clientOf(r.ID), m, spreadInt(r.CyclesPerSec),
			pratio(mk(floorIDOf(r.ID)), r.CyclesPerSec), pratio(mk(idBSM), r.CyclesPerSec), pratio(mk(idRueidisLock),
				r.CyclesPerSec), r.Busy)
	}
	p("\nRatios here are time per cycle as well (reference throughput ÷ this throughput), so below 1 is faster.\n\n")

	// 5. allocations
}

func mdAllocs(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## 5. Allocations per uncontended cycle\n\n")
	p("| implementation | client | allocs / cycle | bytes / cycle | − floor of its client, allocs " +
		"|\n|---|---|---:|---:|---:|\n")
	for _, r := range res.Cycle {
		p("| %s | %s | %.1f | %.0f | %+.0f |\n", r.Name, clientOf(r.ID), r.Allocs, r.Bytes, r.Allocs-floorOf(res,
			r.ID).Allocs)
	}
	p("\nThe floor's count includes the benchmark harness's own held-lock value (one small allocation per cycle), as " +
		"every row does.\n\n")

}

func mdLeft(b *strings.Builder, res *Results) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## What is left\n\n")
	misses := 0
	for _, t := range targets(res) {
		if t.status != statusMet {
			misses++
			p("- **%s** — %s: %s.\n", t.status, t.what, t.measured)
		}
	}
	if misses == 0 {
		p("Every target was met in this run.\n")
	}
	p("\n%s", strings.TrimLeft(analysis, "\n"))
}

const (
	statusMet    = "met"
	statusMissed = "missed"
	statusNone   = "not measured"
)

type target struct{ what, measured, status string }

func targets(res *Results) []target {
	l := &targetList{}
	targetsCycle(l, res)
	targetsAllocs(l, res)
	targetsTakeover(l, res)
	targetsHandoff(l, res)
	targetsManyKeys(l, res)
	return l.ts
}

// targetList collects the rows of the Targets table.
type targetList struct{ ts []target }

func (l *targetList) add(what, measured string, ok bool) {
	l.ts = append(l.ts, target{what, measured, status(ok)})
}

func (l *targetList) missing(what string) {
	l.ts = append(l.ts, target{what, "not in this run", statusNone})
}

func targetsCycle(l *targetList, res *Results) {
	ratioTo := func(id, ref string) (float64, string) {
		a, b := cycleRow(res, id), cycleRow(res, ref)
		if len(a.Ns) == 0 || len(b.Ns) == 0 {
			return 0, ""
		}
		rs := floorRatios(res, a, false)
		if ref != floorIDOf(id) {
			rs = peerRatios(res, a, b)
		}
		return median(rs), spreadOf(rs)
	}
	for _, t := range []struct {
		id, what string
		limit    float64
	}{
		{idModern, "modern cycle ≤ 1.05× the go-redis floor", 1.05},
		{idModernRedigo, "modern cycle ≤ 1.05× the redigo floor", 1.05},
		{idModernRueidis, "modern cycle ≤ 1.05× the rueidis floor", 1.05},
		{idAtomic, "legacy atomic cycle ≤ 1.10× the go-redis floor", 1.10},
	} {
		r, cell := ratioTo(t.id, floorIDOf(t.id))
		if r == 0 {
			l.missing(t.what)
			continue
		}
		l.add(t.what, fmt.Sprintf("%s (medians %s vs %s)", cell, us(cycleMedian(res, t.id)), us(cycleMedian(res,
			floorIDOf(t.id)))), r <= t.limit)
	}
	for _, t := range []struct{ id, peer string }{{idModern, idBSM}, {idModern, idRedsync}, {idModernRueidis,
		idRueidisLock}} {
		what := fmt.Sprintf("%s cycle ahead of %s (same client)", cycleRow(res, t.id).Name, cycleRow(res, t.peer).Name)
		r, cell := ratioTo(t.id, t.peer)
		if r == 0 {
			l.missing(what)
			continue
		}
		l.add(what, cell+" (time ÷ the peer's)", r < 1)
	}
}

func targetsAllocs(l *targetList, res *Results) {
	if mr := cycleRow(res, idModern); len(mr.Ns) > 0 {
		l.add("modern cycle: 2 round trips", num(mr.RoundTrips)+" ("+mr.Sent+")", mr.RoundTrips <= 2)
		fa := cycleRow(res, idFloor).Allocs
		l.add("allocations per modern cycle ≤ the go-redis floor's + 4",
			fmt.Sprintf("modern %.0f, floor %.0f", mr.Allocs, fa), mr.Allocs <= fa+4)
	}
	if rr := cycleRow(res, idModernRueidis); len(rr.Ns) > 0 {
		fa := cycleRow(res, idFloorRueidis).Allocs
		l.add("allocations per modern cycle on rueidis close to the rueidis floor's",
			fmt.Sprintf("modern on rueidis %.0f, rueidis floor %.0f", rr.Allocs, fa), rr.Allocs <= fa+4)
	}
}

func targetsTakeover(l *targetList, res *Results) {
	var atomic, seed *TakeoverRow
	for i := range res.Takeover {
		switch res.Takeover[i].ID {
		case idAtomic:
			atomic = &res.Takeover[i]
		case idSeed:
			seed = &res.Takeover[i]
		}
	}
	if atomic == nil {
		l.missing("legacy expired takeover in fewer round trips than the seed's 3")
	} else {
		m := fmt.Sprintf("%s (%s)", num(atomic.RoundTrips), atomic.Sent)
		if seed != nil {
			m += fmt.Sprintf("; seed sequence %s (%s)", num(seed.RoundTrips), seed.Sent)
		}
		// an EVAL now and then: the script's first load
		l.add("legacy expired takeover in fewer round trips than the seed's 3", m, atomic.RoundTrips < 2.5)
	}
}

func targetsHandoff(l *targetList, res *Results) {
	handoff := func(id string) *HandoffRow {
		for i := range res.Handoff {
			if h := &res.Handoff[i]; h.ID == id && h.Wait == impls.Recommended.String() {
				return h
			}
		}
		return nil
	}
	rl := handoff(idRueidisLock)
	for _, id := range []string{idModern, idModernRueidis} {
		h := handoff(id)
		what := fmt.Sprintf(
			"contended, %d goroutines: %s more cycles/s than rueidislock and wait p99 ≤ 10 ms (max wait reported)",
			res.Opts.Workers, cycleRow(res, id).Name)
		if h == nil || rl == nil {
			l.missing(what)
			continue
		}
		l.add(what, fmt.Sprintf("%.0f vs %.0f cycles/s (%s); wait p99 %s, max %s (rueidislock: p99 %s, max %s)",
			median(h.CyclesPerSec), median(rl.CyclesPerSec), pratio(h.CyclesPerSec, rl.CyclesPerSec),
			fmtDur(h.WaitP99), fmtDur(h.WaitMax), fmtDur(rl.WaitP99), fmtDur(rl.WaitMax)),
			paired(h.CyclesPerSec, rl.CyclesPerSec) > 1 && h.WaitP99 <= 10e6)
	}
	if h := handoff(idModern); h != nil {
		l.add("a release notification reaches a waiter in ≤ 1 ms p50 (hand-off, modern on go-redis; p99 reported)",
			fmt.Sprintf("p50 %s, p99 %s", fmtDur(h.P50), fmtDur(h.P99)), h.P50 <= 1e6)
	}
}

func targetsManyKeys(l *targetList, res *Results) {
	mk := func(id string) []float64 {
		for _, r := range res.ManyKeys {
			if r.ID == id {
				return r.CyclesPerSec
			}
		}
		return nil
	}
	if m, rl, bsm := mk(idModernRueidis), mk(idRueidisLock), mk(idBSM); m != nil && rl != nil && bsm != nil {
		a, c := paired(m, rl), paired(m, bsm)
		l.add(fmt.Sprintf("many locks (%d goroutines, %d keys): modern on rueidis ≥ 1.0× rueidislock and ≥ 1.5× "+
			"bsm/redislock acquisitions/s", res.Opts.ManyWorkers, res.Opts.ManyKeys),
			fmt.Sprintf("%.0f/s: %.2f× rueidislock (%.0f/s), %.2f× bsm/redislock (%.0f/s)", median(m), a, median(rl), c,
				median(bsm)), a >= 1 && c >= 1.5)
	}
}

func status(ok bool) string {
	if ok {
		return statusMet
	}
	return statusMissed
}

func handoffRatios(b *strings.Builder, res *Results) {
	var ours, peers []HandoffRow
	for _, r := range res.Handoff {
		if isPeer(r.ID) {
			peers = append(peers, r)
		} else {
			ours = append(ours, r)
		}
	}
	if len(ours) == 0 || len(peers) == 0 {
		return
	}
	fmt.Fprintf(b, "Against each peer: lockbridge's throughput ÷ the peer's, and the peer's p50 / p99 hand-off ÷ "+
		"lockbridge's (above 1: lockbridge is better).\n\n")
	fmt.Fprintf(b, "| lockbridge | ")
	for _, pr := range peers {
		fmt.Fprintf(b, "vs %s, %s | ", pr.Name, pr.Wait)
	}
	fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---|", len(peers)))
	for _, o := range ours {
		fmt.Fprintf(b, "| %s, %s | ", o.Name, o.Wait)
		for _, pr := range peers {
			fmt.Fprintf(b, "%s cycles/s · %s p50 · %s p99 | ", pratio(o.CyclesPerSec, pr.CyclesPerSec),
				ratio(pr.P50, o.P50), ratio(pr.P99, o.P99))
		}
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "\n")
}

func cycleRow(res *Results, id string) CycleRow {
	for _, r := range res.Cycle {
		if r.ID == id {
			return r
		}
	}
	return CycleRow{}
}

func cycleMedian(res *Results, id string) float64 { return median(cycleRow(res, id).Ns) }

// us formats nanoseconds as microseconds.
func us(ns float64) string {
	if ns == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f µs", ns/1e3)
}

func spread(xs []float64) string {
	if len(xs) < 2 {
		return ""
	}
	return fmt.Sprintf("<sub>%.1f–%.1f</sub>", slices.Min(xs)/1e3, slices.Max(xs)/1e3)
}

func spreadInt(xs []float64) string {
	if len(xs) < 2 {
		return ""
	}
	return fmt.Sprintf("<sub>%.0f–%.0f</sub>", slices.Min(xs), slices.Max(xs))
}

// paired is the median over rounds of a[i] ÷ b[i]: both were measured in the
// same round, close in time, so the machine's state changes cancel out. When
// the rounds do not line up it falls back to the ratio of the medians.
func paired(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a) != len(b) {
		return median(a) / median(b)
	}
	rs := make([]float64, 0, len(a))
	for i := range a {
		if a[i] > 0 && b[i] > 0 {
			rs = append(rs, a[i]/b[i])
		}
	}
	return median(rs)
}

// pratio formats paired(a, b).
func pratio(a, b []float64) string { return ratio(paired(a, b), 1) }

func ratio(a, b float64) string {
	if a == 0 || b == 0 || math.IsNaN(a/b) {
		return "–"
	}
	if a/b >= 10 {
		return fmt.Sprintf("%.0f×", a/b)
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func num(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func scriptCell(n float64, breakdown string) string {
	if n == 0 {
		return "–"
	}
	return breakdown
}
