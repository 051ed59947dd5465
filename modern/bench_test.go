package modern_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// BenchmarkModernCycle is an uncontended TryLock + Unlock: two round trips
// (the acquire script and the release script).
func BenchmarkModernCycle(b *testing.B) {
	for _, tg := range locktest.Single(b) {
		for _, o := range []struct {
			name string
			opts []modern.Option
		}{
			{"plain", nil},
			{"fencing", []modern.Option{modern.WithFencing()}},
		} {
			b.Run(tg.Name+"/"+o.name, func(b *testing.B) {
				ctx := context.Background()
				l := modern.New(tg.Client, o.opts...)
				key := "bench:" + b.Name()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					lk, err := l.TryLock(ctx, key, time.Minute)
					if err != nil {
						b.Fatal(err)
					}
					if err := lk.Unlock(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// nxPX makes go-redis send SET key value NX PX 60001 (for a whole number of
// seconds it would send EX).
var nxPX = goredislib.SetArgs{Mode: "NX", TTL: time.Minute + time.Millisecond}

// BenchmarkRawCycle is the yardstick of the performance target: raw go-redis
// sending SET NX PX and an EVALSHA compare-and-delete, and, to price the
// acquire script, the same cycle with modern's acquire script instead of
// the SET. No lockbridge code runs here.
func BenchmarkRawCycle(b *testing.B) {
	srv := redistest.Start(b)
	rc := goredislib.NewClient(&goredislib.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = rc.Close() })
	cad := goredislib.NewScript(
		`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)
	acq := goredislib.NewScript(
		`if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, 0} end return {0, redis.call('PTTL', KEYS[1])}`)
	ctx := context.Background()
	tok := "AAAAAAAAAAAAAAAAAAAAAA"
	b.Run("set-nx-px+evalsha-cad", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := rc.SetArgs(ctx, "raw", tok, nxPX).Err(); err != nil {
				b.Fatal(err)
			}
			if err := cad.Run(ctx, rc, []string{"raw"}, tok).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("evalsha-acquire+evalsha-cad", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := acq.Run(ctx, rc, []string{"raw"}, tok, 60000).Err(); err != nil {
				b.Fatal(err)
			}
			if err := cad.Run(ctx, rc, []string{"raw"}, tok).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkModernHandoff: 16 goroutines on one key, each looping Lock,
// Unlock, then 1 ms of work outside the lock (so that a releaser does not
// simply take the lock back while the others sleep). Reported: hand-off
// latency from the start of a holder's Unlock to the next holder (another
// goroutine) having the lock, p50 and p99, and lock cycles per second; with
// release notifications, and with polling (the default backoff, 8 ms…512 ms).
func BenchmarkModernHandoff(b *testing.B) {
	for _, tg := range locktest.Single(b) {
		for _, notify := range []bool{true, false} {
			name := fmt.Sprintf("%s/notify=%v", tg.Name, notify)
			b.Run(name, func(b *testing.B) {
				l := modern.New(tg.Client, modern.WithNotifications(notify))
				handoff(b, l, "bench:"+b.Name())
			})
		}
	}
}

func handoff(b *testing.B, l *modern.Locker, key string) {
	ctx := context.Background()
	var (
		left     atomic.Int64 // cycles still to run
		released atomic.Int64 // when the last Unlock started, UnixNano
		releaser atomic.Int64 // which goroutine made it
		mu       sync.Mutex
		samples  []time.Duration
		wg       sync.WaitGroup
	)
	left.Store(int64(b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for g := int64(1); g <= 16; g++ {
		wg.Add(1)
		go func(g int64) {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				lk, err := l.Lock(ctx, key, 10*time.Second)
				if err != nil {
					b.Error(err)
					return
				}
				now := time.Now()
				if r := releaser.Load(); r != 0 && r != g {
					d := now.Sub(time.Unix(0, released.Load()))
					mu.Lock()
					samples = append(samples, d)
					mu.Unlock()
				}
				releaser.Store(g)
				released.Store(time.Now().UnixNano())
				if err := lk.Unlock(ctx); err != nil {
					b.Error(err)
					return
				}
				time.Sleep(time.Millisecond) // work outside the lock
			}
		}(g)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
	if len(samples) == 0 {
		return
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	pct := func(p float64) float64 {
		return float64(samples[int(p*float64(len(samples)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs/handoff")
	b.ReportMetric(pct(0.99), "p99-µs/handoff")
	b.ReportMetric(float64(len(samples))/float64(b.N), "handoffs/op")
}

// BenchmarkCycleVsRaw interleaves, cycle by cycle on one server, modern's
// TryLock + Unlock (go-redis adapter) with the raw go-redis yardstick (SET NX
// PX + EVALSHA compare-and-delete), so that load on the machine hits both
// alike, and reports modern/raw: the performance target is at most 1.10.
// "raw-script" is the yardstick with modern's acquire script in place of
// the SET, to price the script.
func BenchmarkCycleVsRaw(b *testing.B) {
	srv := redistest.Start(b)
	c := locktest.GoRedis(b, srv)
	rc := goredislib.NewClient(&goredislib.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = rc.Close() })
	cad := goredislib.NewScript(
		`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)
	acq := goredislib.NewScript(
		`if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, 0} end return {0, redis.call('PTTL', KEYS[1])}`)
	ctx := context.Background()
	l := modern.New(c)
	var raw, rawScript, mod time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tok, _ := randomToken() // what the Locker draws per acquire
		t0 := time.Now()
		if err := rc.SetArgs(ctx, "raw", tok, nxPX).Err(); err != nil {
			b.Fatal(err)
		}
		if err := cad.Run(ctx, rc, []string{"raw"}, tok).Err(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		lk, err := l.TryLock(ctx, "modern", time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if err := lk.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := acq.Run(ctx, rc, []string{"raws"}, tok, 60000).Err(); err != nil {
			b.Fatal(err)
		}
		if err := cad.Run(ctx, rc, []string{"raws"}, tok).Err(); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		raw += t1.Sub(t0)
		mod += t2.Sub(t1)
		rawScript += t3.Sub(t2)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/cycle")
	b.ReportMetric(float64(rawScript.Nanoseconds())/n, "raw-script-ns/cycle")
	b.ReportMetric(float64(mod.Nanoseconds())/n, "modern-ns/cycle")
	b.ReportMetric(float64(mod)/float64(raw), "modern/raw")
	b.ReportMetric(float64(rawScript)/float64(raw), "raw-script/raw")
}
