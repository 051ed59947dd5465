package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/machine"
	"github.com/lockbridge/lockbridge/bench/internal/monitor"
	"github.com/lockbridge/lockbridge/bench/internal/scenario"
	"github.com/redis/go-redis/v9"
)

// Options size the run.
type Options struct {
	Rounds        int           // rounds of the cycle and takeover scenarios
	CycleOps      int           // cycles per implementation per round
	TakeoverOps   int           // takeovers per implementation per round
	CountOps      int           // ops per implementation for the round-trip count
	ServerOps     int           // cycles per implementation for INFO commandstats and INFO cpu
	AllocOps      int           // cycles per allocation measurement
	HandoffRounds int           // rounds of the hand-off scenario
	HandoffDur    time.Duration // per configuration per round
	Workers       int           // hand-off goroutines
	Hold          time.Duration // hand-off: time inside the lock
	Stagger       time.Duration // hand-off: first Lock calls spread over this
	ManyRounds    int           // rounds of the many-keys scenario
	ManyDur       time.Duration // per implementation per round
	ManyWorkers   int
	ManyKeys      int
}

// Results is everything measured; it is also written as JSON.
type Results struct {
	Env    machine.Env
	Opts   Options
	Quick  bool      // a -quick run
	PingNs []float64 // per round: ns per PING
	// AdapterPingNs and AdapterPingDeadlineNs: PING through lockbridge's
	// go-redis adapter (driver.Client.Do), with context.Background() and
	// with a deadline context; nil when lockbridge is not built in.
	AdapterPingNs         []float64
	AdapterPingDeadlineNs []float64
	// Waiters is modern's hand-off (recommended settings) by number of
	// goroutines, one round each.
	Waiters  []WaitersRow
	Cycle    []CycleRow
	Takeover []TakeoverRow
	Handoff  []HandoffRow
	ManyKeys []ManyRow
}

// CycleRow is one implementation's uncontended cycle.
type CycleRow struct {
	ID, Name   string
	Ns         []float64 // per round: ns per cycle, context.Background()
	NsDeadline []float64 // per round: ns per cycle, a context with a deadline
	// FloorNs and FloorNsDeadline: per round, ns per cycle of the floor of
	// the same client, its cycles run in turn with this one's (first in
	// even rounds, second in odd ones); for a floor, its twin's.
	FloorNs         []float64
	FloorNsDeadline []float64
	RoundTrips      float64 // top-level commands per cycle
	Sent            string  // their breakdown
	SentCmds        map[string]int64
	// ServerUs is the server's execution time per cycle: the commandstats
	// usec of the commands sent, per cycle (no network, no client).
	ServerUs float64
	Usec     map[string]float64 // commandstats usec per cycle, every command
	// Calls are the commands per cycle by name from INFO commandstats
	// (top-level and inside scripts alike), CallsTotal their sum.
	Calls      map[string]float64
	CallsTotal float64
	// ServerCPUUs is the server process's CPU time per cycle (INFO cpu,
	// used_cpu_sys + used_cpu_user, all its threads): execution, reading
	// and writing the sockets, and its own housekeeping.
	ServerCPUUs float64
	ScriptCmds  float64 // commands run inside scripts per cycle
	InScript    string
	Allocs      float64 // heap allocations per cycle
	Bytes       float64 // heap bytes per cycle
}

// TakeoverRow is one implementation's expired takeover.
type TakeoverRow struct {
	ID, Name   string
	Ns         []float64 // per round: ns per takeover
	RoundTrips float64
	Sent       string
	ScriptCmds float64
	InScript   string
}

// HandoffRow is one implementation with one waiting setting, contended.
type HandoffRow struct {
	ID, Name     string
	Wait         string
	WaitDesc     string
	CyclesPerSec []float64 // per round
	P50, P90     float64   // ns, over the samples of all rounds
	P99, Max     float64
	Samples      int
	// PingP50 is the median PING round trip measured meanwhile (one PING
	// every millisecond, on a connection of its own).
	PingP50 float64
	// WaitP50, WaitP99, WaitMax: the time a Lock call waited (called to
	// returned), over the waits of all rounds: fairness shows in the tail.
	WaitP50, WaitP99, WaitMax float64
	RoundTrips                float64 // commands sent per lock cycle (a separate pass under MONITOR)
	Sent                      string
	HoldNs                    float64 // mean time inside, over all rounds
	Early                     int
	Self                      int
	GaveUp                    int
	Violations                int
}

// WaitersRow is modern's hand-off with a given number of goroutines.
type WaitersRow struct {
	Workers      int
	CyclesPerSec float64
	P50, P99     float64
	RoundTrips   float64
}

// ManyRow is one implementation over many keys.
type ManyRow struct {
	ID, Name     string
	CyclesPerSec []float64 // per round
	Busy         int64
}

type runner struct {
	opts    Options
	addr    string
	setup   *monitor.Conn
	impls   []impls.Impl
	clients map[string]*redis.Client
	lockers map[string]impls.Locker // recommended waiting
	// twins are a second floor of each client, on a client of its own: the
	// floor's partner in the cycle pairs (an A/A pair).
	twins   map[string]impls.Locker
	closers []func() // clients lockers opened themselves
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchreport: "+format+"\n", args...)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// rotate returns xs rotated left by r, so that each round starts with a
// different implementation.
func rotate[T any](xs []T, r int) []T {
	if len(xs) == 0 {
		return xs
	}
	r %= len(xs)
	return append(slices.Clone(xs[r:]), xs[:r]...)
}

func newRunner(addr string, opts Options, all []impls.Impl) (*runner, error) {
	setup, err := monitor.Dial(addr)
	if err != nil {
		return nil, err
	}
	r := &runner{opts: opts, addr: addr, setup: setup, impls: all,
		clients: map[string]*redis.Client{}, lockers: map[string]impls.Locker{}, twins: map[string]impls.Locker{}}
	for _, im := range all {
		if im.ID == floorID(im) {
			c := impls.NewClient(addr)
			r.clients[im.ID+"-twin"] = c
			l, err := im.New(impls.On(c), impls.Recommended)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", im.Name, err)
			}
			r.twins[im.ClientName()] = l
			if c, ok := l.(impls.Closer); ok {
				r.closers = append(r.closers, c.Close)
			}
		}
		c := impls.NewClient(addr)
		r.clients[im.ID] = c
		l, err := im.New(impls.On(c), impls.Recommended)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", im.Name, err)
		}
		r.lockers[im.ID] = l
		if c, ok := l.(impls.Closer); ok {
			r.closers = append(r.closers, c.Close)
		}
	}
	return r, nil
}

func (r *runner) close() {
	for _, c := range r.closers {
		c()
	}
	for _, c := range r.clients {
		_ = c.Close()
	}
	_ = r.setup.Close()
}

func (r *runner) measure(ctx context.Context) (*Results, error) {
	res := &Results{Opts: r.opts}
	if err := r.warmUp(ctx); err != nil {
		return nil, err
	}
	steps := []struct {
		name string
		f    func(context.Context, *Results) error
	}{
		{"uncontended cycle", r.cycle},
		{"server time", r.serverTime},
		{"round trips", r.roundTrips},
		{"allocations", r.allocs},
		{"expired takeover", r.takeover},
		{"contended hand-off", r.handoff},
		{"many keys", r.manyKeys},
	}
	for _, s := range steps {
		start := time.Now()
		logf("%s …", s.name)
		if err := s.f(ctx, res); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		logf("%s: done in %v", s.name, time.Since(start).Round(time.Millisecond))
	}
	return res, nil
}

func cycleKey(id string) string { return "bench:cycle:" + id }

// floorID is the ID of the floor of im's client.
func floorID(im impls.Impl) string {
	switch im.ClientName() {
	case impls.Redigo:
		return impls.FloorRedigo.ID
	case impls.Rueidis:
		return impls.FloorRueidis.ID
	}
	return impls.Floor.ID
}

// warmUp opens connections and loads scripts.
func (r *runner) warmUp(ctx context.Context) error {
	for _, im := range r.impls {
		if err := scenario.Cycles(ctx, r.lockers[im.ID], cycleKey(im.ID), 300); err != nil {
			return fmt.Errorf("warm-up %s: %w", im.Name, err)
		}
	}
	for c, l := range r.twins {
		if err := scenario.Cycles(ctx, l, cycleKey("twin-"+c), 300); err != nil {
			return fmt.Errorf("warm-up the %s floor's twin: %w", c, err)
		}
	}
	return scenario.Pings(ctx, r.clients[impls.Floor.ID], 300)
}

// cycle: one goroutine, acquire + release, interleaved rounds. In every
// round each implementation runs a block of cycles paired with its client's
// floor, one cycle of each in turn (scenario.Paired); the floor itself is
// paired with a twin of its own (an A/A pair, the method's noise).
func (r *runner) cycle(ctx context.Context, res *Results) error {
	type entry struct {
		idx      int // into res.Cycle; -1 for PING, -2 for PING through the adapter
		deadline bool
	}
	res.Cycle = make([]CycleRow, len(r.impls))
	entries := []entry{{idx: -1}, {idx: -2}, {idx: -2, deadline: true}}
	for i, im := range r.impls {
		res.Cycle[i] = CycleRow{ID: im.ID, Name: im.Name}
		entries = append(entries, entry{idx: i}, entry{idx: i, deadline: true})
	}
	for round := 0; round < r.opts.Rounds; round++ {
		for _, e := range rotate(entries, round*3) {
			cctx, cancel := ctx, context.CancelFunc(func() {})
			if e.deadline {
				cctx, cancel = context.WithTimeout(ctx, time.Minute)
			}
			err := r.cycleBlock(cctx, res, e.idx, e.deadline, round%2 == 0)
			cancel()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// cycleBlock runs one block of the cycle scenario: PINGs (idx -1), PINGs
// through the adapter (-2), or the implementation at idx paired with its
// client's floor, the floor first when floorFirst.
func (r *runner) cycleBlock(ctx context.Context, res *Results, idx int, deadline, floorFirst bool) error {
	n := r.opts.CycleOps
	if idx < 0 {
		ping := func(ctx context.Context) error { return impls.Ping(ctx, r.clients[impls.Floor.ID]) }
		if idx == -2 {
			ping = impls.Adapter(r.clients[impls.Floor.ID])
		}
		start := time.Now()
		for i := 0; i < n; i++ {
			if err := ping(ctx); err != nil {
				return err
			}
		}
		ns := float64(time.Since(start).Nanoseconds()) / float64(n)
		switch {
		case idx == -1:
			res.PingNs = append(res.PingNs, ns)
		case deadline:
			res.AdapterPingDeadlineNs = append(res.AdapterPingDeadlineNs, ns)
		default:
			res.AdapterPingNs = append(res.AdapterPingNs, ns)
		}
		return nil
	}
	row := &res.Cycle[idx]
	im := r.impls[idx]
	floor, ok := r.lockers[floorID(im)]
	if im.ID == floorID(im) {
		floor, ok = r.twins[im.ClientName()]
	}
	if !ok {
		return fmt.Errorf("%s: no floor of its client (%s) in this run", im.Name, im.ClientName())
	}
	fns, ns, err := scenario.Paired(ctx, floor, r.lockers[im.ID], cycleKey("floor-of-"+im.ID), cycleKey(im.ID), n,
		floorFirst)
	if err != nil {
		return fmt.Errorf("%s: %w", row.Name, err)
	}
	if deadline {
		row.NsDeadline = append(row.NsDeadline, ns)
		row.FloorNsDeadline = append(row.FloorNsDeadline, fns)
	} else {
		row.Ns = append(row.Ns, ns)
		row.FloorNs = append(row.FloorNs, fns)
	}
	return nil
}

// roundTrips counts the commands of a cycle and of a takeover on the server.
func (r *runner) roundTrips(ctx context.Context, res *Results) error {
	k, err := monitor.Start(r.addr, r.setup)
	if err != nil {
		return err
	}
	defer k.Close() // MONITOR slows the server and its reader allocates
	n := r.opts.CountOps
	for i := range res.Cycle {
		row := &res.Cycle[i]
		c, err := k.Measure(func() error { return scenario.Cycles(ctx, r.lockers[row.ID], cycleKey(row.ID), n) })
		if err != nil {
			return fmt.Errorf("%s: %w", row.Name, err)
		}
		row.RoundTrips = float64(c.RoundTrips()) / float64(n)
		row.Sent = monitor.Breakdown(c.Sent, n)
		row.SentCmds = c.Sent
		row.ScriptCmds = float64(c.ScriptCommands()) / float64(n)
		row.InScript = monitor.Breakdown(c.InScript, n)
		for cmd := range c.Sent {
			row.ServerUs += row.Usec[cmd]
		}
	}
	return nil
}

// serverTime reads, per cycle, the commands the server ran and its
// execution time (INFO commandstats deltas) and its process CPU time (INFO
// cpu deltas), without MONITOR (which adds to both). The INFO commands of the
// measurement itself are left out of the counts (not out of the CPU time).
func (r *runner) serverTime(ctx context.Context, res *Results) error {
	n := r.opts.ServerOps
	for i := range res.Cycle {
		row := &res.Cycle[i]
		cpu0, err := r.serverCPU()
		if err != nil {
			return err
		}
		before, err := r.setup.CommandStats()
		if err != nil {
			return err
		}
		if err := scenario.Cycles(ctx, r.lockers[row.ID], cycleKey(row.ID), n); err != nil {
			return fmt.Errorf("%s: %w", row.Name, err)
		}
		after, err := r.setup.CommandStats()
		if err != nil {
			return err
		}
		cpu1, err := r.serverCPU()
		if err != nil {
			return err
		}
		row.ServerCPUUs = (cpu1 - cpu0) * 1e6 / float64(n)
		row.Usec, row.Calls, row.CallsTotal = map[string]float64{}, map[string]float64{}, 0
		for cmd, a := range after {
			if cmd == "INFO" {
				continue
			}
			if d := a.Usec - before[cmd].Usec; d > 0 {
				row.Usec[cmd] = float64(d) / float64(n)
			}
			if d := a.Calls - before[cmd].Calls; d > 0 {
				row.Calls[cmd] = float64(d) / float64(n)
				row.CallsTotal += float64(d) / float64(n)
			}
		}
	}
	return nil
}

// serverCPU is the server process's CPU time so far, in seconds.
func (r *runner) serverCPU() (float64, error) {
	info, err := r.setup.Info("cpu")
	if err != nil {
		return 0, err
	}
	sys, err1 := strconv.ParseFloat(info["used_cpu_sys"], 64)
	user, err2 := strconv.ParseFloat(info["used_cpu_user"], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("INFO cpu: used_cpu_sys %q, used_cpu_user %q", info["used_cpu_sys"], info["used_cpu_user"])
	}
	return sys + user, nil
}

func (r *runner) allocs(ctx context.Context, res *Results) error {
	for i := range res.Cycle {
		row := &res.Cycle[i]
		row.Allocs, row.Bytes = -1, -1
		for try := 0; try < 3; try++ { // the least of three: background noise only adds
			a, b, err := scenario.Allocs(ctx, r.lockers[row.ID], cycleKey(row.ID), r.opts.AllocOps)
			if err != nil {
				return fmt.Errorf("%s: %w", row.Name, err)
			}
			if row.Allocs < 0 || a < row.Allocs {
				row.Allocs = a
			}
			if row.Bytes < 0 || b < row.Bytes {
				row.Bytes = b
			}
		}
	}
	return nil
}

func takeoverKey(id string) string { return "bench:takeover:" + id }

func (r *runner) takeover(ctx context.Context, res *Results) error {
	var idx []int
	for _, im := range r.impls {
		if im.Takeover {
			idx = append(idx, len(res.Takeover))
			res.Takeover = append(res.Takeover, TakeoverRow{ID: im.ID, Name: im.Name})
		}
	}
	if len(idx) == 0 {
		return nil
	}
	k, err := monitor.Start(r.addr, r.setup)
	if err != nil {
		return err
	}
	for i := range res.Takeover {
		row := &res.Takeover[i]
		n := r.opts.CountOps
		var err error
		c, merr := k.Measure(func() error {
			_, err = scenario.Takeovers(ctx, r.lockers[row.ID], r.setup, takeoverKey(row.ID), n)
			return err
		})
		if merr != nil {
			_ = k.Close()
			return fmt.Errorf("%s: %w", row.Name, merr)
		}
		row.RoundTrips = float64(c.RoundTrips()) / float64(n)
		row.Sent = monitor.Breakdown(c.Sent, n)
		row.ScriptCmds = float64(c.ScriptCommands()) / float64(n)
		row.InScript = monitor.Breakdown(c.InScript, n)
	}
	// Timing after counting, with MONITOR closed: it slows the server.
	if err := k.Close(); err != nil {
		logf("closing MONITOR: %v", err)
	}
	for round := 0; round < r.opts.Rounds; round++ {
		for _, i := range rotate(idx, round) {
			row := &res.Takeover[i]
			d, err := scenario.Takeovers(ctx, r.lockers[row.ID], r.setup, takeoverKey(row.ID), r.opts.TakeoverOps)
			if err != nil {
				return fmt.Errorf("%s: %w", row.Name, err)
			}
			row.Ns = append(row.Ns, float64(d.Nanoseconds())/float64(r.opts.TakeoverOps))
		}
	}
	return nil
}

func (r *runner) handoff(ctx context.Context, res *Results) error {
	type config struct {
		row     int
		locker  impls.Locker
		key     string
		samples []time.Duration
		waits   []time.Duration
		pings   []time.Duration
	}
	var configs []*config
	for _, im := range r.impls {
		if !im.CanWait() {
			continue
		}
		for _, w := range []impls.Wait{impls.Recommended, impls.Tight} {
			if _, ok := im.Waits[w]; !ok {
				continue
			}
			l, err := im.New(impls.On(r.clients[im.ID]), w)
			if err != nil {
				return fmt.Errorf("%s (%v): %w", im.Name, w, err)
			}
			if c, ok := l.(impls.Closer); ok {
				r.closers = append(r.closers, c.Close)
			}
			configs = append(configs, &config{row: len(res.Handoff), locker: l,
				key: "bench:handoff:" + im.ID + ":" + w.String()})
			res.Handoff = append(res.Handoff, HandoffRow{ID: im.ID, Name: im.Name, Wait: w.String(), WaitDesc: im.Waits[w]})
		}
	}
	cfg := scenario.HandoffConfig{Workers: r.opts.Workers, Duration: r.opts.HandoffDur, Hold: r.opts.Hold,
		Stagger: r.opts.Stagger}
	pinger := impls.NewClient(r.addr)
	defer pinger.Close()
	for round := 0; round < r.opts.HandoffRounds; round++ {
		for _, c := range rotate(configs, round) {
			row := &res.Handoff[c.row]
			// A fresh key per run: a Lock cancelled at the end of a run may
			// leave a lock behind (see docs/performance.md, what is left).
			stop := scenario.Pinger(pinger, time.Millisecond)
			out, err := scenario.Handoff(ctx, []impls.Locker{c.locker}, fmt.Sprintf("%s:%d", c.key, round), cfg)
			c.pings = append(c.pings, stop()...)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", row.Name, row.Wait, err)
			}
			row.CyclesPerSec = append(row.CyclesPerSec, out.CyclesPerSec())
			row.HoldNs += float64(out.HoldMean()) / float64(r.opts.HandoffRounds)
			c.samples = append(c.samples, out.Handoffs...)
			c.waits = append(c.waits, out.Waits...)
			row.Early += out.Early
			row.Self += out.Self
			row.GaveUp += out.GaveUp
			row.Violations += out.Violations
			logf("  %-28s %-11s round %d: %7.0f cycles/s, %5d hand-offs, p50 %v", row.Name, row.Wait, round+1,
				out.CyclesPerSec(), len(out.Handoffs), scenario.Percentile(out.Handoffs, 50))
		}
	}
	// Commands per cycle, in a separate pass: MONITOR slows the server.
	k, err := monitor.Start(r.addr, r.setup)
	if err != nil {
		return err
	}
	defer k.Close()
	for _, c := range configs {
		row := &res.Handoff[c.row]
		var out scenario.HandoffResult
		pass := cfg
		pass.Duration = r.opts.HandoffDur / 3
		counts, err := k.Measure(func() error {
			var err error
			out, err = scenario.Handoff(ctx, []impls.Locker{c.locker}, c.key+":count", pass)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s (%s): counting: %w", row.Name, row.Wait, err)
		}
		if out.Total > 0 {
			row.RoundTrips = float64(counts.RoundTrips()) / float64(out.Total)
			row.Sent = monitor.Breakdown(counts.Sent, out.Total)
		}
	}
	if err := r.waiters(ctx, res, cfg, k); err != nil {
		return err
	}
	for _, c := range configs {
		row := &res.Handoff[c.row]
		row.Samples = len(c.samples)
		row.PingP50 = float64(scenario.Percentile(c.pings, 50))
		row.P50 = float64(scenario.Percentile(c.samples, 50))
		row.P90 = float64(scenario.Percentile(c.samples, 90))
		row.P99 = float64(scenario.Percentile(c.samples, 99))
		row.Max = float64(scenario.Percentile(c.samples, 100))
		row.WaitP50 = float64(scenario.Percentile(c.waits, 50))
		row.WaitP99 = float64(scenario.Percentile(c.waits, 99))
		row.WaitMax = float64(scenario.Percentile(c.waits, 100))
	}
	return nil
}

// waiters runs modern's hand-off (recommended settings) with fewer
// goroutines: how the hand-off changes with the number of waiters.
func (r *runner) waiters(ctx context.Context, res *Results, cfg scenario.HandoffConfig, k *monitor.Counter) error {
	im, ok := impls.ByID(impls.Modern.ID)
	if !ok || !slices.ContainsFunc(r.impls, func(i impls.Impl) bool { return i.ID == im.ID }) {
		return nil
	}
	l, err := im.New(impls.On(r.clients[im.ID]), impls.Recommended)
	if err != nil {
		return err
	}
	for _, n := range []int{2, 4, 8} {
		if n >= cfg.Workers {
			break
		}
		c := cfg
		c.Workers = n
		out, err := scenario.Handoff(ctx, []impls.Locker{l}, fmt.Sprintf("bench:waiters:%d", n), c)
		if err != nil {
			return fmt.Errorf("modern, %d goroutines: %w", n, err)
		}
		row := WaitersRow{Workers: n, CyclesPerSec: out.CyclesPerSec(),
			P50: float64(scenario.Percentile(out.Handoffs, 50)), P99: float64(scenario.Percentile(out.Handoffs, 99))}
		c.Duration = cfg.Duration / 3
		var cnt scenario.HandoffResult
		counts, err := k.Measure(func() error {
			var err error
			cnt, err = scenario.Handoff(ctx, []impls.Locker{l}, fmt.Sprintf("bench:waiters:%d:count", n), c)
			return err
		})
		if err != nil {
			return err
		}
		if cnt.Total > 0 {
			row.RoundTrips = float64(counts.RoundTrips()) / float64(cnt.Total)
		}
		res.Waiters = append(res.Waiters, row)
	}
	return nil
}

func (r *runner) manyKeys(ctx context.Context, res *Results) error {
	res.ManyKeys = make([]ManyRow, len(r.impls))
	keys := map[string][]string{}
	for i, im := range r.impls {
		res.ManyKeys[i] = ManyRow{ID: im.ID, Name: im.Name}
		keys[im.ID] = scenario.Keys("bench:many:"+im.ID+":", r.opts.ManyKeys)
	}
	order := make([]int, len(r.impls))
	for i := range order {
		order[i] = i
	}
	for round := 0; round < r.opts.ManyRounds; round++ {
		for _, i := range rotate(order, round) {
			row := &res.ManyKeys[i]
			out, err := scenario.ManyKeys(ctx, r.lockers[row.ID], keys[row.ID], r.opts.ManyWorkers, r.opts.ManyDur, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", row.Name, err)
			}
			row.CyclesPerSec = append(row.CyclesPerSec, out.CyclesPerSec())
			row.Busy += out.Busy
		}
	}
	return nil
}
