package lockbridge_test

// The loss signal is a timer, and every verdict is honest (issue 26,
// docs/safety.md "The loss signal is a timer"): a lock's Done closes before
// its lease ends on the server whatever is in flight — a hung Refresh beside
// the auto-refresh, a shortening Refresh whose reply is lost, or nothing at
// all (a lock without auto-refresh) — and an Unlock whose first reply is lost
// never says "released" when the key has another holder. The faults are
// real: a loopback proxy forwards the command and drops its reply, the
// connection then hanging or closing. Each test asks the one question that
// matters: had the holder's Done closed when another client got the lock?

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/redigoadapter"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redisson"
	"github.com/lockbridge/lockbridge/redlock"
)

// leaseKind is a kind of lock, made on a client with or without its
// auto-refresh.
type leaseKind struct {
	name   string
	auto   bool // has an auto-refresh (modern's, Redisson's watchdog, …)
	nodes  int  // servers it needs (Redlock: three independent masters)
	locker func(cs []driver.Client, auto bool) lockbridge.Locker
	// keys are the Redis keys of the lock name (what an eviction loses).
	keys func(l lockbridge.Locker, name string) []string
}

func leaseKinds() []leaseKind {
	one := func(_ lockbridge.Locker, name string) []string { return []string{name} }
	mig := func(p migrate.Phase) leaseKind {
		return leaseKind{name: "migrate-" + p.String(), auto: true,
			locker: func(cs []driver.Client, auto bool) lockbridge.Locker {
				var mo []modern.Option
				if auto {
					mo = append(mo, modern.WithAutoRefresh())
				}
				return migrate.New(cs[0], migrate.WithPhase(p), migrate.WithModern(mo...))
			},
			keys: func(l lockbridge.Locker, name string) []string {
				lk, mk, err := l.(*migrate.Locker).Keys(name)
				if err != nil {
					panic(err)
				}
				return []string{lk, mk}
			}}
	}
	return []leaseKind{
		{name: "modern", auto: true, keys: one, locker: func(cs []driver.Client, auto bool) lockbridge.Locker {
			if auto {
				return modern.New(cs[0], modern.WithAutoRefresh())
			}
			return modern.New(cs[0])
		}},
		{name: "legacy", keys: one, locker: func(cs []driver.Client, _ bool) lockbridge.Locker { return legacy.New(cs[0]) }},
		mig(migrate.PhaseDualWrite),
		mig(migrate.PhaseDualRead),
		{name: "redisson", auto: true, keys: one, locker: func(cs []driver.Client, auto bool) lockbridge.Locker {
			if auto {
				return redisson.New(cs[0], redisson.WithWatchdog())
			}
			return redisson.New(cs[0])
		}},
		{name: "redlock", auto: true, nodes: 3, keys: one, locker: func(cs []driver.Client, auto bool) lockbridge.Locker {
			if auto {
				return redlock.New(cs, redlock.WithAutoRefresh())
			}
			return redlock.New(cs)
		}},
	}
}

// rig is a kind's servers, a proxy in front of each, and a holder's
// Locker a on the proxies (with auto-refresh when asked) and another
// client's b on the servers directly.
type rig struct {
	proxies []*faultproxy.Proxy
	direct  []driver.Client
	a, b    lockbridge.Locker
}

func newRig(t *testing.T, k leaseKind, client string, auto bool) *rig {
	r := &rig{}
	var via []driver.Client
	for i := 0; i < max(k.nodes, 1); i++ {
		srv := redistest.Start(t)
		p := faultproxy.Start(t, srv.Addr())
		r.proxies = append(r.proxies, p)
		r.direct = append(r.direct, locktest.GoRedis(t, srv))
		via = append(via, proxiedClients(t, p.Addr())[client])
	}
	r.a, r.b = k.locker(via, auto), k.locker(r.direct, false)
	warm(t, r.a)
	return r
}

// drop drops the next script reply on the first n proxies (all: n < 0).
func (r *rig) drop(n int, then faultproxy.After) {
	for i, p := range r.proxies {
		if n < 0 || i < n {
			p.DropReply(evals, 1, then)
		}
	}
}

// close closes the proxies: hung calls return.
func (r *rig) close() {
	for _, p := range r.proxies {
		p.Close()
	}
}

// closedNow reports whether ch is closed.
func closedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// takeover has other try key every 5 ms until it gets the lock (within
// 20 s), releases it, and reports whether lk's Done was already closed when
// that successful attempt was sent.
func takeover(t *testing.T, lk lockbridge.Lock, other lockbridge.Locker, key string) bool {
	t.Helper()
	ctx := context.Background()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		closed := closedNow(lk.Done()) // before the send: an exact order
		b, err := other.TryLock(ctx, key, time.Minute)
		if err != nil {
			require.ErrorIs(t, err, lockbridge.ErrNotObtained)
			continue
		}
		require.NoError(t, b.Unlock(ctx))
		return closed
	}
	t.Fatalf("%s: the other client never got the lock", key)
	return false
}

// evals matches every script run (EVAL, EVALSHA).
func evals(w []string) bool {
	return len(w) > 0 && (strings.EqualFold(w[0], "EVALSHA") || strings.EqualFold(w[0], "EVAL"))
}

// warm runs a lock, a refresh and an unlock of l on another key, so that its
// scripts are loaded: a dropped EVALSHA reply is then a script that ran.
func warm(t *testing.T, l lockbridge.Locker) {
	t.Helper()
	ctx := context.Background()
	lk, err := l.TryLock(ctx, locktest.Key(t, "warm"), time.Minute)
	require.NoError(t, err)
	require.NoError(t, lk.Refresh(ctx, time.Minute))
	require.NoError(t, lk.Unlock(ctx))
}

// proxiedClients are the clients of the report on a proxy: go-redis
// with its retries off (its default 3 s read timeout), and a redigo pool
// without timeouts.
func proxiedClients(t *testing.T, addr string) map[string]driver.Client {
	rdb := goredislib.NewClient(&goredislib.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	pool := &redis.Pool{MaxIdle: 8, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", addr)
	}}
	t.Cleanup(func() { _ = pool.Close() })
	return map[string]driver.Client{"goredis": goredis.New(rdb), "redigo": redigoadapter.New(pool)}
}

// A Refresh by hand whose reply is lost, its connection left hanging,
// beside the auto-refresh: Done closes before another client gets the lock,
// whatever the hung call does. Before, the auto-refresh waited for the
// call's mutex and the lease checked its give-up point only after the
// callback returned: Done stayed open 2 s (go-redis) or for ever (redigo)
// after the takeover.
func TestFaultHungRefreshBesideAutoRefresh(t *testing.T) {
	for _, k := range leaseKinds() {
		if !k.auto || k.name == "redlock" {
			continue // Redlock bounds each node's call by its node timeout
		}
		k := k
		for _, cname := range []string{"goredis", "redigo"} {
			cname := cname
			t.Run(k.name+"/"+cname, func(t *testing.T) {
				t.Parallel()
				r := newRig(t, k, cname, true)
				key := locktest.Key(t, "k")
				lk, err := r.a.TryLock(context.Background(), key, time.Second)
				require.NoError(t, err)
				r.drop(-1, faultproxy.Hang)
				hung := make(chan error, 1)
				go func() { hung <- lk.Refresh(context.Background(), time.Second) }()

				assert.True(t, takeover(t, lk, r.b, key), "Done was open when another client got the lock")
				assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
				r.close() // the hung call returns
				<-hung
				_ = lk.Unlock(context.Background())
			})
		}
	}
}

// A Refresh to a shorter ttl whose reply is lost (the server ran it): the
// local lease ends by the shorter ttl, counted from the send. Before, the
// lock kept its 6 s lease locally while the server's ended 500 ms on.
func TestFaultLostShorteningRefresh(t *testing.T) {
	for _, k := range leaseKinds() {
		k := k
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, k, "goredis", false)
			key := locktest.Key(t, "k")
			lk, err := r.a.TryLock(context.Background(), key, 6*time.Second)
			require.NoError(t, err)
			r.drop(2, faultproxy.Hang) // Redlock: a round that reached every node, confirmed by one
			lost := make(chan error, 1)
			go func() { lost <- lk.Refresh(context.Background(), 500*time.Millisecond) }()

			assert.True(t, takeover(t, lk, r.b, key), "Done was open when another client got the lock")
			assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
			r.close()
			assert.Error(t, <-lost, "the refresh was not confirmed")
		})
	}
}

// A lock without auto-refresh: Done closes at its local lease end minus the
// margin, and Err says the lease ran out. Before, Done stayed open until
// Unlock, long after another client had the lock.
func TestFaultDoneAtLeaseEndWithoutRefresh(t *testing.T) {
	for _, k := range leaseKinds() {
		k := k
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, k, "goredis", false)
			key := locktest.Key(t, "k")
			lk, err := r.a.TryLock(context.Background(), key, 600*time.Millisecond)
			require.NoError(t, err)
			assert.True(t, takeover(t, lk, r.b, key), "Done was open when another client got the lock")
			require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
			assert.Contains(t, lk.Err().Error(), "lease ran out")
			require.Error(t, lk.Refresh(context.Background(), time.Minute), "no refresh revives it")
		})
	}
}

// The key is lost during the hold (an eviction, a restart without
// persistence), another client takes the lock, and the holder's first
// release reply is lost. Asking again finds another holder: that cannot
// tell "my release ran, a successor came after" from "my key was lost, a
// successor holds", so Unlock's error wraps ErrUnknownOutcome — never nil,
// never ErrNotHeld. Before, modern and migrate returned nil while the other
// client held the lock.
func TestFaultUnlockAfterLostKeyIsUnknown(t *testing.T) {
	for _, k := range leaseKinds() {
		k := k
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, k, "goredis", false)
			key := locktest.Key(t, "k")
			ctx := context.Background()
			lk, err := r.a.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			for _, c := range r.direct {
				for _, rk := range k.keys(r.a, key) {
					locktest.Do(t, c, "DEL", rk) // evicted
				}
			}
			// A lease far from ours: outside legacy's owner window.
			b, err := r.b.TryLock(ctx, key, 10*time.Minute)
			require.NoError(t, err)

			r.drop(-1, faultproxy.Close)
			err = lk.Unlock(ctx)
			require.Error(t, err, "Unlock said released while another client holds the lock")
			assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
			assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
			if k.name == "redlock" {
				// Unlock again retries the node whose reply was lost: it
				// finds another holder, which it cannot tell from a
				// release that ran.
				err = lk.Unlock(ctx)
				require.Error(t, err, "Unlock said released while another client holds the lock")
				assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
				assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
			}
			require.NoError(t, b.Unlock(ctx), "the other client still held it")
		})
	}
}

// A ttl beyond what the scripts and time.Duration arithmetic carry is an
// error wrapping ErrInvalid at the call, for every locker, on TryLock and
// Refresh. Before, migrate's dual-write computed a negative PX and returned
// Redis's ERR.
func TestFaultHugeTTLIsInvalid(t *testing.T) {
	ctx := context.Background()
	for _, k := range leaseKinds() {
		k := k
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			l := newRig(t, k, "goredis", false).b
			for _, ttl := range []time.Duration{math.MaxInt64, math.MaxInt64 - time.Second, 1 << 62} {
				lk, err := l.TryLock(ctx, locktest.Key(t, "k"), ttl)
				if !assert.ErrorIs(t, err, lockbridge.ErrInvalid, "ttl %v", ttl) && err == nil {
					_ = lk.Unlock(ctx)
				}
			}
			lk, err := l.TryLock(ctx, locktest.Key(t, "k"), time.Minute)
			require.NoError(t, err)
			assert.ErrorIs(t, lk.Refresh(ctx, math.MaxInt64), lockbridge.ErrInvalid)
			require.NoError(t, lk.Unlock(ctx))
		})
	}
}
