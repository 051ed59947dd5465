package soak

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
)

// Failover to a lagging replica. F is a primary with a replica
// (redistest.Replicated), both without persistence. A failover cuts the
// replica off (REPLICAOF a dead port: the lag is real, every write after
// it is missing from the replica) for a while, or lets it catch up (a
// failover that should lose nothing), then stops writes on the primary
// (CLIENT PAUSE WRITE: expiry stops too), reads every key there, kills it
// (SIGKILL), promotes the replica (REPLICAOF NO ONE), reads every key
// there before any client can reach it, and points the workers' proxies at
// it. The old primary rejoins, empty, as the new one's replica.
//
// The two readings are the evidence: an overlap is "failover data loss"
// only when the first holder's write was on the old primary when writes
// stopped and the new primary did not have it — the key absent, another
// value in it, or an earlier expiry (a refresh lost) — and the second
// holder got in after the promotion.

// keyState is one key as a snapshot read it.
type keyState struct {
	value    string // a string key's value; "<type>" for another type
	expireAt int64  // PEXPIRETIME: Unix ms, -1 for none
}

// failover is one failover of F, on the common clock.
type failover struct {
	lag                    time.Duration // how long the replica was cut off (0: synced)
	detach, pause, promote time.Duration
	old, cur               map[string]keyState
	lostKeys               int // keys whose state the new primary lacked
}

// snapshot reads every key of the server at addr: its value (strings) and
// absolute expiry.
func snapshot(ctx context.Context, addr string) (map[string]keyState, error) {
	c := goredislib.NewClient(&goredislib.Options{Addr: addr, MaxRetries: -1, PoolSize: 1, ReadTimeout: 5 * time.Second})
	defer c.Close()
	var keys []string
	var cursor uint64
	for {
		ks, next, err := c.Scan(ctx, cursor, "*", 1000).Result()
		if err != nil {
			return nil, err
		}
		keys = append(keys, ks...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	pipe := c.Pipeline()
	types := make([]*goredislib.StatusCmd, len(keys))
	vals := make([]*goredislib.StringCmd, len(keys))
	exps := make([]*goredislib.IntCmd, len(keys))
	for i, k := range keys {
		types[i] = pipe.Type(ctx, k)
		vals[i] = goredislib.NewStringCmd(ctx, "GET", k)
		_ = pipe.Process(ctx, vals[i])
		exps[i] = goredislib.NewIntCmd(ctx, "PEXPIRETIME", k)
		_ = pipe.Process(ctx, exps[i])
	}
	_, _ = pipe.Exec(ctx)
	out := map[string]keyState{}
	for i, k := range keys {
		t, err := types[i].Result()
		if err != nil {
			return nil, fmt.Errorf("TYPE %s: %w", k, err)
		}
		if t == "none" {
			continue // gone meanwhile (it cannot: writes are paused; a replica's expired key)
		}
		st := keyState{value: "<" + t + ">", expireAt: exps[i].Val()}
		if t == "string" {
			st.value = vals[i].Val()
		}
		out[k] = st
	}
	return out, nil
}

// failover fails F over as described above, after cutting its replica off
// for lag (0: after letting it catch up). It runs on the test goroutine.
func (h *harness) failover(tb testing.TB, f *server, lag time.Duration) {
	tb.Helper()
	ctx := context.Background()
	fo := &failover{lag: lag, detach: h.now()}
	if lag > 0 {
		f.repl.Detach(tb)
		time.Sleep(lag)
	}
	old := f.repl.Primary.Addr()
	// Writes stop (and keys stop expiring) on the old primary: what it
	// holds now is what it acknowledged. 30 s: until the kill.
	if err := direct(ctx, old, "CLIENT", "PAUSE", "30000", "WRITE"); err != nil {
		tb.Fatalf("soak: pausing writes on %s: %v", old, err)
	}
	fo.pause = h.now()
	if lag == 0 {
		f.repl.Sync(tb)
	}
	var err error
	if fo.old, err = snapshot(ctx, old); err != nil {
		tb.Fatalf("soak: reading the old primary %s: %v", old, err)
	}
	f.repl.Failover(tb) // SIGKILL the old primary, REPLICAOF NO ONE
	cur := f.repl.Replica.Addr()
	if fo.cur, err = snapshot(ctx, cur); err != nil {
		tb.Fatalf("soak: reading the new primary %s: %v", cur, err)
	}
	fo.promote = h.now()
	for _, p := range f.proxies {
		p.Retarget(cur)
	}
	for k, o := range fo.old {
		if n, ok := fo.cur[k]; !ok || n.value != o.value || (o.expireAt >= 0 && n.expireAt >= 0 && n.expireAt < o.expireAt) {
			fo.lostKeys++
		}
	}
	h.mu.Lock()
	h.failovers = append(h.failovers, fo)
	h.mu.Unlock()
	f.repl.Rejoin(tb)
	if lag > 0 {
		h.faults.add("failover-lagging", 1)
	} else {
		h.faults.add("failover-synced", 1)
	}
	h.cfg.Logf("%6.1fs failover of %s to %s (replica cut off for %v): %d of %d keys lost or behind; rejoined at %.1fs",
		fo.detach.Seconds(), old, cur, lag.Round(time.Millisecond), fo.lostKeys, len(fo.old), h.now().Seconds())
}

// failoverLag draws a failover's lag: a quarter of them synced, the rest
// cut off for 0.2 to 2.5 s (longer and shorter than every lease).
func failoverLag(rnd *rand.Rand) time.Duration {
	if rnd.Intn(4) == 0 {
		return 0
	}
	return time.Duration(200+rnd.Intn(2300)) * time.Millisecond
}

// direct sends one command to the server at addr, past every proxy.
func direct(ctx context.Context, addr string, args ...any) error {
	c := goredislib.NewClient(&goredislib.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	return c.Do(ctx, args...).Err()
}

// failoverLost says whether a failover lost x's lock before y got in: x's
// write was on the old primary when its writes stopped, the new primary
// lacked it (absent, another value, an earlier expiry), and y's acquire
// returned after the promotion.
func (h *harness) failoverLost(x, y *hold) (string, bool) {
	h.mu.Lock()
	fs := h.failovers
	h.mu.Unlock()
	for _, f := range fs {
		if y.acqRet < f.promote || x.acqStart > f.pause {
			continue
		}
		keys := make([]string, 0, len(x.entry.wrote))
		for k := range x.entry.wrote {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := x.entry.wrote[k]
			o, ok := f.old[k]
			if !ok || o.value != v {
				continue // not x's value when writes stopped: nothing of x's to lose
			}
			n, ok := f.cur[k]
			switch {
			case !ok:
				return fmt.Sprintf("the new primary lacked the holder's key %s (replica cut off for %v)", kind(k),
					f.lag.Round(100*time.Millisecond)), true
			case n.value != v:
				return fmt.Sprintf("the new primary had another value in the holder's key %s", kind(k)), true
			case o.expireAt >= 0 && n.expireAt >= 0 && n.expireAt < o.expireAt:
				return fmt.Sprintf("the new primary had an earlier expiry of the holder's key %s (a refresh lost)", kind(k)), true
			}
		}
	}
	return "", false
}

// kind names a server key's role for the causes (the key names themselves
// would split the counts).
func kind(k string) string {
	if strings.HasSuffix(k, ":modern") {
		return "(a migrate lock's modern key)"
	}
	return "(the lock's key)"
}
