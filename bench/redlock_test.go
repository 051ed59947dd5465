package bench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/redisserver"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/redlock"
	"github.com/redis/go-redis/v9"
)

// BenchmarkRedlock is an uncontended acquire + release over five
// independent redis-servers, both libraries on the same five go-redis
// clients: lockbridge's redlock (two rounds of one EVALSHA per node, in
// parallel) against redsync with five pools (SET NX PX, then an EVALSHA
// compare-and-delete per node, in parallel). Each redsync cycle makes a new
// Mutex, as a caller locking dynamic names does; WithTries(1) makes it one
// attempt, like TryLock.
func BenchmarkRedlock(b *testing.B) {
	var rcs []*redis.Client
	for i := 0; i < 5; i++ {
		srv, err := redisserver.Start()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Close)
		c := impls.NewClient(srv.Addr())
		b.Cleanup(func() { _ = c.Close() })
		rcs = append(rcs, c)
	}
	ctx := context.Background()

	var clients []driver.Client
	var pools []redsyncredis.Pool
	for _, c := range rcs {
		clients = append(clients, goredis.New(c))
		pools = append(pools, redsyncgoredis.NewPool(c))
	}
	rl := redlock.New(clients)
	rs := redsync.New(pools...)

	for _, c := range []struct {
		name  string
		cycle func() error
	}{
		{"lockbridge", func() error {
			lk, err := rl.TryLock(ctx, "benchtest:redlock:lockbridge", time.Minute)
			if err != nil {
				return err
			}
			return lk.Unlock(ctx)
		}},
		{"redsync", func() error {
			m := rs.NewMutex("benchtest:redlock:redsync", redsync.WithExpiry(time.Minute), redsync.WithTries(1))
			if err := m.LockContext(ctx); err != nil {
				return err
			}
			if ok, err := m.UnlockContext(ctx); !ok || err != nil {
				return fmt.Errorf("redsync: unlock: ok=%v, err=%v", ok, err)
			}
			return nil
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < 10; i++ { // connect, load the scripts
				if err := c.cycle(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.cycle(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
