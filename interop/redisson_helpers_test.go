package interop

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/redisson"
)

// redissonWorker is one build of the Redisson worker (interop/java/redisson):
// on the newest Redisson 4.x and on the last 3.x.
type redissonWorker struct {
	module, file string // Maven module and jar name
	property     string // the pom property holding its Redisson version
	version      string // read from the pom by build
	jar          string // set by build
}

var redissonWorkers = []*redissonWorker{
	{module: "redisson", file: "lockbridge-interop-redisson.jar", property: "redisson.version"},
	{module: "redisson3", file: "lockbridge-interop-redisson3.jar", property: "redisson3.version"},
}

// readRedissonVersions reads the workers' Redisson versions from the
// parent pom, for the test names and logs.
func readRedissonVersions(pom string) error {
	b, err := os.ReadFile(pom)
	if err != nil {
		return err
	}
	for _, w := range redissonWorkers {
		m := regexp.MustCompile(`<` + regexp.QuoteMeta(w.property) + `>([^<]+)<`).FindSubmatch(b)
		if m == nil {
			return fmt.Errorf("%s: no <%s>", pom, w.property)
		}
		w.version = string(m[1])
	}
	return nil
}

func (w *redissonWorker) name() string { return "redisson-" + w.version }

// rdsEnv is where a Redisson test runs: the lock on a single server or on a
// 3-master cluster, the guard on a server of its own.
type rdsEnv struct {
	cluster bool
	lock    driver.Client        // lockbridge's client for the lock
	nodes   []*goredislib.Client // plain clients on every node of the lock's servers
	where   string               // the worker's flag: --redis=… or --cluster=…
	guard   *env                 // the guard's counters (its srv is unused)
}

func newRdsEnv(t *testing.T, cluster bool) *rdsEnv {
	t.Helper()
	r := &rdsEnv{cluster: cluster, guard: newEnv(t)}
	var addrs []string
	if cluster {
		cl := redistest.StartCluster(t)
		r.lock = locktest.GoRedisCluster(t, cl)
		addrs = cl.Addrs()
		r.where = "--cluster=" + strings.Join(addrs, ",")
	} else {
		r.lock = r.guard.lock // the guard env's first server holds the lock
		addrs = []string{r.guard.srv.Addr()}
		r.where = "--redis=" + addrs[0]
	}
	for _, a := range addrs {
		c := goredislib.NewClient(&goredislib.Options{Addr: a, MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		r.nodes = append(r.nodes, c)
	}
	return r
}

// subscribers counts the subscriptions to ch on every node: sharded ones
// in the cluster, plain ones on a single server.
func (r *rdsEnv) subscribers(t *testing.T, ch string) int64 {
	t.Helper()
	var n int64
	for _, c := range r.nodes {
		var m map[string]int64
		var err error
		if r.cluster {
			m, err = c.PubSubShardNumSub(context.Background(), ch).Result()
		} else {
			m, err = c.PubSubNumSub(context.Background(), ch).Result()
		}
		require.NoError(t, err)
		n += m[ch]
	}
	return n
}

// waitSubscribers waits until ch has exactly want subscribers (a hang is a
// failure after 20 s, not a timing assertion).
func (r *rdsEnv) waitSubscribers(t *testing.T, ch string, want int64) {
	t.Helper()
	require.Eventually(t, func() bool { return r.subscribers(t, ch) == want }, 20*time.Second, time.Millisecond,
		"%d subscribers on %s", want, ch)
}

// startRedisson starts w in mode commands on lock name and returns it and
// its client id.
func startRedisson(t *testing.T, w *redissonWorker, r *rdsEnv, flags javaFlags) (*java, string) {
	t.Helper()
	flags["mode"] = "commands"
	j := startJVM(t, w.jar, flags, r.where)
	return j, j.expect("ready", 60*time.Second)
}

// javaLocked reads a "locked <µs> <field> <holds>[ <token>]" line.
func javaLocked(t *testing.T, j *java, d time.Duration) (at time.Time, field string, holds int) {
	t.Helper()
	f := strings.Fields(j.expect("locked", d))
	require.GreaterOrEqual(t, len(f), 3)
	us, err := strconv.ParseInt(f[0], 10, 64)
	require.NoError(t, err)
	holds, err = strconv.Atoi(f[2])
	require.NoError(t, err)
	return time.UnixMicro(us), f[1], holds
}

// javaUnlocked reads an "unlocked <µs>" line.
func javaUnlocked(t *testing.T, j *java, d time.Duration) time.Time {
	t.Helper()
	us, err := strconv.ParseInt(j.expect("unlocked", d), 10, 64)
	require.NoError(t, err)
	return time.UnixMicro(us)
}

// recv returns the next message of sub (a hang is a failure after 10 s).
func recv(t *testing.T, sub driver.Subscription) driver.Message {
	t.Helper()
	select {
	case m := <-sub.Messages():
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
	}
	return driver.Message{}
}

// percentiles returns the p50 and p99 of ds (nearest rank).
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return at(0.50), at(0.99)
}

// The Go holder process: TestMain runs goHolderMain instead of the tests
// when goHolderEnv is set ("<addr> <lock name> <ttl ms>"). It takes the lock
// with the watchdog, prints "held <field>", and holds until killed: a Go
// service the test can SIGKILL.
const goHolderEnv = "LOCKBRIDGE_INTEROP_GO_HOLDER"

func goHolderMain() int {
	f := strings.Fields(os.Getenv(goHolderEnv))
	ms, _ := strconv.Atoi(f[2])
	rdb := goredislib.NewClient(&goredislib.Options{Addr: f[0], MaxRetries: -1})
	o := redisson.New(goredis.New(rdb), redisson.WithWatchdog()).NewOwner()
	lk, err := o.Lock(context.Background(), f[1], time.Duration(ms)*time.Millisecond)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("held", o.Field())
	<-lk.Done()
	fmt.Println("lost", lk.Err())
	return 1
}

// goHolder is a running Go holder process.
type goHolder struct {
	cmd   *exec.Cmd
	field string
	done  chan struct{}
}

func startGoHolder(t *testing.T, addr, name string, ttl time.Duration) *goHolder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d", goHolderEnv, addr, name, ttl.Milliseconds()))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	h := &goHolder{cmd: cmd, done: make(chan struct{})}
	lines := bufio.NewScanner(out)
	go func() { _ = cmd.Wait(); close(h.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-h.done })
	require.True(t, lines.Scan(), "the Go holder said nothing")
	f := strings.Fields(lines.Text())
	require.Equal(t, "held", f[0], lines.Text())
	h.field = f[1]
	return h
}

// kill SIGKILLs the holder: a crashed Go service.
func (h *goHolder) kill(t *testing.T) {
	require.NoError(t, h.cmd.Process.Signal(syscall.SIGKILL))
	<-h.done
}
