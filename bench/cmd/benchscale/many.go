package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/scenario"
	"github.com/lockbridge/lockbridge/driver/keyslot"
)

// manyKeys are the lock names of the many-locks scenario: the same for
// every implementation, so that they spread over a cluster's nodes alike.
func manyKeys(n int) []string { return scenario.Keys("bench:many:", n) }

// rueidisLockKey is the key rueidislock (KeyMajority 1) stores a lock name in.
func rueidisLockKey(name string) string { return "rueidislock:0:" + name }

// namespaceKey is a key of the migrate lockers' namespace: all of them share
// its hash slot.
const namespaceKey = "lockbridge:{" + impls.MigrateNamespace + "}:phase"

// measureMany: 64 goroutines over 1,000 and 100,000 keys, every scale
// implementation on the single server and on each cluster; rounds, keys,
// implementations and deployments interleaved.
func measureMany(ctx context.Context, e *env, res *Results) error {
	deps := append([]*deployment{e.single}, e.clusters...)
	var ids []string
	for _, im := range impls.Scale() {
		ids = append(ids, im.ID)
	}
	sets := make([]*lockers, len(deps))
	mr := &ManyResult{}
	for i, d := range deps {
		sets[i] = newLockers(d)
		defer sets[i].close()
		if err := prepare(ctx, sets[i], ids, e.opts.ManyWorkers); err != nil {
			return err
		}
		info, err := describe(d, e.opts)
		if err != nil {
			return err
		}
		mr.Deployments = append(mr.Deployments, info)
	}
	keys := map[int][]string{}
	at := map[[3]int]int{} // key count, implementation, deployment → row
	for _, n := range e.opts.ManyKeys {
		keys[n] = manyKeys(n)
		for ii, id := range ids {
			im, _ := impls.ByID(id)
			for di := range deps {
				at[[3]int{n, ii, di}] = len(mr.Rows)
				mr.Rows = append(mr.Rows, ManyRow{ID: id, Name: im.Name, Client: im.ClientName(), Keys: n, Deployment: di})
			}
		}
	}
	for round := 0; round < e.opts.ManyRounds; round++ {
		for _, n := range e.opts.ManyKeys {
			for _, ii := range rotate(indices(len(ids)), round) {
				for _, di := range rotate(indices(len(deps)), round) {
					row := &mr.Rows[at[[3]int{n, ii, di}]]
					r, err := manyRun(ctx, deps[di], sets[di].l[row.ID], keys[n], e.opts.ManyWorkers, e.opts.ManyDur)
					if err != nil {
						return fmt.Errorf("%s, %d keys, %s: %w", row.Name, n, deps[di].name, err)
					}
					row.Rounds = append(row.Rounds, r)
				}
			}
		}
		logf("  many locks: round %d of %d done", round+1, e.opts.ManyRounds)
	}
	res.Many = mr
	return nil
}

// prepare opens the lockers of ids on set and warms them up: connected,
// scripts loaded, pools as large as workers goroutines make them.
func prepare(ctx context.Context, set *lockers, ids []string, workers int) error {
	if err := set.add(ids...); err != nil {
		return err
	}
	if err := warmUp(ctx, set, ids); err != nil {
		return err
	}
	return warmPools(ctx, set, ids, workers)
}

// warmPools runs a short many-locks pass on each locker of ids, so that
// every client has opened the connections 64 goroutines need (go-redis
// dials up to its pool size, on every node of a cluster) before anything is
// measured.
func warmPools(ctx context.Context, set *lockers, ids []string, workers int) error {
	keys := manyKeys(1000)
	for _, id := range ids {
		if _, err := scenario.ManyKeys(ctx, set.l[id], keys, workers, 0, 2000); err != nil {
			return fmt.Errorf("warm-up %s: %w", id, err)
		}
	}
	return nil
}

// describe measures d's idle CPU and how the keys spread over its nodes.
func describe(d *deployment, o Options) (DeploymentInfo, error) {
	window := time.Second
	if o.ManyDur < 500*time.Millisecond {
		window = 300 * time.Millisecond
	}
	if err := d.measureIdle(window); err != nil {
		return DeploymentInfo{}, err
	}
	info := DeploymentInfo{Name: d.name, Primaries: d.primaries, IdleCPU: d.idle, KeyShare: map[int][]float64{},
		RueidisKeys: map[int][]float64{}}
	owners, err := d.slotOwners()
	if err != nil {
		return DeploymentInfo{}, err
	}
	share := func(names []string, name func(string) string) []float64 {
		out := make([]float64, len(d.nodes))
		for _, k := range names {
			n := 0
			if owners != nil {
				n = owners[keyslot.Of(name(k))]
			}
			out[n] += 1 / float64(len(names))
		}
		return out
	}
	for _, n := range o.ManyKeys {
		info.KeyShare[n] = share(manyKeys(n), func(k string) string { return k })
		info.RueidisKeys[n] = share(manyKeys(n), rueidisLockKey)
	}
	if owners != nil {
		info.NamespaceNode = owners[keyslot.Of(namespaceKey)]
	}
	return info, nil
}

// manyRun is one run of the many-locks scenario on d, with the server and
// client CPU it took.
func manyRun(ctx context.Context, d *deployment, l impls.Locker, keys []string, workers int,
	dur time.Duration) (ManyRound, error) {
	a, err := d.snaps()
	if err != nil {
		return ManyRound{}, err
	}
	c0 := processCPU()
	r, err := scenario.ManyKeys(ctx, l, keys, workers, dur, 0)
	if err != nil {
		return ManyRound{}, err
	}
	c1 := processCPU()
	b, err := d.snaps()
	if err != nil {
		return ManyRound{}, err
	}
	out := ManyRound{Cycles: r.Cycles, Busy: r.Busy, Elapsed: r.Elapsed, ClientCPU: c1 - c0}
	for i := range a {
		out.ServerCPU = append(out.ServerCPU, b[i].cpu-a[i].cpu)
		out.Calls = append(out.Calls, b[i].calls-a[i].calls)
		out.Reads = append(out.Reads, b[i].reads-a[i].reads)
	}
	return out, nil
}
