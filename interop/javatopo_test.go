package interop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// The mixed Go/Java fleet of TestInteropJavaMigrates, on a Sentinel-watched
// master and on a Redis Cluster (issue 28, item 3): Go migrate.Lockers
// (go-redis failover / cluster clients) and lockbridge-java MigrateLockers
// (a Lettuce Sentinel / Cluster connection factory through SpringRedis.of)
// follow one namespace while control.Controller moves it legacy ->
// dual-write -> dual-read -> modern, with a failover of the lock's master
// during dual-write. The guard (a redis-server of its own, not the lock)
// counts 0 overlaps. Long: make interop-long.

// topoFleet is one topology under the fleet.
type topoFleet struct {
	lock     driver.Client // Go's lockers and the controller
	javaAddr string        // the worker's --redis (unused with --cluster / --sentinels)
	java     javaFlags     // the worker's topology flags
	force    bool          // Init with force (a new namespace in a cluster: no mark)
	failover func(t *testing.T)
	promoted string   // the address of the lock's master after the failover
	addrs    []string // every server of the topology (not the sentinel)
}

func TestInteropJavaMigratesTopologies(t *testing.T) {
	if !long() {
		t.Skip("the Sentinel and Cluster fleets with a failover run in make interop-long (LOCKBRIDGE_INTEROP_LONG=1)")
	}
	t.Run("sentinel", func(t *testing.T) { runTopoFleet(t, sentinelFleet(t)) })
	t.Run("cluster", func(t *testing.T) { runTopoFleet(t, clusterFleet(t)) })
}

func topoDo(ctx context.Context, addr string, args ...any) (any, error) {
	c := goredislib.NewClient(&goredislib.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	return c.Do(ctx, args...).Result()
}

func topoEventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sentinelFleet: a primary, its replica, one Sentinel. The failover is
// coordinated as an operator's: writes paused on the primary (CLIENT PAUSE
// WRITE) until the replica has everything, SENTINEL FAILOVER, the old
// primary's clients killed (as Sentinel's reconfiguration does), writes
// unpaused. A lock write that reached the old primary is on the new one.
func sentinelFleet(t *testing.T) topoFleet {
	ctx := context.Background()
	rp := redistest.StartReplicated(t)
	s := redistest.StartSentinel(t, rp.Primary.Addr(), "mymaster")
	sc := goredislib.NewSentinelClient(&goredislib.Options{Addr: s.Addr()})
	t.Cleanup(func() { _ = sc.Close() })
	topoEventually(t, "the sentinel knows the replica", func() bool {
		r, err := sc.Replicas(ctx, "mymaster").Result()
		return err == nil && len(r) == 1 && !strings.Contains(fmt.Sprint(r[0]["flags"]), "down")
	})
	c := goredislib.NewFailoverClient(&goredislib.FailoverOptions{MasterName: "mymaster",
		SentinelAddrs: []string{s.Addr()}, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return topoFleet{
		lock:     goredis.New(c),
		javaAddr: rp.Primary.Addr(),
		java:     javaFlags{"sentinels": s.Addr(), "master": "mymaster"},
		promoted: rp.Replica.Addr(),
		addrs:    []string{rp.Primary.Addr(), rp.Replica.Addr()},
		failover: func(t *testing.T) {
			old := rp.Primary.Addr()
			_, err := topoDo(ctx, old, "CLIENT", "PAUSE", "60000", "WRITE")
			require.NoError(t, err)
			rp.Sync(t)
			require.NoError(t, sc.Failover(ctx, "mymaster").Err())
			topoEventually(t, "the sentinel names the replica", func() bool {
				a, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
				return err == nil && net.JoinHostPort(a[0], a[1]) == rp.Replica.Addr()
			})
			// Unpause only once the old primary follows the new one: a write
			// to it before would be lost, and two masters would each grant
			// the lock (a first run, with the pause lapsing before Sentinel's
			// reconfiguration, counted 885 overlaps). Sentinel's own
			// reconfiguration (a MULTI/EXEC) waits behind the pause, so the
			// operator demotes it, as Redis's FAILOVER command does.
			h, p, _ := net.SplitHostPort(rp.Replica.Addr())
			_, err = topoDo(ctx, old, "REPLICAOF", h, p)
			require.NoError(t, err)
			topoEventually(t, "the old primary is a replica", func() bool {
				v, err := topoDo(ctx, old, "ROLE")
				r, _ := v.([]any)
				return err == nil && len(r) > 0 && r[0] == "slave"
			})
			_, _ = topoDo(ctx, old, "CLIENT", "KILL", "TYPE", "normal")
			_, err = topoDo(ctx, old, "CLIENT", "UNPAUSE")
			require.NoError(t, err)
		},
	}
}

// clusterFleet: three masters, and a replica of the master of the lock's
// slot; the failover is CLUSTER FAILOVER on that replica (coordinated: the
// master pauses its clients until the replica has caught up), after which
// the old master answers MOVED for the slot.
func clusterFleet(t *testing.T) topoFleet {
	ctx := context.Background()
	cl := redistest.StartCluster(t)
	addrs := cl.Addrs()
	n, err := topoDo(ctx, addrs[0], "CLUSTER", "KEYSLOT", lockName)
	require.NoError(t, err)
	slot := n.(int64)
	i := 0
	if slot > 10922 {
		i = 2
	} else if slot > 5460 {
		i = 1
	}
	replica := cl.AddReplica(t, i)
	return topoFleet{
		lock:     locktest.GoRedisCluster(t, cl),
		javaAddr: addrs[0],
		java:     javaFlags{"cluster": strings.Join(addrs, ",")},
		force:    true,
		promoted: replica.Addr(),
		addrs:    append(append([]string(nil), addrs...), replica.Addr()),
		failover: func(t *testing.T) {
			_, err := topoDo(ctx, replica.Addr(), "CLUSTER", "FAILOVER")
			require.NoError(t, err)
			topoEventually(t, "the replica serves the lock's slot on every node", func() bool {
				for _, a := range append(addrs, replica.Addr()) {
					v, err := topoDo(ctx, a, "CLUSTER", "SLOTS")
					if err != nil {
						return false
					}
					found := false
					for _, r := range v.([]any) {
						rr := r.([]any)
						m := rr[2].([]any)
						if rr[0].(int64) <= slot && slot <= rr[1].(int64) {
							found = fmt.Sprint(m[1]) == strings.Split(replica.Addr(), ":")[1]
						}
					}
					if !found {
						return false
					}
				}
				return true
			})
		},
	}
}

// topoGoFleet is goFleet for a topology in failover: a lock call that fails
// (a connection killed, MOVED, READONLY) is counted, not a test failure; a
// lock held is always counted in and out of the guard.
func topoGoFleet(ctx context.Context, t *testing.T, e *env, ns, prefix string, n int, stop <-chan struct{},
	errs *atomic.Int64) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			lk := migrate.New(e.lock, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(jfleetInterval))
			defer func() { _ = lk.Close(context.Background()) }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				actx, cancel := context.WithTimeout(ctx, time.Second)
				l, err := lk.Lock(actx, lockName, jfleetLease)
				cancel()
				if err != nil {
					if !errors.Is(err, lockbridge.ErrNotObtained) && !errors.Is(err, migrate.ErrPhaseUnknown) && !errors.Is(err,
						context.DeadlineExceeded) {
						errs.Add(1)
						time.Sleep(50 * time.Millisecond)
					}
					continue
				}
				if err := e.enter(ctx, id); err != nil {
					t.Errorf("%s: guard: %v", id, err)
				}
				time.Sleep(time.Millisecond)
				if err := e.exit(context.Background()); err != nil {
					t.Errorf("%s: guard: %v", id, err)
				}
				if err := l.Unlock(context.Background()); err != nil && !errors.Is(err, lockbridge.ErrNotHeld) {
					errs.Add(1)
				}
			}
		}(fmt.Sprintf("%s-%d", prefix, i))
	}
	return &wg
}

func runTopoFleet(t *testing.T, f topoFleet) {
	ctx := context.Background()
	guardSrv := redistest.Start(t)
	e := &env{guardSrv: guardSrv, lock: f.lock}
	e.guard = goredislib.NewClient(&goredislib.Options{Addr: guardSrv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = e.guard.Close() })
	ns := "jtopo"
	ctl, err := control.New(f.lock, ns, control.WithQuietPeriod(time.Second),
		control.WithLivenessMargin(500*time.Millisecond), control.WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	_, err = ctl.Init(ctx, f.force)
	require.NoError(t, err)

	flags := javaFlags{"mode": "contend", "locker": "lockbridge-migrate", "namespace": ns,
		"interval-ms": fmt.Sprint(jfleetInterval.Milliseconds()), "name": lockName, "id": "java",
		"threads": "2", "lease-ms": fmt.Sprint(jfleetLease.Milliseconds()), "wait-ms": "1000", "hold-ms": "1",
		"duration-ms": "600000"}
	for k, v := range f.java {
		flags[k] = v
	}
	j := startJavaAt(t, e, f.javaAddr, flags)
	stop := make(chan struct{})
	var goErrs atomic.Int64
	wg := topoGoFleet(ctx, t, e, ns, "go", 2, stop, &goErrs)
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			wg.Wait()
		}
	}()

	stages := []jfleetStage{
		{from: migrate.PhaseLegacy, to: migrate.PhaseDualWrite},
		{from: migrate.PhaseDualWrite, to: migrate.PhaseDualRead},
		{from: migrate.PhaseDualRead, to: migrate.PhaseModern},
	}
	for i, s := range stages {
		name := fmt.Sprintf("%v->%v", s.from, s.to)
		j0, g0, o0 := guardCounts(t, e)
		time.Sleep(jfleetSpan)
		if i == 1 {
			f.failover(t) // during dual-write, both keys written by every acquire
			time.Sleep(jfleetSpan)
			name += " (failover)"
		}
		step(ctx, t, ctl, s)
		time.Sleep(jfleetSpan)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			if jn, gn, _ := guardCounts(t, e); jn > j0 && gn > g0 {
				break
			}
			time.Sleep(200 * time.Millisecond) // a slow JVM (a loaded machine): until both sides acquired in this stage
		}
		j1, g1, o1 := guardCounts(t, e)
		t.Logf("%-36s java %5d  go %5d  overlaps %d", name, j1-j0, g1-g0, o1-o0)
		assert.Zero(t, o1-o0, "%s: overlaps", name)
		assert.Positive(t, j1-j0, "%s: the Java side acquired", name)
		assert.Positive(t, g1-g0, "%s: the Go side acquired", name)
		p, err := ctl.Phase(ctx)
		require.NoError(t, err)
		require.Equal(t, s.to, p)
	}
	j.send("stop")
	done := j.expect("done", time.Minute)
	close(stop)
	wg.Wait()
	stopped = true
	jt, gt, ot := guardCounts(t, e)
	unknown, failedJava := 0, 0
	for _, l := range strings.Split(j.Stderr(), "\n") {
		if strings.HasPrefix(l, "acquire: ") || strings.HasPrefix(l, "release: ") {
			failedJava++
			if strings.Contains(l, "UnknownOutcomeException") {
				unknown++
			}
		}
	}
	t.Logf("total: java %d (worker: %s; %d failed calls, %d of them unknown outcomes), go %d (%d failed calls), "+
		"overlaps %d",
		jt, done, failedJava, unknown, gt, goErrs.Load(), ot)
	assert.Zero(t, ot, "overlaps")
}
