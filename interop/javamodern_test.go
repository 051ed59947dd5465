package interop

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/modern"
)

// The mixed modern fleet: Go modern.Lockers and lockbridge-java's
// ModernLocker (in the worker's JVM) on one key of one redis-server.

// fenceCheck is the guard's fence check, the Java worker's FENCE_CHECK: a
// fence not above the last one seen counts in fence:regress.
const fenceCheck = "local l = tonumber(redis.call('GET', 'fence:last') or '0') " +
	"if tonumber(ARGV[1]) <= l then redis.call('INCR', 'fence:regress') end " +
	"redis.call('SET', 'fence:last', ARGV[1]) redis.call('INCR', 'fence:checked') return 1"

// jmodernSlow is a backoff no waiter sleeps through within a second: only
// a release notice wakes it that fast.
const jmodernSlow = 5 * time.Second

// waitSubscribed waits until someone subscribes to channel on e's lock
// server (a waiter after its first failed attempt).
func waitSubscribed(t *testing.T, e *env, channel string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := e.raw.PubSubNumSub(context.Background(), channel).Result()
		require.NoError(t, err)
		if m[channel] > 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "no waiter subscribed to %s", channel)
		time.Sleep(5 * time.Millisecond)
	}
}

// TestInteropJavaModern: Go modern.Lockers and Java ModernLockers, both
// fenced, contend for one key: 0 overlaps (counted by the guard on a
// second redis-server), both sides acquire, and every fence exceeds the one
// before it across languages; a Java waiter is woken by a Go release and a
// Go waiter by a Java release, each within a second although its backoff
// sleeps 5 s, and each fence exceeds the releaser's.
func TestInteropJavaModern(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	key := "jmodern"

	t.Run("contend", func(t *testing.T) {
		const span = 4 * time.Second
		j := startJava(t, e, javaFlags{"mode": "contend", "locker": "lockbridge-modern", "fencing": "true",
			"auto-refresh": "true",
			"name":         key, "id": "java", "threads": "2", "lease-ms": "5000", "wait-ms": "1000", "hold-ms": "1",
			"duration-ms": fmt.Sprint(span.Milliseconds())})
		var wg sync.WaitGroup
		end := time.Now().Add(span)
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func(id string) {
				defer wg.Done()
				lk := modern.New(e.lock, modern.WithFencing(), modern.WithAutoRefresh())
				for time.Now().Before(end) {
					actx, cancel := context.WithTimeout(ctx, time.Second)
					l, err := lk.Lock(actx, key, 5*time.Second)
					cancel()
					if err != nil {
						// Not obtained, or the wait's deadline cut an attempt
						// short (an unknown outcome).
						if errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, context.DeadlineExceeded) {
							continue
						}
						t.Errorf("%s: %v", id, err)
						return
					}
					if err := e.enter(ctx, id); err != nil {
						t.Errorf("%s: guard: %v", id, err)
					}
					if err := e.guard.Eval(ctx, fenceCheck, nil, l.(*modern.Lock).Fence()).Err(); err != nil {
						t.Errorf("%s: fence check: %v", id, err)
					}
					time.Sleep(time.Millisecond)
					if err := e.exit(ctx); err != nil {
						t.Errorf("%s: guard: %v", id, err)
					}
					if err := l.Unlock(ctx); err != nil && !errors.Is(err, lockbridge.ErrNotHeld) {
						t.Errorf("%s: unlock: %v", id, err)
					}
				}
			}(fmt.Sprintf("go-%d", i))
		}
		wg.Wait()
		done := j.expect("done", time.Minute)
		javaAcq, goAcq, overlaps := guardCounts(t, e)
		checked, regress := e.counter(t, "fence:checked"), e.counter(t, "fence:regress")
		t.Logf("java %d  go %d  overlaps %d  fences checked %d, not increasing %d (worker: %s)", javaAcq, goAcq, overlaps,
			checked, regress, done)
		assert.Zero(t, overlaps, "overlaps")
		assert.Positive(t, javaAcq, "the Java side acquired")
		assert.Positive(t, goAcq, "the Go side acquired")
		assert.Equal(t, javaAcq+goAcq, checked, "every acquisition's fence was checked")
		assert.Zero(t, regress, "fences strictly increasing across languages")
	})

	t.Run("java-waiter-woken-by-go", func(t *testing.T) {
		lk := modern.New(e.lock, modern.WithFencing())
		held, err := lk.Lock(ctx, key, 30*time.Second)
		require.NoError(t, err)
		goFence := held.(*modern.Lock).Fence()
		j := startJava(t, e, javaFlags{"mode": "once", "locker": "lockbridge-modern", "fencing": "true", "name": key,
			"lease-ms": "10000", "wait-ms": "20000", "backoff-ms": fmt.Sprint(jmodernSlow.Milliseconds())})
		waitSubscribed(t, e, "{"+key+"}:released")
		time.Sleep(50 * time.Millisecond) // the waiter is asleep in its 5 s backoff
		t0 := time.Now()
		require.NoError(t, held.Unlock(ctx))
		rest := j.expect("acquired", 30*time.Second)
		woke := time.Since(t0)
		f := strings.Fields(rest)
		require.Len(t, f, 3, "acquired <ms> fence <n>: %q", rest)
		javaFence, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err)
		t.Logf("the Java waiter acquired %v after the Go release; fences go %d, java %d", woke, goFence, javaFence)
		assert.Less(t, woke, time.Second, "woken by the Go release's notice, not its 5 s backoff")
		assert.Greater(t, javaFence, goFence, "fences increase from Go to Java")
		j.send("release")
		j.expect("released", 30*time.Second)
	})

	t.Run("go-waiter-woken-by-java", func(t *testing.T) {
		j := startJava(t, e, javaFlags{"mode": "once", "locker": "lockbridge-modern", "fencing": "true", "name": key,
			"lease-ms": "30000", "wait-ms": "20000"})
		rest := j.expect("acquired", 30*time.Second)
		f := strings.Fields(rest)
		require.Len(t, f, 3, "acquired <ms> fence <n>: %q", rest)
		javaFence, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err)
		lk := modern.New(e.lock, modern.WithFencing(), modern.WithBackoff(lockbridge.ExponentialBackoff(jmodernSlow,
			jmodernSlow)))
		type got struct {
			l   lockbridge.Lock
			err error
			at  time.Time
		}
		ch := make(chan got, 1)
		go func() {
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			l, err := lk.Lock(wctx, key, 10*time.Second)
			ch <- got{l, err, time.Now()}
		}()
		waitSubscribed(t, e, "{"+key+"}:released")
		time.Sleep(50 * time.Millisecond)
		t0 := time.Now()
		j.send("release")
		j.expect("released", 30*time.Second)
		r := <-ch
		require.NoError(t, r.err)
		woke := r.at.Sub(t0)
		goFence := r.l.(*modern.Lock).Fence()
		t.Logf("the Go waiter acquired %v after the Java release was asked for; fences java %d, go %d", woke, javaFence,
			goFence)
		assert.Less(t, woke, time.Second, "woken by the Java release's notice, not its 5 s backoff")
		assert.Greater(t, goFence, javaFence, "fences increase from Java to Go")
		require.NoError(t, r.l.Unlock(ctx))
	})

	// The server restarts without persistence and loses the fence counter:
	// the clock term still puts each fence above the last, Go to Java to Go.
	t.Run("fences-across-restart", func(t *testing.T) {
		lk := modern.New(e.lock, modern.WithFencing())
		l, err := lk.TryLock(ctx, key, 10*time.Second)
		require.NoError(t, err)
		goFence := l.(*modern.Lock).Fence()
		require.NoError(t, l.Unlock(ctx))
		e.srv.Restart()
		n, err := e.raw.Exists(ctx, "{"+key+"}:fence").Result()
		require.NoError(t, err, "the restarted server answers")
		require.Zero(t, n, "the counter is gone with the restart")
		j := startJava(t, e, javaFlags{"mode": "once", "locker": "lockbridge-modern", "fencing": "true", "name": key,
			"lease-ms": "10000", "wait-ms": "10000"})
		javaFence := acquiredFence(t, j.expect("acquired", 30*time.Second))
		j.send("release")
		j.expect("released", 30*time.Second)
		var after int64
		// the Go client's pooled connections died with the server: the first calls may fail before sending
		for i := 0; ; i++ {
			l, err = lk.TryLock(ctx, key, 10*time.Second)
			if err == nil || i == 5 {
				break
			}
		}
		require.NoError(t, err)
		after = l.(*modern.Lock).Fence()
		require.NoError(t, l.Unlock(ctx))
		t.Logf("fences across the restart: go %d, java %d, go %d", goFence, javaFence, after)
		assert.Greater(t, javaFence, goFence, "Java's fence after the restart exceeds Go's before it")
		assert.Greater(t, after, javaFence, "and Go's next one exceeds Java's")
	})
}
