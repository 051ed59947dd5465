package scenario

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/monitor"
	"github.com/redis/go-redis/v9"
)

// TTL is the lease of every lock taken; far above any hold time here.
const TTL = 10 * time.Second

// Cycles runs n acquire + release cycles on key, one after the other. An
// acquire that finds the key busy is tried again (up to 100 times): nobody
// else takes the key, so it is an attempt the implementation gave up by
// itself (rueidislock after its own 20 ms on a loaded machine).
func Cycles(ctx context.Context, l impls.Locker, key string, n int) error {
	for i := 0; i < n; i++ {
		h, err := l.TryLock(ctx, key, TTL)
		for try := 0; errors.Is(err, impls.ErrBusy) && try < 100; try++ {
			h, err = l.TryLock(ctx, key, TTL)
		}
		if err != nil {
			return fmt.Errorf("cycle %d: acquire: %w", i, err)
		}
		if err := h.Unlock(ctx); err != nil {
			return fmt.Errorf("cycle %d: release: %w", i, err)
		}
	}
	return nil
}

// Paired runs n cycles of a on keyA and n cycles of b on keyB, one of a and
// one of b in turn (a first when aFirst), and returns the mean time per
// cycle of each. Run so, cycle beside cycle, both see the same state of the
// machine: a core waking from idle, a burst of other work or a garbage
// collection lands on both alike, which blocks of cycles run one after the
// other do not promise.
func Paired(ctx context.Context, a, b impls.Locker, keyA, keyB string, n int, aFirst bool) (aNs, bNs float64,
	err error) {
	var ta, tb time.Duration
	one := func(l impls.Locker, key string, sum *time.Duration) error {
		start := time.Now()
		h, err := l.TryLock(ctx, key, TTL)
		// Nobody else takes these keys: a busy answer is an attempt the
		// implementation gave up by itself (rueidislock after its own
		// 20 ms on a loaded machine). Its time counts; the cycle goes on.
		for try := 0; errors.Is(err, impls.ErrBusy) && try < 100; try++ {
			h, err = l.TryLock(ctx, key, TTL)
		}
		if err != nil {
			return fmt.Errorf("acquire: %w", err)
		}
		if err := h.Unlock(ctx); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		*sum += time.Since(start)
		return nil
	}
	type side struct {
		l   impls.Locker
		key string
		sum *time.Duration
	}
	order := [2]side{{a, keyA, &ta}, {b, keyB, &tb}}
	if !aFirst {
		order[0], order[1] = order[1], order[0]
	}
	for i := 0; i < n; i++ {
		for _, s := range order {
			if err := one(s.l, s.key, s.sum); err != nil {
				return 0, 0, err
			}
		}
	}
	return float64(ta.Nanoseconds()) / float64(n), float64(tb.Nanoseconds()) / float64(n), nil
}

// Blocks is Paired's counterpart with two blocks one after the other: n
// cycles of a, then n of b (b first unless aFirst). Pairs so formed see the
// machine's state change between their halves; it is how the earlier reports
// and an independent harness formed them.
func Blocks(ctx context.Context, a, b impls.Locker, keyA, keyB string, n int, aFirst bool) (aNs, bNs float64,
	err error) {
	block := func(l impls.Locker, key string) (float64, error) {
		start := time.Now()
		if err := Cycles(ctx, l, key, n); err != nil {
			return 0, err
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n), nil
	}
	if aFirst {
		if aNs, err = block(a, keyA); err == nil {
			bNs, err = block(b, keyB)
		}
		return aNs, bNs, err
	}
	if bNs, err = block(b, keyB); err == nil {
		aNs, err = block(a, keyA)
	}
	return aNs, bNs, err
}

// Pings sends n PINGs, one after the other.
func Pings(ctx context.Context, c redis.UniversalClient, n int) error {
	for i := 0; i < n; i++ {
		if err := impls.Ping(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// Pinger sends a PING on c every interval until stop is called, which
// returns the round-trip times: the reference round trip under whatever load
// runs meanwhile.
func Pinger(c redis.UniversalClient, interval time.Duration) (stop func() []time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []time.Duration, 1)
	go func() {
		var rtts []time.Duration
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- rtts
				return
			case <-t.C:
			}
			start := time.Now()
			if err := impls.Ping(context.Background(), c); err == nil {
				rtts = append(rtts, time.Since(start))
			}
		}
	}()
	return func() []time.Duration {
		cancel()
		return <-done
	}
}

// ExpiredValue is what a Java-scheme lock that expired a minute ago holds:
// its expiry in epoch milliseconds, ASCII decimal (the default profile).
func ExpiredValue(now time.Time) string {
	return strconv.FormatInt(now.Add(-time.Minute).UnixMilli(), 10)
}

// Takeovers takes over an expired Java-scheme lock n times: before each
// attempt, setup writes an expired value into key (not timed, not counted
// by a monitor.Counter that excludes setup). It returns the total time spent
// in TryLock. The taken locks are dropped, not released.
func Takeovers(ctx context.Context, l impls.Locker, setup *monitor.Conn, key string, n int) (time.Duration, error) {
	var total time.Duration
	for i := 0; i < n; i++ {
		if _, err := setup.Do("SET", key, ExpiredValue(time.Now())); err != nil {
			return 0, err
		}
		start := time.Now()
		_, err := l.TryLock(ctx, key, TTL)
		total += time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("takeover %d: %w", i, err)
		}
	}
	return total, nil
}

// Allocs runs n cycles and returns the heap allocations and bytes per cycle,
// counted over the whole process (so redsync's per-call goroutines count).
func Allocs(ctx context.Context, l impls.Locker, key string, n int) (allocs, bytes float64, err error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := Cycles(ctx, l, key, n); err != nil {
		return 0, 0, err
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n), float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
		nil
}

// HandoffConfig says how to run a contended hand-off.
type HandoffConfig struct {
	Workers   int           // goroutines contending for the key
	Duration  time.Duration // run this long, or
	MaxCycles int           // stop after this many cycles (0: no limit)
	// Hold is how long a holder stays inside, working: it spins (yielding
	// to other goroutines) rather than sleeping, since a time.Sleep of
	// 100 µs lasts anywhere from 0.1 to 1 ms by how busy the process is —
	// a hand-off would then measure the timer, not the lock.
	Hold time.Duration
	// Stagger spreads the workers' first Lock calls over this much time, so
	// that pollers do not start in step; the measurement starts after it.
	Stagger time.Duration
}

// HandoffResult is what a contended hand-off measured.
type HandoffResult struct {
	Cycles  int           // locks taken and released after the stagger
	Total   int           // locks taken and released, the stagger included
	Elapsed time.Duration // wall time of the run
	// Handoffs are the times from one holder's Unlock returning to the
	// next holder's Lock returning.
	Handoffs []time.Duration
	// Waits are the times Lock calls that succeeded took, from call to
	// return, for calls that returned after the stagger.
	Waits []time.Duration
	// Early counts hand-offs where the next holder's Lock returned before
	// the previous holder's Unlock did (the release reply was still on its
	// way); they are recorded as 0.
	Early int
	// Self counts hand-offs where the releaser itself took the lock again;
	// 0 unless the run ended in between.
	Self int
	// GaveUp counts Lock calls that gave up by themselves (redsync after its
	// tries) and were repeated.
	GaveUp int
	// Violations counts times two holders were inside at once; must be 0.
	Violations int

	held time.Duration
}

// HoldMean is the mean time a holder was inside.
func (r HandoffResult) HoldMean() time.Duration { return r.held / time.Duration(max(r.Cycles, 1)) }

// CyclesPerSec is the lock throughput.
func (r HandoffResult) CyclesPerSec() float64 {
	return float64(r.Cycles) / r.Elapsed.Seconds()
}

// Handoff runs cfg.Workers goroutines that each lock key, stay inside for
// cfg.Hold, release and lock again, until cfg.Duration has passed or
// cfg.MaxCycles locks were taken. Worker w locks through ls[w % len(ls)]:
// one Locker for all, as one process, or one each, as many processes, whose
// waiters learn of a release only from Redis. A worker that released calls Lock again only
// once another worker has taken the lock: every hand-off then goes to a
// goroutine that was waiting, as the latency is meant to measure (a releaser
// retrying at once would often beat the waiters), and all other workers are
// waiting at any time.
func Handoff(ctx context.Context, ls []impls.Locker, key string, cfg HandoffConfig) (HandoffResult, error) {
	if len(ls) == 0 {
		return HandoffResult{}, errors.New("scenario: no locker")
	}
	limit := 1 << 20 // generations recorded
	if cfg.MaxCycles > 0 {
		limit = cfg.MaxCycles + 1<<16 // room for the cycles during the stagger
	}
	acq := make([]int64, limit+1)   // acq[g]: when holder g's Lock returned
	rel := make([]int64, limit+1)   // rel[g]: when holder g's Unlock returned
	owner := make([]int32, limit+1) // owner[g]: the worker that was holder g
	base := time.Now()
	since := func() int64 { return int64(time.Since(base)) }

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.Duration > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, cfg.Stagger+cfg.Duration)
		defer cancel()
	}

	// handed is broadcast after every acquire; a releaser waits on it.
	var mu sync.Mutex
	handed := sync.NewCond(&mu)
	stop := context.AfterFunc(runCtx, func() {
		mu.Lock()
		handed.Broadcast()
		mu.Unlock()
	})
	defer stop()

	from := int64(cfg.Stagger) // the measurement starts here
	var (
		gen, guard         atomic.Int64
		counted            atomic.Int64
		gaveUp, violations atomic.Int64
		held               atomic.Int64
		errMu              sync.Mutex
		firstErr           error
		wg                 sync.WaitGroup
		waitMu             sync.Mutex
		waits              []time.Duration
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel()
	}
	rnd := rand.New(rand.NewPCG(uint64(base.UnixNano()), 1))
	for w := 0; w < cfg.Workers; w++ {
		var delay time.Duration
		if cfg.Stagger > 0 {
			delay = time.Duration(rnd.Int64N(int64(cfg.Stagger)))
		}
		wg.Add(1)
		go func(w int32) {
			defer wg.Done()
			l := ls[int(w)%len(ls)]
			if delay > 0 {
				select {
				case <-time.After(delay):
				case <-runCtx.Done():
					return
				}
			}
			var mine []time.Duration
			defer func() {
				waitMu.Lock()
				waits = append(waits, mine...)
				waitMu.Unlock()
			}()
			for runCtx.Err() == nil {
				called := since()
				h, err := l.Lock(runCtx, key, TTL)
				if err != nil {
					if runCtx.Err() != nil {
						return
					}
					if gaveUp.Add(1) > 1_000_000 {
						fail(fmt.Errorf("lock keeps failing: %w", err))
						return
					}
					continue
				}
				t := since()
				if t >= from {
					mine = append(mine, time.Duration(t-called))
				}
				if guard.Add(1) != 1 {
					violations.Add(1)
				}
				g := gen.Add(1)
				if g <= int64(limit) {
					acq[g], owner[g] = t, w
				}
				mu.Lock()
				handed.Broadcast()
				mu.Unlock()
				if cfg.Hold > 0 {
					work(cfg.Hold)
				}
				if t >= from {
					held.Add(since() - t)
				}
				guard.Add(-1)
				// Release even when the run has ended, so no lock is left.
				if err := h.Unlock(context.WithoutCancel(runCtx)); err != nil {
					fail(fmt.Errorf("unlock: %w", err))
					return
				}
				if g <= int64(limit) {
					rel[g] = since()
				}
				if t >= from && cfg.MaxCycles > 0 && counted.Add(1) >= int64(cfg.MaxCycles) {
					cancel()
				}
				if g >= int64(limit) {
					cancel()
					return
				}
				mu.Lock()
				for gen.Load() == g && runCtx.Err() == nil {
					handed.Wait()
				}
				mu.Unlock()
			}
		}(int32(w))
	}
	wg.Wait()
	end := since()
	if firstErr != nil {
		return HandoffResult{}, firstErr
	}
	n := int(min(gen.Load(), int64(limit)))
	r := HandoffResult{
		Total:      n,
		Elapsed:    time.Duration(end - from),
		GaveUp:     int(gaveUp.Load()),
		Violations: int(violations.Load()),
		Handoffs:   make([]time.Duration, 0, n),
		Waits:      waits,
		held:       time.Duration(held.Load()),
	}
	for g := 1; g <= n; g++ {
		if acq[g] < from {
			continue // before the measurement started
		}
		r.Cycles++
		if g == 1 || acq[g-1] < from || rel[g-1] == 0 {
			continue
		}
		d := acq[g] - rel[g-1]
		if d < 0 {
			r.Early++
			d = 0
		}
		if owner[g] == owner[g-1] {
			r.Self++
		}
		r.Handoffs = append(r.Handoffs, time.Duration(d))
	}
	return r, nil
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of ds, nearest rank.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return s[i]
}

// Keys returns n key names with prefix.
func Keys(prefix string, n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = prefix + strconv.Itoa(i)
	}
	return ks
}

// ManyKeysResult is what a many-keys run measured.
type ManyKeysResult struct {
	Cycles  int64 // locks taken and released
	Busy    int64 // attempts that found the key held by another worker
	Elapsed time.Duration
}

// CyclesPerSec is the lock throughput.
func (r ManyKeysResult) CyclesPerSec() float64 {
	return float64(r.Cycles) / r.Elapsed.Seconds()
}

// ManyKeys runs workers goroutines that each take and release a random key
// of keys with TryLock, until d has passed or maxCycles cycles were done
// (0: no limit).
func ManyKeys(ctx context.Context, l impls.Locker, keys []string, workers int, d time.Duration,
	maxCycles int64) (ManyKeysResult, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, d)
		defer cancel()
	}
	var (
		cycles, busy atomic.Int64
		errMu        sync.Mutex
		firstErr     error
		wg           sync.WaitGroup
	)
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(seed, 0x6c6f636b))
			op := context.WithoutCancel(runCtx)
			for runCtx.Err() == nil {
				h, err := l.TryLock(op, keys[rnd.IntN(len(keys))], TTL)
				if errors.Is(err, impls.ErrBusy) {
					busy.Add(1)
					continue
				}
				if err == nil {
					err = h.Unlock(op)
				}
				if err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					cancel()
					return
				}
				if n := cycles.Add(1); maxCycles > 0 && n >= maxCycles {
					cancel()
				}
			}
		}(uint64(w) + 1)
	}
	wg.Wait()
	r := ManyKeysResult{Cycles: cycles.Load(), Busy: busy.Load(), Elapsed: time.Since(start)}
	return r, firstErr
}

// work stays busy for d, yielding the processor between looks at the clock.
func work(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		runtime.Gosched()
	}
}
