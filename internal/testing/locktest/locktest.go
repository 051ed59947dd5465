package locktest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/redigoadapter"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// Target is one client to run a test against.
type Target struct {
	Name    string // "goredis", "redigo" or "cluster"
	Client  driver.Client
	Cluster bool
	// Server is the single server behind the client; nil for the cluster.
	Server *redistest.Server
}

// GoRedis returns a go-redis client on srv.
func GoRedis(t testing.TB, srv *redistest.Server) driver.Client {
	c := goredislib.NewClient(&goredislib.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return goredis.New(c)
}

// Redigo returns a redigo client on srv.
func Redigo(t testing.TB, srv *redistest.Server) driver.Client {
	addr := srv.Addr()
	p := &redis.Pool{
		MaxIdle: 16,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr)
		},
	}
	t.Cleanup(func() { _ = p.Close() })
	return redigoadapter.New(p)
}

// GoRedisCluster returns a go-redis cluster client on cl.
func GoRedisCluster(t testing.TB, cl *redistest.Cluster) driver.Client {
	c := goredislib.NewClusterClient(&goredislib.ClusterOptions{Addrs: cl.Addrs(), MaxRetries: -1, MaxRedirects: -1})
	t.Cleanup(func() { _ = c.Close() })
	return goredis.New(c)
}

// Single starts one redis-server and returns the go-redis and redigo
// targets on it.
func Single(t testing.TB) []Target {
	t.Helper()
	srv := redistest.Start(t)
	return []Target{
		{Name: "goredis", Client: GoRedis(t, srv), Server: srv},
		{Name: "redigo", Client: Redigo(t, srv), Server: srv},
	}
}

// All is Single plus a go-redis client on a fresh 3-master cluster (about
// two seconds to start: group the cluster cases of a package under few
// top-level tests).
func All(t testing.TB) []Target {
	t.Helper()
	ts := Single(t)
	cl := redistest.StartCluster(t)
	return append(ts, Target{Name: "cluster", Client: GoRedisCluster(t, cl), Cluster: true})
}

// Run runs fn as a subtest for each target.
func Run(t *testing.T, targets []Target, fn func(t *testing.T, tg Target)) {
	t.Helper()
	for _, tg := range targets {
		tg := tg
		t.Run(tg.Name, func(t *testing.T) { fn(t, tg) })
	}
}

// Key returns a key unique to the running test, so that subtests sharing a
// server do not meet.
func Key(t testing.TB, name string) string {
	return fmt.Sprintf("%s:%s", t.Name(), name)
}

// Guard checks mutual exclusion the same way in every test: a holder calls
// Enter first thing inside its critical section and Exit last. Enter INCRs a
// counter in Redis and records a violation when the result is not 1, i.e.
// when someone else was inside too.
type Guard struct {
	c                  driver.Client
	key                string
	entries, violation atomic.Int64
}

// NewGuard returns a guard counting on key (any key; it needs no slot).
func NewGuard(c driver.Client, key string) *Guard {
	return &Guard{c: c, key: key + ":guard"}
}

// Enter records one holder in the critical section.
func (g *Guard) Enter(t testing.TB) {
	n, err := g.c.Do(context.Background(), "INCR", g.key)
	if err != nil {
		t.Errorf("guard: INCR: %v", err)
		return
	}
	g.entries.Add(1)
	if n.(int64) != 1 {
		g.violation.Add(1)
	}
}

// Exit records that the holder left.
func (g *Guard) Exit(t testing.TB) {
	if _, err := g.c.Do(context.Background(), "DECR", g.key); err != nil {
		t.Errorf("guard: DECR: %v", err)
	}
}

// Hold is Enter, a sleep of d, and Exit.
func (g *Guard) Hold(t testing.TB, d time.Duration) {
	g.Enter(t)
	time.Sleep(d)
	g.Exit(t)
}

// Entries is how many times a holder entered.
func (g *Guard) Entries() int64 { return g.entries.Load() }

// Violations is how many times a holder entered while another was inside.
func (g *Guard) Violations() int64 { return g.violation.Load() }

// Ctx returns a context that ends with the test, or after 30 s.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Get returns what key holds, byte for byte ("", false when absent).
func Get(t testing.TB, c driver.Client, key string) (string, bool) {
	t.Helper()
	v, ok, err := c.Get(context.Background(), key)
	require.NoError(t, err)
	return v, ok
}

// Set stores value at key, with no TTL.
func Set(t testing.TB, c driver.Client, key, value string) {
	t.Helper()
	_, err := c.Do(context.Background(), "SET", key, value)
	require.NoError(t, err)
}

// PTTL returns PTTL key in milliseconds: -1 without a TTL, -2 without a
// key.
func PTTL(t testing.TB, c driver.Client, key string) int64 {
	t.Helper()
	r, err := c.Do(context.Background(), "PTTL", key)
	require.NoError(t, err)
	return r.(int64)
}

// Do runs a command and requires it to succeed.
func Do(t testing.TB, c driver.Client, args ...any) any {
	t.Helper()
	r, err := c.Do(context.Background(), args...)
	require.NoError(t, err)
	return r
}

// WaitDone waits up to d for a lock's Done channel.
func WaitDone(l lockbridge.Lock, d time.Duration) bool {
	select {
	case <-l.Done():
		return true
	case <-time.After(d):
		return false
	}
}
