package interop

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// TestFaultJavaSentinelReplacedMasterBack: the Sentinel-watched primary
// hangs (SIGSTOP) past down-after-milliseconds, Sentinel fails over to the
// replica, and the old primary comes back (SIGCONT) still a master in its
// own eyes until Sentinel demotes it (seconds later). Go's lockers
// (go-redis's failover client) dropped their connections to it on
// +switch-master and lock on the new master; lockbridge-java's connections
// pooled before the failover reached the old one and locked there too: two
// holders, counted by the guard. Now lockbridge-java retires them on the
// sentinels' events as well: 0 overlaps while the old primary is back.
func TestFaultJavaSentinelReplacedMasterBack(t *testing.T) {
	ctx := context.Background()
	f := sentinelFleet(t)
	sentinel := f.java["sentinels"]
	_, err := topoDo(ctx, sentinel, "SENTINEL", "SET", "mymaster", "down-after-milliseconds", "2000")
	require.NoError(t, err)
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
	_, _, before := guardCounts(t, e)
	require.Zero(t, before, "no overlap before the failover")

	old := f.addrs[0]
	v, err := topoDo(ctx, old, "INFO", "server")
	require.NoError(t, err)
	pid := infoField(t, v.(string), "process_id")
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	defer resume()
	topoEventually(t, "the sentinel names the replica", func() bool {
		a, err := topoDo(ctx, sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")
		r, _ := a.([]any)
		return err == nil && len(r) == 2 && net.JoinHostPort(r[0].(string), r[1].(string)) == f.promoted
	})
	resume()
	j0, g0, _ := guardCounts(t, e)
	// While the old primary is back and not yet demoted.
	deadline := time.Now().Add(6 * time.Second)
	stillMaster := 0
	for time.Now().Before(deadline) {
		r, err := topoDo(ctx, old, "ROLE")
		if rr, _ := r.([]any); err == nil && len(rr) > 0 && rr[0] == "master" {
			stillMaster++
		}
		time.Sleep(200 * time.Millisecond)
	}
	j.send("stop")
	j.expect("done", time.Minute)
	close(stop)
	wg.Wait()
	stopped = true
	jt, gt, overlaps := guardCounts(t, e)
	t.Logf("after the old primary came back: java %d, go %d acquisitions; overlaps %d; the old primary still a master "+
		"in %d of 30 looks; go failed calls %d",
		jt-j0, gt-g0, overlaps, stillMaster, goErrs.Load())
	assert.Positive(t, stillMaster, "the old primary was back as a master for a while (the window under test)")
	assert.Zero(t, overlaps, "overlaps: two holders, one on each master")
	assert.Greater(t, gt, g0, "the Go side acquired after the failover")
	assert.Greater(t, jt, j0, "the Java side acquired after the failover")
}

// infoField is the integer field name of an INFO reply.
func infoField(t *testing.T, info, name string) int {
	t.Helper()
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+":"); ok {
			n, err := strconv.Atoi(v)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in INFO", name)
	return 0
}
