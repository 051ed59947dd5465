package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/monitor"
	"github.com/lockbridge/lockbridge/bench/internal/scenario"
)

// cycleIDs are the implementations of the uncontended cycle and of the
// latency scenarios: the floor, lockbridge modern and the peer of each
// client.
var cycleIDs = []string{impls.Floor.ID, impls.Modern.ID, impls.BSM.ID, impls.FloorRueidis.ID, impls.ModernRueidis.ID,
	impls.RueidisLock.ID}

func cycleKey(id string) string { return "bench:scale:cycle:" + id }

// rotate returns xs rotated left by r.
func rotate[T any](xs []T, r int) []T {
	if len(xs) == 0 {
		return xs
	}
	r %= len(xs)
	return append(slices.Clone(xs[r:]), xs[:r]...)
}

// indices are 0 … n-1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// newPairRows are empty rows for ids.
func newPairRows(ids []string) []PairRow {
	rows := make([]PairRow, len(ids))
	for i, id := range ids {
		im, _ := impls.ByID(id)
		rows[i] = PairRow{ID: id, Name: im.Name, Client: im.ClientName()}
	}
	return rows
}

// pairRound runs one round of the cycle pairs on set: every implementation
// of rows (in an order rotated by round) in a block of n cycles, one cycle
// of its client's floor and one of its own in turn (the floor first in even
// rounds); a floor is paired with its twin.
func pairRound(ctx context.Context, set *lockers, rows []PairRow, n, round int, blocks bool) error {
	pair := scenario.Paired
	if blocks {
		pair = scenario.Blocks
	}
	for _, i := range rotate(indices(len(rows)), round) {
		row := &rows[i]
		im, _ := impls.ByID(row.ID)
		floor := set.l[floorOf(im)]
		if row.ID == floorOf(im) {
			floor = set.twin[im.ClientName()]
		}
		fns, ns, err := pair(ctx, floor, set.l[row.ID], cycleKey("floor-beside-"+row.ID), cycleKey(row.ID), n, round%2 == 0)
		if err != nil {
			return fmt.Errorf("%s: %w", row.Name, err)
		}
		row.Ns = append(row.Ns, ns)
		row.FloorNs = append(row.FloorNs, fns)
	}
	return nil
}

// pingBlock is the mean ns of n PINGs on c.
func pingBlock(ctx context.Context, c impls.Target, n int) (float64, error) {
	start := time.Now()
	if err := scenario.Pings(ctx, c.GoRedis, n); err != nil {
		return 0, err
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n), nil
}

func warmUp(ctx context.Context, set *lockers, ids []string) error {
	for i := 0; i < 200; i++ {
		for _, id := range ids {
			if err := warmOne(ctx, set.l[id], cycleKey(id)); err != nil {
				return fmt.Errorf("warm-up %s: %w", id, err)
			}
		}
		for c, l := range set.twin {
			if err := warmOne(ctx, l, cycleKey("twin-"+c)); err != nil {
				return fmt.Errorf("warm-up the %s floor's twin: %w", c, err)
			}
		}
	}
	return nil
}

// measureCycle: the uncontended cycle on the single server, with the cores
// kept awake and free to halt (rounds of both interleaved), then where its
// time goes.
func measureCycle(ctx context.Context, e *env, res *Results) error {
	set := newLockers(e.single)
	defer set.close()
	if err := set.add(cycleIDs...); err != nil {
		return err
	}
	if err := warmUp(ctx, set, cycleIDs); err != nil {
		return err
	}
	ping, closePing := e.single.target()
	defer closePing()
	cr := &CycleResult{Regimes: []Regime{
		{Name: "cores kept awake", Awake: true, Rows: newPairRows(cycleIDs)},
		{Name: "cores free to halt when idle", Rows: newPairRows(cycleIDs)},
		{Name: "cores kept awake, pairs of blocks one after the other", Awake: true, Blocks: true,
			Rows: newPairRows(cycleIDs)},
	}}
	for round := 0; round < e.opts.CycleRounds; round++ {
		for _, ri := range rotate(indices(len(cr.Regimes)), round) {
			rg := &cr.Regimes[ri]
			if rg.Awake {
				e.cores.wake()
			} else {
				e.cores.sleep()
			}
			p, err := pingBlock(ctx, ping, e.opts.CycleOps)
			if err != nil {
				return err
			}
			rg.PingNs = append(rg.PingNs, p)
			if err := pairRound(ctx, set, rg.Rows, e.opts.CycleOps, round, rg.Blocks); err != nil {
				return err
			}
		}
	}
	e.cores.wake()
	cr.AwakeNote = e.cores.note
	var err error
	if cr.Costs, err = costs(ctx, e, set); err != nil {
		return err
	}
	res.Cycle = cr
	return nil
}

// costs measures where each implementation's cycle goes: round trips
// (MONITOR), server execution and CPU time (INFO, one goroutine), client
// CPU with 64 goroutines keeping the cores busy, allocations.
func costs(ctx context.Context, e *env, set *lockers) ([]CostRow, error) {
	rows := make([]CostRow, len(cycleIDs))
	k, err := monitor.Start(e.single.addrs[0], e.single.nodes[0].conn)
	if err != nil {
		return nil, err
	}
	for i, id := range cycleIDs {
		im, _ := impls.ByID(id)
		rows[i] = CostRow{ID: id, Name: im.Name, Client: im.ClientName()}
		n := e.opts.CountOps
		c, err := k.Measure(func() error { return scenario.Cycles(ctx, set.l[id], cycleKey(id), n) })
		if err != nil {
			_ = k.Close()
			return nil, fmt.Errorf("%s: %w", im.Name, err)
		}
		rows[i].RoundTrips = float64(c.RoundTrips()) / float64(n)
		rows[i].Sent = monitor.Breakdown(c.Sent, n)
		if err := serverPass(ctx, e, set.l[id], &rows[i], c.Sent); err != nil {
			_ = k.Close()
			return nil, err
		}
	}
	_ = k.Close() // MONITOR slows the server: closed before the busy pass
	for i := range rows {
		if err := busyPass(ctx, e, set.l[rows[i].ID], &rows[i]); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// serverPass runs cycles with MONITOR's counts known (sent: the commands a
// cycle sends) and reads the server's execution and CPU time per cycle.
func serverPass(ctx context.Context, e *env, l impls.Locker, row *CostRow, sent map[string]int64) error {
	nd := e.single.nodes[0]
	n := e.opts.ServerOps
	a, err := nd.snap()
	if err != nil {
		return err
	}
	if err := scenario.Cycles(ctx, l, cycleKey(row.ID), n); err != nil {
		return fmt.Errorf("%s: %w", row.Name, err)
	}
	b, err := nd.snap()
	if err != nil {
		return err
	}
	row.ServerCPUUs = (b.cpu - a.cpu) * 1e6 / float64(n)
	for cmd := range sent {
		row.ExecUs += float64(b.stats[cmd].Usec-a.stats[cmd].Usec) / float64(n)
	}
	return nil
}

// busyPass: 64 goroutines over 1,000 keys keep both cores busy, so that
// this process's CPU time per cycle is the work of a cycle and not the
// runtime's spinning while a lone goroutine waits for its reply. Then the
// allocations of one goroutine's cycles.
func busyPass(ctx context.Context, e *env, l impls.Locker, row *CostRow) error {
	keys := scenario.Keys("bench:scale:busy:", 1000)
	nd := e.single.nodes[0]
	a, err := nd.snap()
	if err != nil {
		return err
	}
	c0 := processCPU()
	r, err := scenario.ManyKeys(ctx, l, keys, 64, 0, int64(e.opts.ClientOps))
	if err != nil {
		return fmt.Errorf("%s: %w", row.Name, err)
	}
	c1 := processCPU()
	b, err := nd.snap()
	if err != nil {
		return err
	}
	row.ClientCPUUs = (c1 - c0) * 1e6 / float64(r.Cycles)
	row.ServerCPUBusyUs = (b.cpu - a.cpu) * 1e6 / float64(r.Cycles)
	row.Allocs, row.Bytes = -1, -1
	for try := 0; try < 3; try++ { // the least of three: background work only adds
		al, by, err := scenario.Allocs(ctx, l, cycleKey(row.ID), e.opts.AllocOps)
		if err != nil {
			return fmt.Errorf("%s: %w", row.Name, err)
		}
		if row.Allocs < 0 || al < row.Allocs {
			row.Allocs = al
		}
		if row.Bytes < 0 || by < row.Bytes {
			row.Bytes = by
		}
	}
	return nil
}
