package legacy_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// counting counts the calls made through it: one round trip each (the
// driver sends one command per call, save one EVAL retry per script after
// NOSCRIPT, which the warm-up absorbs).
type counting struct {
	driver.Client
	n atomic.Int64
}

func (c *counting) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	c.n.Add(1)
	return c.Client.Eval(ctx, s, keys, args...)
}

func (c *counting) SetNX(ctx context.Context, k, v string) (bool, error) {
	c.n.Add(1)
	return c.Client.SetNX(ctx, k, v)
}

func (c *counting) Get(ctx context.Context, k string) (string, bool, error) {
	c.n.Add(1)
	return c.Client.Get(ctx, k)
}

func (c *counting) GetSet(ctx context.Context, k, v string) (string, bool, error) {
	c.n.Add(1)
	return c.Client.GetSet(ctx, k, v)
}

func (c *counting) Del(ctx context.Context, k string) (bool, error) {
	c.n.Add(1)
	return c.Client.Del(ctx, k)
}

func (c *counting) Do(ctx context.Context, args ...any) (any, error) {
	c.n.Add(1)
	return c.Client.Do(ctx, args...)
}

// benchClient is go-redis on a fresh redis-server, counted.
func benchClient(b *testing.B) *counting {
	return &counting{Client: locktest.Single(b)[0].Client}
}

// measure resets the count and the timer before the measured loop, and
// reports round trips per operation after it.
func measure(b *testing.B, c *counting, op func(i int)) {
	b.ReportAllocs()
	c.n.Store(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op(i)
	}
	b.StopTimer()
	b.ReportMetric(float64(c.n.Load())/float64(b.N), "roundtrips/op")
}

// An uncontended acquire + release.
func benchCycle(b *testing.B, mode legacyproto.Mode) {
	c := benchClient(b)
	lk := legacy.New(c, legacyproto.WithMode(mode))
	ctx := context.Background()
	cycle := func(int) {
		l, err := lk.TryLock(ctx, "bench", time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cycle(0) // load the scripts
	measure(b, c, cycle)
}

func BenchmarkLegacyAtomicCycle(b *testing.B)  { benchCycle(b, legacyproto.ModeAtomic) }
func BenchmarkLegacyClassicCycle(b *testing.B) { benchCycle(b, legacyproto.ModeClassic) }

// advancing is a clock that moves an hour on every reading: each acquire
// finds the previous holder's lease (a minute) long expired.
func advancing() func() time.Time {
	base := time.Now()
	var n atomic.Int64
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Hour) }
}

// An expired takeover: every iteration takes over the expired value the
// previous one left.
func benchTakeover(b *testing.B, mode legacyproto.Mode) {
	c := benchClient(b)
	lk := legacy.New(c, legacyproto.WithMode(mode), legacy.WithClock(advancing()))
	ctx := context.Background()
	take := func(int) {
		if _, err := lk.TryLock(ctx, "bench", time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	take(0) // creates the key, loads the script
	measure(b, c, take)
}

func BenchmarkLegacyAtomicTakeover(b *testing.B)  { benchTakeover(b, legacyproto.ModeAtomic) }
func BenchmarkLegacyClassicTakeover(b *testing.B) { benchTakeover(b, legacyproto.ModeClassic) }

// The Java seed's expired takeover: SETNX, GET, GETSET.
func BenchmarkSeedTakeover(b *testing.B) {
	c := benchClient(b)
	now := advancing()
	ctx := context.Background()
	take := func(int) {
		if _, ok, err := javareplay.Lock(ctx, c, "bench", time.Minute, now); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
	take(0)
	measure(b, c, take)
}
