package bench_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/monitor"
	"github.com/lockbridge/lockbridge/bench/internal/redisserver"
	"github.com/lockbridge/lockbridge/bench/internal/scenario"
	"github.com/redis/go-redis/v9"
)

// addr is the redis-server every benchmark uses, started by TestMain.
var addr string

// runs numbers the hand-off runs, for their keys.
var runs atomic.Int64

func TestMain(m *testing.M) {
	srv, err := redisserver.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	addr = srv.Addr()
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

// locker returns im's locker on a fresh client, closed when b ends.
func locker(b *testing.B, im impls.Impl, w impls.Wait) (impls.Locker, *redis.Client) {
	b.Helper()
	c := impls.NewClient(addr)
	b.Cleanup(func() { _ = c.Close() })
	l, err := im.New(impls.On(c), w)
	if err != nil {
		b.Fatal(err)
	}
	if cl, ok := l.(impls.Closer); ok {
		b.Cleanup(cl.Close)
	}
	return l, c
}

// BenchmarkPing is one bare round trip.
func BenchmarkPing(b *testing.B) {
	c := impls.NewClient(addr)
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := impls.Ping(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdapterPing is one PING through lockbridge's go-redis adapter,
// with context.Background() and with a deadline context.
func BenchmarkAdapterPing(b *testing.B) {
	for _, dl := range []bool{false, true} {
		name := "ctx=background"
		if dl {
			name = "ctx=deadline"
		}
		b.Run(name, func(b *testing.B) {
			c := impls.NewClient(addr)
			defer c.Close()
			ping := impls.Adapter(c)
			ctx := context.Background()
			if dl {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Hour)
				defer cancel()
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := ping(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCycle is an uncontended acquire + release by one goroutine.
func BenchmarkCycle(b *testing.B) {
	for _, im := range impls.All() {
		for _, dl := range []bool{false, true} {
			name := im.ID
			if dl {
				name += "/ctx=deadline"
			} else {
				name += "/ctx=background"
			}
			b.Run(name, func(b *testing.B) {
				l, _ := locker(b, im, impls.Recommended)
				ctx := context.Background()
				if dl {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, time.Hour)
					defer cancel()
				}
				key := "benchtest:cycle:" + im.ID
				if err := scenario.Cycles(ctx, l, key, 10); err != nil { // connect, load scripts
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				if err := scenario.Cycles(ctx, l, key, b.N); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkTakeover takes over an expired Java-scheme lock. ns/op includes
// writing the expired value (one more round trip, on another connection);
// ns/takeover is the takeover alone.
func BenchmarkTakeover(b *testing.B) {
	for _, im := range impls.All() {
		if !im.Takeover {
			continue
		}
		b.Run(im.ID, func(b *testing.B) {
			l, _ := locker(b, im, impls.Recommended)
			setup, err := monitor.Dial(addr)
			if err != nil {
				b.Fatal(err)
			}
			defer setup.Close()
			ctx := context.Background()
			key := "benchtest:takeover:" + im.ID
			if _, err := scenario.Takeovers(ctx, l, setup, key, 10); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			d, err := scenario.Takeovers(ctx, l, setup, key, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "ns/takeover")
		})
	}
}

// BenchmarkHandoff is 8 goroutines on one key, each holding it for 100 µs;
// ns/op is the time per lock cycle. It reports the hand-off latency
// percentiles (ns from one holder's Unlock returning to the next holder's
// Lock returning).
func BenchmarkHandoff(b *testing.B) {
	for _, im := range impls.All() {
		if !im.CanWait() {
			continue
		}
		for _, w := range []impls.Wait{impls.Recommended, impls.Tight} {
			if _, ok := im.Waits[w]; !ok {
				continue
			}
			b.Run(im.ID+"/"+w.String(), func(b *testing.B) {
				l, _ := locker(b, im, w)
				cfg := scenario.HandoffConfig{Workers: 8, MaxCycles: b.N, Hold: 100 * time.Microsecond,
					Stagger: 100 * time.Millisecond}
				// A fresh key per run: a Lock cancelled at the end of a run
				// may leave a lock behind.
				key := fmt.Sprintf("benchtest:handoff:%s:%s:%d", im.ID, w, runs.Add(1))
				r, err := scenario.Handoff(context.Background(), []impls.Locker{l}, key, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if r.Violations > 0 {
					b.Fatalf("%d overlaps", r.Violations)
				}
				b.ReportMetric(float64(r.Elapsed.Nanoseconds())/float64(max(r.Cycles, 1)), "ns/op")
				b.ReportMetric(float64(scenario.Percentile(r.Handoffs, 50)), "p50-ns")
				b.ReportMetric(float64(scenario.Percentile(r.Handoffs, 99)), "p99-ns")
			})
		}
	}
}

// BenchmarkManyKeys is 64 goroutines taking and releasing random keys of
// 1,000, as in the report; ns/op is wall time per cycle.
func BenchmarkManyKeys(b *testing.B) {
	for _, im := range impls.All() {
		b.Run(im.ID, func(b *testing.B) {
			l, _ := locker(b, im, impls.Recommended)
			keys := scenario.Keys("benchtest:many:"+im.ID+":", 1000)
			b.ReportAllocs()
			b.ResetTimer()
			r, err := scenario.ManyKeys(context.Background(), l, keys, 64, 0, int64(b.N))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(r.Elapsed.Nanoseconds())/float64(max(r.Cycles, 1)), "ns/op")
		})
	}
}
