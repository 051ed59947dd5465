package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redlock"
)

// BenchmarkRedlockCycle is an uncontended TryLock + Unlock over five
// redis-servers: two rounds, each one script on every node in parallel.
// The modern cycle on one of those servers is the yardstick (two round
// trips). redsync over the same five nodes is measured in the bench module.
func BenchmarkRedlockCycle(b *testing.B) {
	servers := redistest.StartN(b, 5)
	for _, a := range []struct {
		name string
		new  func(testing.TB, *redistest.Server) driver.Client
	}{
		{"goredis", locktest.GoRedis},
		{"redigo", locktest.Redigo},
	} {
		clients := make([]driver.Client, len(servers))
		for i, s := range servers {
			clients[i] = a.new(b, s)
		}
		b.Run(a.name+"/redlock-5", func(b *testing.B) {
			cycles(b, redlock.New(clients).TryLock)
		})
		b.Run(a.name+"/modern-1", func(b *testing.B) {
			cycles(b, modern.New(clients[0]).TryLock)
		})
	}
}

func cycles(b *testing.B, try func(context.Context, string, time.Duration) (lockbridge.Lock, error)) {
	ctx := context.Background()
	key := "bench:" + b.Name()
	for i := 0; i < 10; i++ { // connect, load the scripts
		lk, err := try(ctx, key, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		_ = lk.Unlock(ctx)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lk, err := try(ctx, key, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if err := lk.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
