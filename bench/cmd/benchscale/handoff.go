package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/monitor"
	"github.com/lockbridge/lockbridge/bench/internal/scenario"
)

// handoffIDs are the implementations of the hand-off with many waiters:
// lockbridge modern, woken by release notices (SPUBLISH on a cluster), and
// rueidislock, woken by client-side-caching invalidation.
var handoffIDs = []string{impls.Modern.ID, impls.ModernRueidis.ID, impls.RueidisLock.ID}

// handoffConfig is one row of the hand-off scenario.
type handoffConfig struct {
	row     *HandoffRow
	d       *deployment
	samples []time.Duration
	waits   []time.Duration
	cycles  int64
	cmds    int64
	client  float64 // this process's CPU s
	server  float64 // the servers' CPU s
	byName  map[string]int64
}

// measureHandoff: 8 and 64 waiters on one key, each with a locker and a
// client of its own (as many processes: a release reaches the others only
// through Redis), on the single server and on the 3-primary cluster.
func measureHandoff(ctx context.Context, e *env, res *Results) error {
	deps := []*deployment{e.single}
	if c := e.cluster(3); c != nil {
		deps = append(deps, c)
	}
	var configs []*handoffConfig
	hr := &HandoffResult{Rows: make([]HandoffRow, 0, len(deps)*len(handoffIDs)*len(e.opts.Waiters))}
	for _, d := range deps {
		for _, w := range e.opts.Waiters {
			for _, id := range handoffIDs {
				im, _ := impls.ByID(id)
				hr.Rows = append(hr.Rows, HandoffRow{ID: id, Name: im.Name, Client: im.ClientName(), Deployment: d.name,
					Primaries: d.primaries, Waiters: w})
				configs = append(configs, &handoffConfig{row: &hr.Rows[len(hr.Rows)-1], d: d})
			}
		}
	}
	for round := 0; round < e.opts.HandoffRounds; round++ {
		for _, c := range rotate(configs, round) {
			if err := handoffRun(ctx, e.opts, c, fmt.Sprintf("bench:scale:handoff:%s:%d:%d:%d", c.row.ID, c.row.Primaries,
				c.row.Waiters, round), e.opts.HandoffDur); err != nil {
				return err
			}
		}
	}
	for _, c := range configs {
		c.finish()
	}
	res.Handoff = hr
	return nil
}

// handoffRun runs c once on key for dur: c.row.Waiters goroutines, each on
// a locker and client of its own.
func handoffRun(ctx context.Context, o Options, c *handoffConfig, key string, dur time.Duration) error {
	im, _ := impls.ByID(c.row.ID)
	set := newLockers(c.d)
	defer set.close()
	ls := make([]impls.Locker, c.row.Waiters)
	for i := range ls {
		l, err := set.open(im, impls.Recommended)
		if err != nil {
			return err
		}
		// Connected, the scripts loaded, before the run.
		if err := warmOne(ctx, l, fmt.Sprintf("%s:warm:%d", key, i)); err != nil {
			return fmt.Errorf("%s: warm-up: %w", im.Name, err)
		}
		ls[i] = l
	}
	a, err := c.d.snaps()
	if err != nil {
		return err
	}
	cfg := scenario.HandoffConfig{Workers: c.row.Waiters, Duration: dur, Hold: o.Hold, Stagger: o.Stagger}
	c0 := processCPU()
	out, err := scenario.Handoff(ctx, ls, key, cfg)
	if err != nil {
		return fmt.Errorf("%s, %d waiters, %s: %w", im.Name, c.row.Waiters, c.d.name, err)
	}
	c.client += processCPU() - c0
	b, err := c.d.snaps()
	if err != nil {
		return err
	}
	if c.byName == nil {
		c.byName = map[string]int64{}
	}
	for i := range a {
		c.cmds += b[i].calls - a[i].calls
		c.server += b[i].cpu - a[i].cpu
		for cmd, st := range b[i].stats {
			setup := strings.HasPrefix(cmd, "HELLO") || strings.HasPrefix(cmd, "CLIENT")
			if d := st.Calls - a[i].stats[cmd].Calls; d > 0 && (setup || !ignored(cmd)) {
				// A subcommand ("pubsub|numsub") in a Markdown table: a
				// space, not a column break.
				c.byName[strings.ReplaceAll(cmd, "|", " ")] += d
			}
		}
	}
	c.cycles += int64(out.Total)
	c.row.CyclesPerSec = append(c.row.CyclesPerSec, out.CyclesPerSec())
	c.samples = append(c.samples, out.Handoffs...)
	c.waits = append(c.waits, out.Waits...)
	c.row.Violations += out.Violations
	c.row.GaveUp += out.GaveUp
	c.row.Early += out.Early
	logf("  %-36s %-24s %2d waiters: %6.0f cycles/s, wait p99 %v", im.Name, c.d.name, c.row.Waiters, out.CyclesPerSec(),
		scenario.Percentile(out.Waits, 99))
	return nil
}

// warmOne takes and releases key once through l. A TryLock may find the
// key busy though nobody holds it (rueidislock gives up an attempt after its
// own 20 ms on a loaded machine): it tries again, a few times.
func warmOne(ctx context.Context, l impls.Locker, key string) error {
	var err error
	for try := 0; try < 20; try++ {
		if err = scenario.Cycles(ctx, l, key, 1); !errors.Is(err, impls.ErrBusy) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

func (c *handoffConfig) finish() {
	r := c.row
	r.Samples = len(c.samples)
	r.P50 = float64(scenario.Percentile(c.samples, 50))
	r.P99 = float64(scenario.Percentile(c.samples, 99))
	r.WaitP50 = float64(scenario.Percentile(c.waits, 50))
	r.WaitP99 = float64(scenario.Percentile(c.waits, 99))
	r.WaitMax = float64(scenario.Percentile(c.waits, 100))
	if c.cycles > 0 {
		r.CmdsPerCycle = float64(c.cmds) / float64(c.cycles)
		r.ClientCPUUs = c.client * 1e6 / float64(c.cycles)
		r.ServerCPUUs = c.server * 1e6 / float64(c.cycles)
		r.ByName = monitor.Breakdown(c.byName, int(c.cycles))
	}
}
