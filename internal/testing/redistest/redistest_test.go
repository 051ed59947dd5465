package redistest

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"

	"github.com/stretchr/testify/require"
)

// do runs one command against addr.
func do(t *testing.T, addr string, args ...string) (any, error) {
	t.Helper()
	c, err := resp.Dial(addr, 2*time.Second)
	require.NoError(t, err)
	defer c.Close()
	return c.Do(args...)
}

func TestStartAnswersPing(t *testing.T) {
	t.Parallel()
	s := Start(t)
	require.Regexp(t, `^127\.0\.0\.1:\d+$`, s.Addr())
	require.Equal(t, "redis://"+s.Addr(), s.URL())
	require.NoError(t, ping(s.Addr(), time.Second))

	reply, err := do(t, s.Addr(), "SET", "k", "v")
	require.NoError(t, err)
	require.Equal(t, "OK", reply)
	reply, err = do(t, s.Addr(), "GET", "k")
	require.NoError(t, err)
	require.Equal(t, "v", reply)

	require.Contains(t, s.Log(), "Ready to accept connections")
}

func TestStartNGivesDistinctServers(t *testing.T) {
	t.Parallel()
	servers := StartN(t, 3)
	require.Len(t, servers, 3)
	seen := map[string]bool{}
	for i, s := range servers {
		require.False(t, seen[s.Addr()], "address %s handed out twice", s.Addr())
		seen[s.Addr()] = true
		require.NoError(t, ping(s.Addr(), time.Second))
		_, err := do(t, s.Addr(), "SET", "owner", fmt.Sprint(i))
		require.NoError(t, err)
	}
	for i, s := range servers {
		reply, err := do(t, s.Addr(), "GET", "owner")
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(i), reply, "servers must not share data")
	}
	require.Empty(t, StartN(t, 0))
}

func TestStopThenRestartOnSamePort(t *testing.T) {
	t.Parallel()
	s := Start(t)
	addr := s.Addr()
	_, err := do(t, addr, "SET", "k", "v")
	require.NoError(t, err)

	s.Stop()
	require.Error(t, ping(addr, 500*time.Millisecond))
	s.Stop() // idempotent

	s.Restart()
	require.Equal(t, addr, s.Addr())
	require.NoError(t, ping(addr, time.Second))
	reply, err := do(t, addr, "GET", "k")
	require.NoError(t, err)
	require.Nil(t, reply, "dataset must be empty after a restart")

	// The log covers both runs.
	require.Equal(t, 2, strings.Count(s.Log(), "Ready to accept connections"), s.Log())
}

func TestKillThenRestart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	addr := s.Addr()
	s.Kill()
	require.Error(t, ping(addr, 500*time.Millisecond))
	s.Kill() // idempotent
	s.Stop() // no-op after Kill

	// Restart of a running server restarts it.
	s.Restart()
	s.Restart()
	require.Equal(t, addr, s.Addr())
	require.NoError(t, ping(addr, time.Second))
}

func TestPauseAndResume(t *testing.T) {
	t.Parallel()
	s := Start(t)
	s.Pause()
	err := ping(s.Addr(), 300*time.Millisecond)
	require.Error(t, err)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "PING to a paused server must time out, got %v", err)

	s.Resume()
	require.NoError(t, ping(s.Addr(), 2*time.Second))
}

func TestStopPausedServer(t *testing.T) {
	t.Parallel()
	s := Start(t)
	s.Pause()
	start := time.Now()
	s.Stop()
	require.Less(t, time.Since(start), 4*time.Second, "Stop of a paused server must not need SIGKILL")
	require.Error(t, ping(s.Addr(), 300*time.Millisecond))
}

func TestStartCluster(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := StartCluster(t)
	t.Logf("StartCluster took %v", time.Since(start))

	addrs := c.Addrs()
	require.Len(t, addrs, 3)
	require.Len(t, c.Nodes(), 3)
	for i, n := range c.Nodes() {
		require.Equal(t, addrs[i], n.Addr())
	}

	for _, addr := range addrs {
		info, err := clusterInfo(addr, time.Second)
		require.NoError(t, err)
		require.Equal(t, "ok", info["cluster_state"], addr)
		require.Equal(t, "16384", info["cluster_slots_assigned"], addr)
		require.Equal(t, "16384", info["cluster_slots_ok"], addr)
		require.Equal(t, "3", info["cluster_known_nodes"], addr)
		require.Equal(t, "3", info["cluster_size"], addr)

		reply, err := do(t, addr, "CLUSTER", "NODES")
		require.NoError(t, err)
		nodes := strings.Split(strings.TrimSpace(reply.(string)), "\n")
		require.Len(t, nodes, 3)
		for _, line := range nodes {
			require.Contains(t, line, "master", line)
			require.NotContains(t, line, "fail", line)
		}
	}

	// Key "foo" hashes to slot 12182: node 2 serves it, the others redirect.
	for i, addr := range addrs {
		reply, err := do(t, addr, "SET", "foo", "bar")
		if i == 2 {
			require.NoError(t, err)
			require.Equal(t, "OK", reply)
			continue
		}
		require.Error(t, err)
		require.Equal(t, "MOVED 12182 "+addrs[2], err.Error())
	}
}

func TestSlotRanges(t *testing.T) {
	require.Equal(t, [][2]int{{0, 16383}}, slotRanges(1))
	require.Equal(t, [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}, slotRanges(3))
	for n := 1; n <= 16; n++ {
		rs := slotRanges(n)
		require.Len(t, rs, n)
		require.Equal(t, 0, rs[0][0])
		require.Equal(t, clusterSlots-1, rs[n-1][1])
		for i := 1; i < n; i++ {
			require.Equal(t, rs[i-1][1]+1, rs[i][0], "n=%d: ranges must follow each other", n)
			size := rs[i][1] - rs[i][0] + 1
			require.InDelta(t, float64(clusterSlots)/float64(n), size, 1, "n=%d, range %d", n, i)
		}
	}
}

func TestStartClusterN(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 6} {
		c := StartClusterN(t, n)
		require.Len(t, c.Addrs(), n)
		ranges := slotRanges(n)
		for i, addr := range c.Addrs() {
			info, err := clusterInfo(addr, time.Second)
			require.NoError(t, err)
			require.Equal(t, "ok", info["cluster_state"], addr)
			require.Equal(t, strconv.Itoa(n), info["cluster_size"], addr)
			reply, err := do(t, addr, "CLUSTER", "NODES")
			require.NoError(t, err)
			var mine string
			for _, line := range strings.Split(strings.TrimSpace(reply.(string)), "\n") {
				if strings.Contains(line, "myself") {
					mine = line
				}
			}
			want := fmt.Sprintf(" %d-%d", ranges[i][0], ranges[i][1])
			require.True(t, strings.HasSuffix(mine, want), "node %d must serve%s: %s", i, want, mine)
		}
	}
}

func TestClusterNodeRestartRejoins(t *testing.T) {
	t.Parallel()
	c := StartCluster(t)
	n := c.Nodes()[1]
	n.Kill()
	n.Restart()
	require.Eventually(t, func() bool {
		return c.checkInfo(map[string]string{
			"cluster_state":          "ok",
			"cluster_slots_assigned": "16384",
			"cluster_known_nodes":    "3",
		}) == nil
	}, 20*time.Second, 50*time.Millisecond)
}

// fatalRecorder is a testing.TB whose Fatalf records the message and ends the
// goroutine, as the real Fatalf does.
type fatalRecorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// fatalMessage runs fn in its own goroutine and returns what it passed to
// Fatalf ("" if nothing).
func fatalMessage(t *testing.T, fn func(tb testing.TB)) string {
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(rec)
	}()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.msg
}

func TestMissingServerFailsWithInstallHint(t *testing.T) {
	t.Setenv(envServerPath, "")
	t.Setenv("PATH", t.TempDir())
	msg := fatalMessage(t, func(tb testing.TB) { Start(tb) })
	require.Equal(t, `redis-server not found in PATH: install it with "sudo apt-get install -y redis-server" (Debian/Ubuntu) or "brew install redis" (macOS), or run "make test", whose scripts/setup.sh installs it`, msg)
	msg = fatalMessage(t, func(tb testing.TB) { StartN(tb, 2) })
	require.Contains(t, msg, "redis-server not found in PATH")
	msg = fatalMessage(t, func(tb testing.TB) { StartCluster(tb) })
	require.Contains(t, msg, "redis-server not found in PATH")
}

func TestServerPathFromEnvironment(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	require.NoError(t, err)

	t.Setenv(envServerPath, "/nonexistent/redis-server")
	msg := fatalMessage(t, func(tb testing.TB) { Start(tb) })
	require.Contains(t, msg, envServerPath)
	require.Contains(t, msg, "/nonexistent/redis-server")

	t.Setenv(envServerPath, bin)
	t.Setenv("PATH", t.TempDir())
	s := Start(t)
	require.NoError(t, ping(s.Addr(), time.Second))
}

func TestStartOnTakenPortFails(t *testing.T) {
	t.Parallel()
	s := Start(t)
	other := newServer(t, serverBinary(t), false)
	// The new process cannot bind; it must not mistake s for itself.
	_, err := other.startOnce(s.portNum())
	require.ErrorContains(t, err, "exited during startup")
	require.Contains(t, other.Log(), "Address already in use")
	require.NoError(t, ping(s.Addr(), time.Second))
}

func TestAddSlotsReportsBothErrors(t *testing.T) {
	t.Parallel()
	s := Start(t) // not cluster-enabled: both commands fail
	c, err := resp.Dial(s.Addr(), 2*time.Second)
	require.NoError(t, err)
	defer c.Close()
	err = addSlots(c, 0, 10)
	require.ErrorContains(t, err, "CLUSTER ADDSLOTSRANGE: ")
	require.ErrorContains(t, err, "CLUSTER ADDSLOTS: ")
	var re resp.Error
	require.ErrorAs(t, err, &re)
}

func TestReservePortGivesUsablePairs(t *testing.T) {
	t.Parallel()
	seen := map[int]bool{}
	for i := 0; i < 50; i++ {
		p, err := reservePort()
		require.NoError(t, err)
		require.GreaterOrEqual(t, p, portMin)
		require.Less(t, p+busPortOffset, 65536)
		require.False(t, seen[p] || seen[p+busPortOffset], "port %d reused", p)
		seen[p], seen[p+busPortOffset] = true, true
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	require.Equal(t, "b\nc", tail("a\nb\nc\n", 2))
	require.Equal(t, "a", tail("a", 5))
	require.Equal(t, "x", tail("x\n", 1))
}

func TestStandalone(t *testing.T) {
	srv, stop, err := Standalone()
	require.NoError(t, err)
	c, err := resp.Dial(srv.Addr(), 2*time.Second)
	require.NoError(t, err)
	reply, err := c.Do("PING")
	require.NoError(t, err)
	require.Equal(t, "PONG", reply)
	_ = c.Close()
	stop()
	_, err = resp.Dial(srv.Addr(), 200*time.Millisecond)
	require.Error(t, err, "stopped")
}

func TestStartSentinel(t *testing.T) {
	srv := Start(t)
	s := StartSentinel(t, srv.Addr(), "mymaster")
	c, err := resp.Dial(s.Addr(), 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	r, err := c.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")
	require.NoError(t, err)
	host, port, _ := net.SplitHostPort(srv.Addr())
	require.Equal(t, []any{host, port}, r)
}
