package interop

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// The modern fleet beyond one server (issue 28): Go modern.Lockers and
// lockbridge-java ModernLockers on a Redis Cluster and on a Sentinel-watched
// master, across a failover of the lock's master.

// jwakeSlow is a backoff (and a holder's lease) no waiter sleeps through
// within jwakeDeadline: only a release notice gets it the lock by then.
const (
	jwakeSlow     = 60 * time.Second
	jwakeHold     = 120 * time.Second
	jwakeDeadline = 15 * time.Second
)

// fenceKey is the fence counter of lockName (modern/: "{key}:fence").
const fenceKey = "{" + lockName + "}:fence"

// releasedChannel is lockName's release channel.
const releasedChannel = "{" + lockName + "}:released"

// masterOfSlot is the address of the master serving slot, by addr's
// CLUSTER SLOTS.
func masterOfSlot(t *testing.T, addr string, slot int64) string {
	t.Helper()
	v, err := topoDo(context.Background(), addr, "CLUSTER", "SLOTS")
	require.NoError(t, err)
	for _, r := range v.([]any) {
		rr := r.([]any)
		if rr[0].(int64) <= slot && slot <= rr[1].(int64) {
			m := rr[2].([]any)
			return fmt.Sprintf("%v:%v", m[0], m[1])
		}
	}
	t.Fatalf("no master serves slot %d", slot)
	return ""
}

// waitShardSubscribed waits until the master of lockName's slot counts a
// subscriber of its release channel (SHARDNUMSUB counts that node's own:
// the count a release script reads before it publishes).
func waitShardSubscribed(t *testing.T, f topoFleet) {
	t.Helper()
	ctx := context.Background()
	n, err := topoDo(ctx, f.addrs[0], "CLUSTER", "KEYSLOT", lockName)
	require.NoError(t, err)
	master := masterOfSlot(t, f.addrs[0], n.(int64))
	topoEventually(t, "a waiter subscribed on the slot's master "+master, func() bool {
		v, err := topoDo(ctx, master, "PUBSUB", "SHARDNUMSUB", releasedChannel)
		r, _ := v.([]any)
		return err == nil && len(r) == 2 && r[1].(int64) > 0
	})
}

// acquiredFence parses a once-mode worker's "acquired <ms> fence <n>".
func acquiredFence(t *testing.T, rest string) int64 {
	t.Helper()
	f := strings.Fields(rest)
	require.Len(t, f, 3, "acquired <ms> fence <n>: %q", rest)
	n, err := strconv.ParseInt(f[2], 10, 64)
	require.NoError(t, err)
	return n
}

// TestInteropJavaModernCluster: on a Redis Cluster, a Java waiter is
// woken by a Go release (SPUBLISH on the slot's master, heard through the
// Java side's SSUBSCRIBE) and a Go waiter by a Java release, before and
// after a failover of the lock's master (CLUSTER FAILOVER on its replica).
// Each waiter backs off 60 s and the holder's lease is 120 s, so only the
// notice gets it the lock within the test's 15 s. Every fence handed out,
// by either language, on either master, exceeds the one before.
func TestInteropJavaModernCluster(t *testing.T) {
	f := clusterFleet(t)
	ctx := context.Background()
	e := &env{guardSrv: redistest.Start(t), lock: f.lock}
	e.guard = goredislib.NewClient(&goredislib.Options{Addr: e.guardSrv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = e.guard.Close() })
	var fences []int64
	for _, stage := range []string{"before the failover", "after the failover"} {
		if stage == "after the failover" {
			f.failover(t)
		}
		t.Run("java-waiter-woken-by-go "+stage, func(t *testing.T) {
			fences = append(fences, javaWaiterWokenByGo(ctx, t, e, f)...)
		})
		t.Run("go-waiter-woken-by-java "+stage, func(t *testing.T) {
			fences = append(fences, goWaiterWokenByJava(ctx, t, e, f)...)
		})
	}
	t.Logf("fences in order: %v", fences)
	for i := 1; i < len(fences); i++ {
		assert.Greater(t, fences[i], fences[i-1], "fence %d after %d", i, i-1)
	}
}

// javaWaiterWokenByGo: a Go holder, a Java waiter that subscribes, the Go
// release; returns the fences (Go's, then Java's).
func javaWaiterWokenByGo(ctx context.Context, t *testing.T, e *env, f topoFleet) []int64 {
	lk := modern.New(f.lock, modern.WithFencing())
	held, err := lk.Lock(ctx, lockName, jwakeHold)
	require.NoError(t, err)
	goFence := held.(*modern.Lock).Fence()
	flags := javaFlags{"mode": "once", "locker": "lockbridge-modern", "fencing": "true", "name": lockName,
		"lease-ms": "10000", "wait-ms": fmt.Sprint(jwakeSlow.Milliseconds()),
		"backoff-ms": fmt.Sprint(jwakeSlow.Milliseconds())}
	for k, v := range f.java {
		flags[k] = v
	}
	j := startJavaAt(t, e, f.javaAddr, flags)
	waitShardSubscribed(t, f)
	time.Sleep(50 * time.Millisecond) // the waiter is asleep in its backoff
	t0 := time.Now()
	require.NoError(t, held.Unlock(ctx))
	rest := j.expect("acquired", jwakeDeadline)
	woke := time.Since(t0)
	javaFence := acquiredFence(t, rest)
	t.Logf("the Java waiter acquired %v after the Go release (backoff %v); fences go %d, java %d",
		woke.Round(time.Millisecond), jwakeSlow, goFence, javaFence)
	j.send("release")
	j.expect("released", 30*time.Second)
	return []int64{goFence, javaFence}
}

// goWaiterWokenByJava: a Java holder, a Go waiter that subscribes, the
// Java release; returns the fences (Java's, then Go's).
func goWaiterWokenByJava(ctx context.Context, t *testing.T, e *env, f topoFleet) []int64 {
	flags := javaFlags{"mode": "once", "locker": "lockbridge-modern", "fencing": "true", "name": lockName,
		"lease-ms": fmt.Sprint(jwakeHold.Milliseconds()), "wait-ms": "20000"}
	for k, v := range f.java {
		flags[k] = v
	}
	j := startJavaAt(t, e, f.javaAddr, flags)
	javaFence := acquiredFence(t, j.expect("acquired", 30*time.Second))
	lk := modern.New(f.lock, modern.WithFencing(), modern.WithBackoff(lockbridge.ExponentialBackoff(jwakeSlow, jwakeSlow)))
	type got struct {
		l   lockbridge.Lock
		err error
		at  time.Time
	}
	ch := make(chan got, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, jwakeSlow)
		defer cancel()
		l, err := lk.Lock(wctx, lockName, 10*time.Second)
		ch <- got{l, err, time.Now()}
	}()
	waitShardSubscribed(t, f)
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	j.send("release")
	j.expect("released", 30*time.Second)
	var r got
	select {
	case r = <-ch:
	case <-time.After(jwakeDeadline):
		t.Fatalf("the Go waiter did not get the lock within %v of the Java release (its backoff: %v)", jwakeDeadline,
			jwakeSlow)
	}
	require.NoError(t, r.err)
	goFence := r.l.(*modern.Lock).Fence()
	t.Logf("the Go waiter acquired %v after the Java release was asked for (backoff %v); fences java %d, go %d",
		r.at.Sub(t0).Round(time.Millisecond), jwakeSlow, javaFence, goFence)
	require.NoError(t, r.l.Unlock(ctx))
	return []int64{javaFence, goFence}
}

// TestInteropJavaModernTopologies: the mixed modern fleet — two Go
// modern.Lockers and a JVM with two lockbridge-java ModernLockers, all
// fenced — contending for one key on a Sentinel-watched master and on a
// Redis Cluster, with a failover of the lock's master mid-run, after which
// the fence counter is deleted on the new master (a failover to a replica
// that never got it). The guard (a redis-server of its own, not the lock)
// counts 0 overlaps and checks, inside each critical section, that every
// fence exceeds the one before, across languages, the failover and the
// lost counter.
func TestInteropJavaModernTopologies(t *testing.T) {
	t.Run("sentinel", func(t *testing.T) { runModernTopoFleet(t, sentinelFleet(t)) })
	t.Run("cluster", func(t *testing.T) { runModernTopoFleet(t, clusterFleet(t)) })
}

// jmodernSpan is the contention before and after the failover.
const jmodernSpan = 2 * time.Second

func runModernTopoFleet(t *testing.T, f topoFleet) {
	ctx := context.Background()
	e := &env{guardSrv: redistest.Start(t), lock: f.lock}
	e.guard = goredislib.NewClient(&goredislib.Options{Addr: e.guardSrv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = e.guard.Close() })
	flags := javaFlags{"mode": "contend", "locker": "lockbridge-modern", "fencing": "true", "auto-refresh": "true",
		"name": lockName, "id": "java", "threads": "2", "lease-ms": "5000", "wait-ms": "1000", "hold-ms": "1",
		"duration-ms": "600000"}
	for k, v := range f.java {
		flags[k] = v
	}
	j := startJavaAt(t, e, f.javaAddr, flags)
	stop := make(chan struct{})
	var goErrs atomic.Int64
	wg := modernGoFleet(ctx, t, e, f, 2, stop, &goErrs)
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			wg.Wait()
		}
	}()
	time.Sleep(jmodernSpan)
	j0, g0, _ := guardCounts(t, e)
	f.failover(t)
	_, err := topoDo(ctx, f.promoted, "DEL", fenceKey)
	require.NoError(t, err)
	time.Sleep(jmodernSpan)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if jn, gn, _ := guardCounts(t, e); jn > j0 && gn > g0 {
			break
		}
		time.Sleep(200 * time.Millisecond) // a slow JVM: until both sides acquired after the failover
	}
	j.send("stop")
	done := j.expect("done", time.Minute)
	close(stop)
	wg.Wait()
	stopped = true
	jt, gt, overlaps := guardCounts(t, e)
	checked, regress := e.counter(t, "fence:checked"), e.counter(t, "fence:regress")
	failedJava, unknown := 0, 0
	for _, l := range strings.Split(j.Stderr(), "\n") {
		if strings.HasPrefix(l, "acquire: ") || strings.HasPrefix(l, "release: ") {
			failedJava++
			if strings.Contains(l, "UnknownOutcomeException") {
				unknown++
			}
		}
	}
	t.Logf("before the failover: java %d, go %d; after: java %d, go %d; overlaps %d; fences checked %d, not increasing "+
		"%d; "+
		"java failed calls %d (%d unknown outcomes), go failed calls %d (worker: %s)",
		j0, g0, jt-j0, gt-g0, overlaps, checked, regress, failedJava, unknown, goErrs.Load(), done)
	assert.Zero(t, overlaps, "overlaps")
	assert.Zero(t, regress, "fences strictly increasing across languages, the failover and the lost counter")
	assert.Equal(t, jt+gt, checked, "every acquisition's fence was checked")
	assert.Positive(t, j0, "the Java side acquired before the failover")
	assert.Positive(t, g0, "the Go side acquired before the failover")
	assert.Greater(t, jt, j0, "the Java side acquired after the failover")
	assert.Greater(t, gt, g0, "the Go side acquired after the failover")
}

// modernGoFleet runs n Go modern.Lockers (fenced, auto-refreshed) on
// f.lock until stop is closed: a lock call that fails in the failover is
// counted, not a test failure; a lock held is always counted in and out of
// the guard, its fence checked there.
func modernGoFleet(ctx context.Context, t *testing.T, e *env, f topoFleet, n int, stop <-chan struct{},
	errs *atomic.Int64) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			lk := modern.New(f.lock, modern.WithFencing(), modern.WithAutoRefresh())
			for {
				select {
				case <-stop:
					return
				default:
				}
				actx, cancel := context.WithTimeout(ctx, time.Second)
				l, err := lk.Lock(actx, lockName, 5*time.Second)
				cancel()
				if err != nil {
					if !errors.Is(err, lockbridge.ErrNotObtained) && !errors.Is(err, context.DeadlineExceeded) {
						errs.Add(1)
						time.Sleep(50 * time.Millisecond)
					}
					continue
				}
				if err := e.enter(ctx, id); err != nil {
					t.Errorf("%s: guard: %v", id, err)
				}
				if err := e.guard.Eval(ctx, fenceCheck, nil, l.(*modern.Lock).Fence()).Err(); err != nil {
					t.Errorf("%s: fence check: %v", id, err)
				}
				time.Sleep(time.Millisecond)
				if err := e.exit(context.Background()); err != nil {
					t.Errorf("%s: guard: %v", id, err)
				}
				if err := l.Unlock(context.Background()); err != nil && !errors.Is(err, lockbridge.ErrNotHeld) {
					errs.Add(1)
				}
			}
		}(fmt.Sprintf("go-%d", i))
	}
	return &wg
}
