package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
)

// latHandoffIDs are the hand-off's implementations over the network: those
// of the cluster hand-off, and bsm/redislock (it polls, every 100 ms).
var latHandoffIDs = append(append([]string(nil), handoffIDs...), impls.BSM.ID)

// measureLatency: the single server behind a proxy adding each round trip
// of Opts.Latencies: the uncontended cycle, the hand-off (8 waiters) and
// many locks (64 goroutines, 1,000 keys), against the same peers.
func measureLatency(ctx context.Context, e *env, res *Results) error {
	lr := &LatencyResult{}
	for _, rtt := range e.opts.Latencies {
		addr, stop, err := startProxy(e.single.addrs[0], rtt)
		if err != nil {
			return err
		}
		// The proxy's address for the clients, the server's own
		// connections for the statistics.
		d := &deployment{name: fmt.Sprintf("single server, +%v round trip", rtt), addrs: []string{addr},
			nodes: e.single.nodes}
		lv, err := measureLevel(ctx, e.opts, d, rtt)
		stop()
		if err != nil {
			return fmt.Errorf("+%v: %w", rtt, err)
		}
		lr.Levels = append(lr.Levels, lv)
	}
	res.Latency = lr
	return nil
}

func measureLevel(ctx context.Context, o Options, d *deployment, rtt time.Duration) (LatencyLevel, error) {
	lv := LatencyLevel{RTT: rtt}
	set := newLockers(d)
	defer set.close()
	if err := set.add(cycleIDs...); err != nil {
		return lv, err
	}
	if err := warmUp(ctx, set, cycleIDs); err != nil {
		return lv, err
	}
	ping, closePing := d.target()
	defer closePing()
	for i := 0; i < 50; i++ {
		ns, err := pingBlock(ctx, ping, 1)
		if err != nil {
			return lv, err
		}
		lv.PingNs = append(lv.PingNs, ns)
	}
	lv.Cycle = newPairRows(cycleIDs)
	for round := 0; round < o.LatCycleRounds; round++ {
		if err := pairRound(ctx, set, lv.Cycle, o.LatCycleOps, round, false); err != nil {
			return lv, err
		}
	}
	logf("  +%v: cycle done", rtt)
	if err := latHandoff(ctx, o, d, &lv); err != nil {
		return lv, err
	}
	logf("  +%v: hand-off done", rtt)
	if err := warmPools(ctx, set, cycleIDs, o.ManyWorkers); err != nil {
		return lv, err
	}
	keys := manyKeys(1000)
	for _, id := range cycleIDs {
		im, _ := impls.ByID(id)
		lv.Many = append(lv.Many, ManyRow{ID: id, Name: im.Name, Client: im.ClientName(), Keys: len(keys)})
	}
	for round := 0; round < o.ManyRounds; round++ {
		for _, i := range rotate(indices(len(lv.Many)), round) {
			row := &lv.Many[i]
			r, err := manyRun(ctx, d, set.l[row.ID], keys, o.ManyWorkers, o.LatManyDur)
			if err != nil {
				return lv, fmt.Errorf("%s: %w", row.Name, err)
			}
			row.Rounds = append(row.Rounds, r)
		}
	}
	return lv, nil
}

// latHandoff: 8 waiters on one key, each on a locker and client of its own.
func latHandoff(ctx context.Context, o Options, d *deployment, lv *LatencyLevel) error {
	const waiters = 8
	lv.Handoff = make([]HandoffRow, 0, len(latHandoffIDs))
	var configs []*handoffConfig
	for _, id := range latHandoffIDs {
		im, _ := impls.ByID(id)
		lv.Handoff = append(lv.Handoff, HandoffRow{ID: id, Name: im.Name, Client: im.ClientName(), Deployment: d.name,
			Waiters: waiters})
		configs = append(configs, &handoffConfig{row: &lv.Handoff[len(lv.Handoff)-1], d: d})
	}
	for round := 0; round < o.HandoffRounds; round++ {
		for _, c := range rotate(configs, round) {
			key := fmt.Sprintf("bench:scale:lat-handoff:%s:%v:%d", c.row.ID, lv.RTT, round)
			if err := handoffRun(ctx, o, c, key, o.LatHandoffDur); err != nil {
				return err
			}
		}
	}
	for _, c := range configs {
		c.finish()
	}
	return nil
}
