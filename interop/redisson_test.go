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
	"github.com/lockbridge/lockbridge/redisson"
)

// Redisson's RLock (Java) and lockbridge's redisson package (Go) are one
// lock: each sees the other's holds, reentrant ones included, in the same
// hash; each wakes on the other's unlock message; on one server and in a
// cluster (sharded pub/sub). The scripts differ in text (Java runs
// Redisson's, Go lockbridge's own); what they do to the keys is the same.
func TestRedissonSameLock(t *testing.T) {
	v := loadRedissonVectors(t)
	for _, w := range redissonWorkers {
		for _, cluster := range []bool{false, true} {
			w, cluster := w, cluster
			topology := map[bool]string{false: "single", true: "cluster"}[cluster]
			t.Run(fmt.Sprintf("%s/%v", w.name(), topology), func(t *testing.T) {
				t.Parallel()
				r := newRdsEnv(t, cluster)
				ctx := context.Background()
				j, clientID := startRedisson(t, w, r, javaFlags{"name": lockName})
				sub, err := r.lock.Subscribe(ctx, redissonChannel(lockName))
				require.NoError(t, err)
				defer sub.Close()
				locker := redisson.New(r.lock)

				// Java takes it twice: one field, count 2, which Go reads and respects.
				j.send("lock")
				_, field, holds := javaLocked(t, j, 30*time.Second)
				assert.Equal(t, 1, holds)
				j.send("lock")
				_, field2, holds := javaLocked(t, j, 30*time.Second)
				assert.Equal(t, 2, holds)
				assert.Equal(t, field, field2)
				assert.Regexp(t, v.FieldPattern, field)
				assert.Equal(t, clientID, field[:len(clientID)], "the field starts with Redisson's client id")
				h, err := locker.Holders(ctx, lockName)
				require.NoError(t, err)
				assert.Equal(t, map[string]int64{field: 2}, h)
				_, err = locker.TryLock(ctx, lockName, time.Second)
				var no *lockbridge.NotObtainedError
				require.ErrorAs(t, err, &no)
				assert.Greater(t, no.HolderTTL, time.Duration(0), "Java's watchdog lease")
				assert.LessOrEqual(t, no.HolderTTL, time.Duration(v.Watchdog.TimeoutMS)*time.Millisecond)

				j.send("unlock")
				javaUnlocked(t, j, 10*time.Second)
				_, err = locker.TryLock(ctx, lockName, time.Second)
				require.ErrorIs(t, err, lockbridge.ErrNotObtained, "one Java hold is left")
				j.send("unlock")
				javaUnlocked(t, j, 10*time.Second)
				msg := recv(t, sub)
				assert.Equal(t, v.UnlockMessage, msg.Payload, "Java's unlock message, heard on %s", msg.Channel)

				// Go takes it twice; Java waits; Go's unlocks publish what Java hears.
				o := locker.NewOwner()
				a, err := o.TryLock(ctx, lockName, 30*time.Second)
				require.NoError(t, err)
				b, err := o.TryLock(ctx, lockName, 30*time.Second)
				require.NoError(t, err)
				h, err = locker.Holders(ctx, lockName)
				require.NoError(t, err)
				assert.Equal(t, map[string]int64{o.Field(): 2}, h)
				j.send("try 0")
				j.expect("timeout", 10*time.Second)
				require.NoError(t, b.Unlock(ctx))
				j.send("try 0")
				j.expect("timeout", 10*time.Second)
				require.NoError(t, a.Unlock(ctx))
				msg = recv(t, sub)
				assert.Equal(t, v.UnlockMessage, msg.Payload)
				j.send("try 0")
				_, _, holds = javaLocked(t, j, 10*time.Second)
				assert.Equal(t, 1, holds)
				j.send("unlock")
				javaUnlocked(t, j, 10*time.Second)
				recv(t, sub)
			})
		}
	}
}

// TestRedissonExclusion: Redisson (each version) and Go owners contend for
// one lock, both sides taking it reentrantly (Java: lock, lock again,
// getHoldCount() == 2; Go: an Owner's TryLock again), both with the
// watchdog: 0 overlaps over at least 2,000 acquisitions per pair, counted by
// the guard on a server of its own. On a single server for both versions,
// and in the cluster for the newest.
func TestRedissonExclusion(t *testing.T) {
	count := int64(2000)
	if long() {
		count = 20000
	}
	type run struct {
		w             *redissonWorker
		cluster, fair bool
	}
	runs := []run{{redissonWorkers[0], false, false}, {redissonWorkers[1], false, false},
		{redissonWorkers[0], true, false},
		{redissonWorkers[0], false, true}}
	for _, rn := range runs {
		rn := rn
		r0 := map[bool]string{false: "single", true: "cluster"}[rn.cluster]
		if rn.fair {
			r0 += "/fair"
		}
		t.Run(rn.w.name()+"/"+r0, func(t *testing.T) {
			t.Parallel()
			r := newRdsEnv(t, rn.cluster)
			e := r.guard
			start := time.Now()
			j := startJVM(t, rn.w.jar, javaFlags{"mode": "contend", "name": lockName, "id": "java", "threads": "2",
				"count": strconv.FormatInt(count, 10), "duration-ms": "240000", "wait-ms": "5000",
				"fair": strconv.FormatBool(rn.fair)},
				r.where, "--guard="+e.guardSrv.Addr())
			j.expect("ready", 60*time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for i := 0; i < 2; i++ {
				wg.Add(1)
				go func(id string) {
					defer wg.Done()
					if err := redissonGoWorker(ctx, r, id, count, rn.fair); err != nil {
						errs <- fmt.Errorf("%s: %w", id, err)
					}
				}(fmt.Sprintf("go-%d", i))
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			var acq, timeouts int64
			_, err := fmt.Sscan(j.expect("done", 3*time.Minute), &acq, &timeouts)
			require.NoError(t, err)
			javaAcq := e.counter(t, "acq:java-0") + e.counter(t, "acq:java-1")
			goAcq := e.counter(t, "acq:go-0") + e.counter(t, "acq:go-1")
			overlaps := e.counter(t, "cs:overlaps")
			t.Logf("%s/%s + go: %d acquisitions (java %d, go %d), %d overlaps, %v; java attempts that waited out 5 s: %d",
				rn.w.name(), r0, javaAcq+goAcq, javaAcq, goAcq, overlaps, time.Since(start).Round(time.Millisecond), timeouts)
			assert.Equal(t, acq, javaAcq, "the worker's own count and the guard's agree")
			assert.Zero(t, overlaps, "overlaps")
			assert.GreaterOrEqual(t, javaAcq+goAcq, count)
			assert.Positive(t, javaAcq, "the Java side acquired")
			assert.Positive(t, goAcq, "the Go side acquired")
		})
	}
}

// redissonGoWorker is one Go service of the exclusion runs: an Owner with
// the watchdog that locks, enters the guard, takes a reentrant hold and
// releases it, leaves the guard and unlocks, until the guard counts count.
func redissonGoWorker(ctx context.Context, r *rdsEnv, id string, count int64, fair bool) error {
	e := r.guard
	opts := []redisson.Option{redisson.WithWatchdog()}
	if fair {
		opts = append(opts, redisson.WithFair(redisson.DefaultFairWait))
	}
	o := redisson.New(r.lock, opts...).NewOwner()
	for ctx.Err() == nil {
		if n, err := e.guard.Get(ctx, "total").Int64(); err == nil && n >= count {
			return nil
		}
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		outer, err := o.Lock(actx, lockName, redisson.DefaultWatchdogTimeout)
		cancel()
		if errors.Is(err, lockbridge.ErrNotObtained) {
			continue
		}
		if err != nil {
			return err
		}
		if err := e.enter(ctx, id); err != nil {
			return err
		}
		inner, err := o.TryLock(ctx, lockName, redisson.DefaultWatchdogTimeout)
		if err != nil {
			return fmt.Errorf("reentry: %w", err)
		}
		if n, err := inner.(*redisson.Lock).Owner().HoldCount(ctx, inner.Key()); err != nil || n != 2 {
			return fmt.Errorf("reentrant hold count %d, %v", n, err)
		}
		if err := inner.Unlock(ctx); err != nil {
			return err
		}
		if err := e.exit(context.Background()); err != nil {
			return err
		}
		if err := outer.Unlock(context.Background()); err != nil {
			return err
		}
	}
	return nil
}

// TestRedissonWakeLatency: an unlock wakes a waiter of the other language at
// once (a Go waiter's backoff is set to 20 s, and Java's wait is for the
// message or the 30 s lease), on a single server (both Redisson versions)
// and in the cluster (the newest). The
// latencies — from the unlock call to the waiter holding the lock, on one
// machine's clock — are reported, not asserted.
func TestRedissonWakeLatency(t *testing.T) {
	rounds := 40
	if long() {
		rounds = 400
	}
	type run struct {
		w       *redissonWorker
		cluster bool
	}
	for _, rn := range []run{{redissonWorkers[0], false}, {redissonWorkers[1], false}, {redissonWorkers[0], true}} {
		w, cluster := rn.w, rn.cluster
		t.Run(w.name()+"/"+map[bool]string{false: "single", true: "cluster"}[cluster], func(t *testing.T) {
			t.Parallel()
			r := newRdsEnv(t, cluster)
			ch := redissonChannel(lockName)
			j, _ := startRedisson(t, w, r, javaFlags{"name": lockName})
			slow := lockbridge.LinearBackoff(20*time.Second, 20*time.Second)
			locker := redisson.New(r.lock, redisson.WithBackoff(slow))
			ctx := context.Background()
			var goToJava, javaToGo []time.Duration
			for i := 0; i < rounds; i++ {
				// Go holds, Java waits in lock(), Go unlocks.
				r.waitSubscribers(t, ch, 0)
				lk, err := locker.TryLock(ctx, lockName, 30*time.Second)
				require.NoError(t, err)
				j.send("lock")
				r.waitSubscribers(t, ch, 1)
				time.Sleep(5 * time.Millisecond) // Java is past its second attempt, waiting
				sent := time.Now()
				require.NoError(t, lk.Unlock(ctx))
				at, _, _ := javaLocked(t, j, 30*time.Second)
				goToJava = append(goToJava, at.Sub(sent))

				// Java holds, Go waits in Lock(), Java unlocks.
				r.waitSubscribers(t, ch, 0)
				got := make(chan time.Time, 1)
				go func() {
					lk, err := locker.Lock(ctx, lockName, 30*time.Second)
					at := time.Now()
					if assert.NoError(t, err) {
						assert.NoError(t, lk.Unlock(ctx))
					}
					got <- at
				}()
				r.waitSubscribers(t, ch, 1)
				time.Sleep(5 * time.Millisecond)
				j.send("unlock")
				sent = javaUnlocked(t, j, 30*time.Second)
				javaToGo = append(javaToGo, (<-got).Sub(sent))
			}
			g50, g99 := percentiles(goToJava)
			j50, j99 := percentiles(javaToGo)
			t.Logf("%s/%s, %d rounds: Go unlock -> Java waiter holds: p50 %v p99 %v; Java unlock -> Go waiter holds: p50 "+
				"%v p99 %v",
				w.name(), map[bool]string{false: "single", true: "cluster"}[cluster], rounds,
				g50.Round(time.Microsecond), g99.Round(time.Microsecond), j50.Round(time.Microsecond), j99.Round(time.Microsecond))
		})
	}
}

// TestRedissonWatchdog: a Java holder with the watchdog (lockWatchdogTimeout
// 3 s, renewed every second) keeps the lock across renewals while Go waits;
// when its JVM is SIGKILLed the lock frees after the lease and the Go waiter
// takes it. The same with a Go holder (its own process, WithWatchdog, ttl
// 3 s) and a Java waiter.
func TestRedissonWatchdog(t *testing.T) {
	const lease = 3 * time.Second
	w := redissonWorkers[0]
	t.Run(w.name()+"/java-holds", func(t *testing.T) {
		t.Parallel()
		r := newRdsEnv(t, false)
		ctx := context.Background()
		j, _ := startRedisson(t, w, r,
			javaFlags{"name": lockName, "watchdog-ms": strconv.FormatInt(lease.Milliseconds(), 10)})
		j.send("lock")
		_, field, _ := javaLocked(t, j, 30*time.Second)
		locker := redisson.New(r.lock)
		end := time.Now().Add(2*lease + lease/2) // more than two leases: renewals kept it
		tries := 0
		for time.Now().Before(end) {
			_, err := locker.TryLock(ctx, lockName, time.Second)
			require.ErrorIs(t, err, lockbridge.ErrNotObtained, "Java's watchdog keeps the lock")
			tries++
			time.Sleep(100 * time.Millisecond)
		}
		h, err := locker.Holders(ctx, lockName)
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{field: 1}, h)

		j.kill()
		killed := time.Now()
		wctx, cancel := context.WithTimeout(ctx, 4*lease)
		defer cancel()
		lk, err := locker.Lock(wctx, lockName, lease)
		require.NoError(t, err, "the lock frees after the lease")
		t.Logf("Java holder kept the lock for %v (%d Go attempts refused); after SIGKILL the Go waiter held it in %v "+
			"(lease %v)",
			2*lease+lease/2, tries, time.Since(killed).Round(time.Millisecond), lease)
		require.NoError(t, lk.Unlock(ctx))
	})
	t.Run(w.name()+"/go-holds", func(t *testing.T) {
		t.Parallel()
		r := newRdsEnv(t, false)
		h := startGoHolder(t, r.guard.srv.Addr(), lockName, lease)
		j, _ := startRedisson(t, w, r, javaFlags{"name": lockName})
		j.send("try " + strconv.FormatInt((2*lease+lease/2).Milliseconds(), 10))
		j.expect("timeout", time.Minute)
		holders, err := redisson.New(r.lock).Holders(context.Background(), lockName)
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{h.field: 1}, holders, "the Go watchdog kept it")

		h.kill(t)
		killed := time.Now()
		j.send("try " + strconv.FormatInt((4*lease).Milliseconds(), 10))
		at, _, _ := javaLocked(t, j, time.Minute)
		t.Logf("Go holder kept the lock for %v against a Java tryLock; after SIGKILL the Java waiter held it in %v "+
			"(lease %v)",
			2*lease+lease/2, at.Sub(killed).Round(time.Millisecond), lease)
		j.send("unlock")
		javaUnlocked(t, j, 10*time.Second)
	})
}

// TestRedissonFairFIFO: Java and Go waiters of one fair lock
// (RedissonFairLock, WithFair) queue in one line and are served in arrival
// order — Java, Go, Java, Go — each woken on its own channel by the
// previous holder's unlock, whichever language it was.
func TestRedissonFairFIFO(t *testing.T) {
	for _, w := range redissonWorkers {
		w := w
		t.Run(w.name(), func(t *testing.T) {
			t.Parallel()
			r := newRdsEnv(t, false)
			ctx := context.Background()
			v := loadRedissonVectors(t)
			queueKey := v.Names[0].Queue // lockName's
			require.Equal(t, lockName, v.Names[0].Name)
			queued := func() []string {
				q, err := r.nodes[0].LRange(ctx, queueKey, 0, -1).Result()
				require.NoError(t, err)
				return q
			}
			fair := func() *redisson.Locker {
				return redisson.New(r.lock, redisson.WithFair(time.Minute),
					redisson.WithBackoff(lockbridge.LinearBackoff(20*time.Second, 20*time.Second)))
			}
			holder, err := fair().TryLock(ctx, lockName, time.Minute)
			require.NoError(t, err)

			// Arrivals: Java A, Go B, Java C, Go D, each queued before the next.
			type goWaiter struct {
				o      *redisson.Owner
				got    chan lockbridge.Lock
				unlock chan struct{}
			}
			var javas []*java
			var javaIDs []string
			var goes []*goWaiter
			var wg sync.WaitGroup
			defer wg.Wait()
			for i := 0; i < 4; i++ {
				if i%2 == 0 {
					j, id := startRedisson(t, w, r, javaFlags{"name": lockName, "fair": "true"})
					j.send("lock")
					javas, javaIDs = append(javas, j), append(javaIDs, id)
				} else {
					g := &goWaiter{o: fair().NewOwner(), got: make(chan lockbridge.Lock, 1), unlock: make(chan struct{}, 1)}
					goes = append(goes, g)
					wg.Add(1)
					go func() {
						defer wg.Done()
						lk, err := g.o.Lock(ctx, lockName, time.Minute)
						if !assert.NoError(t, err) {
							return
						}
						g.got <- lk
						<-g.unlock
						assert.NoError(t, lk.Unlock(ctx))
					}()
				}
				require.Eventually(t, func() bool { return len(queued()) == i+1 }, 30*time.Second, time.Millisecond,
					"waiter %d queued", i)
			}
			q := queued()
			assert.True(t, strings.HasPrefix(q[0], javaIDs[0]+":"), "Java A first: %v", q)
			assert.Equal(t, goes[0].o.Field(), q[1])
			assert.True(t, strings.HasPrefix(q[2], javaIDs[1]+":"), "Java C third: %v", q)
			assert.Equal(t, goes[1].o.Field(), q[3])

			holders := func() map[string]int64 {
				h, err := redisson.New(r.lock).Holders(ctx, lockName)
				require.NoError(t, err)
				return h
			}
			require.NoError(t, holder.Unlock(ctx))
			var order []string
			for i := 0; i < 4; i++ {
				if i%2 == 0 {
					j := javas[i/2]
					_, field, _ := javaLocked(t, j, 30*time.Second)
					assert.Equal(t, map[string]int64{field: 1}, holders())
					order = append(order, fmt.Sprintf("java-%c", 'A'+i))
					j.send("unlock")
					javaUnlocked(t, j, 10*time.Second)
				} else {
					g := goes[i/2]
					select {
					case <-g.got:
					case <-time.After(30 * time.Second):
						t.Fatalf("Go waiter %c was not served", 'A'+i)
					}
					assert.Equal(t, map[string]int64{g.o.Field(): 1}, holders())
					order = append(order, fmt.Sprintf("go-%c", 'A'+i))
					g.unlock <- struct{}{}
				}
			}
			wg.Wait()
			assert.Empty(t, queued())
			t.Logf("%s fair lock: served %v, the arrival order", w.name(), order)
		})
	}
}

// TestRedissonFencedTokens: Java's fenced lock (getFencedLock,
// lockAndGetToken) and Go's WithFencing share one token counter: taking
// turns, each holder's token is above every earlier one, Java's and Go's,
// and a Go re-entry takes one too. Go's tokens are floored at the server's
// clock in µs, so they jump ahead of Java's first ones; Java's INCR follows
// on from there.
func TestRedissonFencedTokens(t *testing.T) {
	for _, w := range redissonWorkers {
		w := w
		t.Run(w.name(), func(t *testing.T) {
			t.Parallel()
			r := newRdsEnv(t, false)
			ctx := context.Background()
			j, _ := startRedisson(t, w, r, javaFlags{"name": lockName, "fenced": "true"})
			o := redisson.New(r.lock, redisson.WithFencing()).NewOwner()
			var tokens []string
			last := int64(0)
			for i := 0; i < 5; i++ {
				j.send("lock")
				f := strings.Fields(j.expect("locked", 30*time.Second))
				require.Len(t, f, 4, "a token")
				tok, err := strconv.ParseInt(f[3], 10, 64)
				require.NoError(t, err)
				assert.Greater(t, tok, last, "Java's token after Go's")
				last = tok
				j.send("unlock")
				javaUnlocked(t, j, 10*time.Second)

				a, err := o.TryLock(ctx, lockName, 30*time.Second)
				require.NoError(t, err)
				b, err := o.TryLock(ctx, lockName, 30*time.Second)
				require.NoError(t, err)
				fa, fb := a.(*redisson.Lock).Fence(), b.(*redisson.Lock).Fence()
				assert.Greater(t, fa, last, "Go's token after Java's")
				assert.Greater(t, fb, fa, "a re-entry's token")
				last = fb
				require.NoError(t, b.Unlock(ctx))
				require.NoError(t, a.Unlock(ctx))
				tokens = append(tokens, f[3], strconv.FormatInt(fa, 10)+"/"+strconv.FormatInt(fb, 10))
			}
			t.Logf("%s fenced lock, tokens java, go/go-reentry, …: %v", w.name(), tokens)
		})
	}
}
