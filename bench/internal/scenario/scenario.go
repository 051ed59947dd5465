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
// waiters learn of a release only from Redis. A worker that released calls
// Lock again only once another worker has taken the lock: every hand-off then
// goes to a goroutine that was waiting, as the latency is meant to measure (a
// releaser retrying at once would often beat the waiters), and all other
// workers are waiting at any time.
func Handoff(ctx context.Context, ls []impls.Locker, key string, cfg HandoffConfig) (HandoffResult, error) {
	if len(ls) == 0 {
		return HandoffResult{}, errors.New("scenario: no locker")
	}
	r, done := newHandoffRun(ctx, ls, key, cfg)
	defer done()
	var wg sync.WaitGroup
	rnd := rand.New(rand.NewPCG(uint64(r.base.UnixNano()), 1))
	for w := 0; w < cfg.Workers; w++ {
		var delay time.Duration
		if cfg.Stagger > 0 {
			delay = time.Duration(rnd.Int64N(int64(cfg.Stagger)))
		}
		wg.Add(1)
		go func(w int32) {
			defer wg.Done()
			r.worker(w, delay)
		}(int32(w))
	}
	wg.Wait()
	end := r.since()
	if r.firstErr != nil {
		return HandoffResult{}, r.firstErr
	}
	return r.result(end), nil
}

// handoffRun is one run of Handoff: what its workers share.
type handoffRun struct {
	ls    []impls.Locker
	key   string
	cfg   HandoffConfig
	limit int64     // generations recorded
	base  time.Time // times are nanoseconds since base
	from  int64     // the measurement starts here

	ctx    context.Context // ends the run
	cancel context.CancelFunc

	acq   []int64 // acq[g]: when holder g's Lock returned
	rel   []int64 // rel[g]: when holder g's Unlock returned
	owner []int32 // owner[g]: the worker that was holder g

	// handed is broadcast after every acquire and when the run ends; a
	// releaser waits on it.
	mu     sync.Mutex
	handed *sync.Cond

	gen, guard, counted, gaveUp, violations, held atomic.Int64

	errMu    sync.Mutex
	firstErr error
	waitMu   sync.Mutex
	waits    []time.Duration
}

// newHandoffRun prepares a run; done releases its context.
func newHandoffRun(ctx context.Context, ls []impls.Locker, key string, cfg HandoffConfig) (*handoffRun, func()) {
	limit := int64(1 << 20)
	if cfg.MaxCycles > 0 {
		limit = int64(cfg.MaxCycles) + 1<<16 // room for the cycles during the stagger
	}
	r := &handoffRun{ls: ls, key: key, cfg: cfg, limit: limit, base: time.Now(), from: int64(cfg.Stagger),
		acq: make([]int64, limit+1), rel: make([]int64, limit+1), owner: make([]int32, limit+1)}
	r.handed = sync.NewCond(&r.mu)
	if cfg.Duration > 0 {
		r.ctx, r.cancel = context.WithTimeout(ctx, cfg.Stagger+cfg.Duration)
	} else {
		r.ctx, r.cancel = context.WithCancel(ctx)
	}
	stop := context.AfterFunc(r.ctx, r.broadcast)
	return r, func() {
		stop()
		r.cancel()
	}
}

// since is the time since the run's base, in nanoseconds.
func (r *handoffRun) since() int64 { return int64(time.Since(r.base)) }

// broadcast wakes the releasers waiting for a hand-off.
func (r *handoffRun) broadcast() {
	r.mu.Lock()
	r.handed.Broadcast()
	r.mu.Unlock()
}

// fail records the run's first error and ends the run.
func (r *handoffRun) fail(err error) {
	r.errMu.Lock()
	if r.firstErr == nil {
		r.firstErr = err
	}
	r.errMu.Unlock()
	r.cancel()
}

// worker is worker w: after delay, it locks, holds, releases and waits for
// the hand-off until the run ends.
func (r *handoffRun) worker(w int32, delay time.Duration) {
	l := r.ls[int(w)%len(r.ls)]
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.ctx.Done():
			return
		}
	}
	var mine []time.Duration
	defer func() {
		r.waitMu.Lock()
		r.waits = append(r.waits, mine...)
		r.waitMu.Unlock()
	}()
	for r.ctx.Err() == nil {
		called := r.since()
		h, err := l.Lock(r.ctx, r.key, TTL)
		if err != nil {
			if r.lockFailed(err) {
				return
			}
			continue
		}
		t := r.since()
		if t >= r.from {
			mine = append(mine, time.Duration(t-called))
		}
		g, err := r.hold(h, w, t)
		if err != nil {
			r.fail(err)
			return
		}
		if !r.afterRelease(g, t) {
			return
		}
	}
}

// lockFailed counts a Lock call that returned err; true: the worker stops
// (the run has ended, or Lock keeps failing).
func (r *handoffRun) lockFailed(err error) bool {
	if r.ctx.Err() != nil {
		return true
	}
	if r.gaveUp.Add(1) > 1_000_000 {
		r.fail(fmt.Errorf("lock keeps failing: %w", err))
		return true
	}
	return false
}

// hold is worker w inside, as holder g, from t on: it records the
// acquire, works for cfg.Hold and releases h. It returns g.
func (r *handoffRun) hold(h impls.Held, w int32, t int64) (int64, error) {
	if r.guard.Add(1) != 1 {
		r.violations.Add(1)
	}
	g := r.gen.Add(1)
	if g <= r.limit {
		r.acq[g], r.owner[g] = t, w
	}
	r.broadcast()
	if r.cfg.Hold > 0 {
		work(r.cfg.Hold)
	}
	if t >= r.from {
		r.held.Add(r.since() - t)
	}
	r.guard.Add(-1)
	// Release even when the run has ended, so no lock is left.
	if err := h.Unlock(context.WithoutCancel(r.ctx)); err != nil {
		return g, fmt.Errorf("unlock: %w", err)
	}
	if g <= r.limit {
		r.rel[g] = r.since()
	}
	return g, nil
}

// afterRelease follows holder g's release (its Lock returned at t): it
// ends the run at cfg.MaxCycles or the recording limit, else waits until
// another worker took the lock. False: the worker stops.
func (r *handoffRun) afterRelease(g, t int64) bool {
	if t >= r.from && r.cfg.MaxCycles > 0 && r.counted.Add(1) >= int64(r.cfg.MaxCycles) {
		r.cancel()
	}
	if g >= r.limit {
		r.cancel()
		return false
	}
	r.mu.Lock()
	for r.gen.Load() == g && r.ctx.Err() == nil {
		r.handed.Wait()
	}
	r.mu.Unlock()
	return true
}

// result is what the run measured, once every worker has stopped at end.
func (r *handoffRun) result(end int64) HandoffResult {
	n := int(min(r.gen.Load(), r.limit))
	out := HandoffResult{
		Total:      n,
		Elapsed:    time.Duration(end - r.from),
		GaveUp:     int(r.gaveUp.Load()),
		Violations: int(r.violations.Load()),
		Handoffs:   make([]time.Duration, 0, n),
		Waits:      r.waits,
		held:       time.Duration(r.held.Load()),
	}
	for g := 1; g <= n; g++ {
		if r.acq[g] < r.from {
			continue // before the measurement started
		}
		out.Cycles++
		if g == 1 || r.acq[g-1] < r.from || r.rel[g-1] == 0 {
			continue
		}
		d := r.acq[g] - r.rel[g-1]
		if d < 0 {
			out.Early++
			d = 0
		}
		if r.owner[g] == r.owner[g-1] {
			out.Self++
		}
		out.Handoffs = append(out.Handoffs, time.Duration(d))
	}
	return out
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
