package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// The Spring Boot test applications (java/spring/boot3-app on Boot 3.5,
// java/spring/boot4-app on Boot 4.0) run as processes in the interop fleet:
// each an executable jar started with java -jar and configured by
// properties on its command line (spring.data.redis.*, lockbridge.*, and
// the fleet driver's fleet.*). The driver (java/spring/fleet, Fleet.java)
// locks through the application's own beans on commands from stdin and
// answers on stdout; its critical sections are counted by the guard on the
// env's second redis-server, as the worker's and the Go lockers' are.

// springBuild is the one Maven build of the applications per test run.
var springBuild struct {
	once sync.Once
	jars map[string]string // by line: boot3, boot4
	err  error
}

// springJars builds the two applications' executable jars (and the
// modules they are made of) once per run with Maven, without their tests
// (make java-spring runs those). lockbridge-java is in the local Maven
// repository: TestMain installed it.
func springJars(t *testing.T) map[string]string {
	t.Helper()
	springBuild.once.Do(func() {
		start := time.Now()
		defer func() { t.Logf("mvn built the Spring applications in %v", time.Since(start).Round(time.Millisecond)) }()
		dir, err := filepath.Abs(filepath.Join("..", "java", "spring"))
		if err != nil {
			springBuild.err = err
			return
		}
		// An application jar left by an earlier build would be kept as it
		// is, with the lockbridge-java it was packaged with: removed first.
		for _, line := range []string{"boot3", "boot4"} {
			jar := filepath.Join(dir, line+"-app", "target", "lockbridge-spring-"+line+"-app.jar")
			for _, f := range []string{jar, jar + ".original"} {
				if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
					springBuild.err = err
					return
				}
			}
		}
		args := []string{"-q", "-B", "-Dmaven.test.skip=true", "-pl", "boot3-app,boot4-app", "-am", "package"}
		cmd := exec.Command("mvn", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			springBuild.err = fmt.Errorf("mvn %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
			return
		}
		springBuild.jars = map[string]string{}
		for _, line := range []string{"boot3", "boot4"} {
			jar := filepath.Join(dir, line+"-app", "target", "lockbridge-spring-"+line+"-app.jar")
			if _, err := os.Stat(jar); err != nil {
				springBuild.err = fmt.Errorf("mvn built no application jar: %v", err)
				return
			}
			springBuild.jars[line] = jar
		}
	})
	require.NoError(t, springBuild.err)
	return springBuild.jars
}

// springApp is one application process: the fleet driver's lines (those
// its stdout starts with "fleet "), the rest of stdout (the application's
// log, shown when the test fails), and its HTTP port on loopback.
type springApp struct {
	*java
	id      string
	port    int
	started time.Time

	mu     sync.Mutex
	cond   *sync.Cond
	fleet  []string // driver lines not yet awaited
	log    strings.Builder
	exited bool
}

// startSpringApp starts the application jar as fleet member id on e's lock
// server, with its fleet driver reporting to e's guard, plus props; it
// returns at once (await "ready" with ready).
func startSpringApp(t *testing.T, e *env, jar, id string, props javaFlags) *springApp {
	t.Helper()
	_, port, err := net.SplitHostPort(e.srv.Addr())
	require.NoError(t, err)
	flags := javaFlags{
		"spring.data.redis.host": "127.0.0.1", "spring.data.redis.port": port,
		"server.address": "127.0.0.1", "server.port": "0", "spring.main.banner-mode": "off",
		"fleet.guard": e.guardSrv.Addr(), "fleet.id": id,
	}
	for k, v := range props {
		flags[k] = v
	}
	a := &springApp{java: startJVM(t, jar, flags), id: id, started: time.Now()}
	a.cond = sync.NewCond(&a.mu)
	go a.route()
	t.Cleanup(func() {
		if t.Failed() {
			a.mu.Lock()
			t.Logf("%s stdout:\n%s", id, a.log.String())
			a.mu.Unlock()
		}
	})
	return a
}

// route sorts the process's stdout: driver lines to fleet, the rest to log.
func (a *springApp) route() {
	for l := range a.lines {
		a.mu.Lock()
		if rest, ok := strings.CutPrefix(l, "fleet "); ok {
			a.fleet = append(a.fleet, rest)
		} else {
			a.log.WriteString(l + "\n")
		}
		a.cond.Broadcast()
		a.mu.Unlock()
	}
	a.mu.Lock()
	a.exited = true
	a.cond.Broadcast()
	a.mu.Unlock()
}

// ready waits for the driver's "ready <port>" (the application started,
// its web server listening).
func (a *springApp) ready() {
	a.t.Helper()
	p, err := strconv.Atoi(a.await("ready", 3*time.Minute))
	require.NoError(a.t, err)
	a.port = p
	a.t.Logf("%s ready in %v", a.id, time.Since(a.started).Round(time.Millisecond))
}

// await returns the rest of the first driver line that starts with prefix
// (removing it; other lines stay for their own await); it fails the test
// when none comes within d (a hung process; not a timing assertion), or
// when the driver reports a failure.
func (a *springApp) await(prefix string, d time.Duration) string {
	a.t.Helper()
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() { a.mu.Lock(); a.cond.Broadcast(); a.mu.Unlock() })
	defer timer.Stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		for i, l := range a.fleet {
			if strings.HasPrefix(l, "failed ") || strings.HasPrefix(l, "error ") {
				a.t.Fatalf("%s: %s", a.id, l)
			}
			if l == prefix || strings.HasPrefix(l, prefix+" ") {
				a.fleet = append(a.fleet[:i], a.fleet[i+1:]...)
				return strings.TrimSpace(strings.TrimPrefix(l, prefix))
			}
		}
		if a.exited {
			a.t.Fatalf("%s exited waiting for %q; stderr:\n%s", a.id, prefix, a.Stderr())
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%s said no %q in %v; driver lines %q", a.id, prefix, d, a.fleet)
		}
		a.cond.Wait()
	}
}

// get reads an Actuator endpoint over HTTP on loopback and decodes its JSON.
func (a *springApp) get(path string) map[string]any {
	a.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", a.port, path))
	require.NoError(a.t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(a.t, http.StatusOK, resp.StatusCode, "GET %s", path)
	var v map[string]any
	require.NoError(a.t, json.NewDecoder(resp.Body).Decode(&v), "GET %s", path)
	return v
}

// metric reads one statistic (COUNT, VALUE) of a Micrometer meter from
// /actuator/metrics, with tags as name:value.
func (a *springApp) metric(name, statistic string, tags ...string) float64 {
	a.t.Helper()
	path := "/actuator/metrics/" + name
	for i, tag := range tags {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		path += sep + "tag=" + tag
	}
	v := a.get(path)
	ms, _ := v["measurements"].([]any)
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		if mm["statistic"] == statistic {
			f, _ := mm["value"].(float64)
			return f
		}
	}
	a.t.Fatalf("%s: no %s in %s: %v", a.id, statistic, path, v)
	return 0
}

// guardSum sums the guard's counters scope+"acq:"+prefix*.
func guardSum(t *testing.T, e *env, scope, prefix string) int64 {
	t.Helper()
	keys, err := e.guard.Keys(context.Background(), scope+"acq:"+prefix+"*").Result()
	require.NoError(t, err)
	var n int64
	for _, k := range keys {
		n += e.counter(t, k)
	}
	return n
}

// springLines are the Boot lines whose applications the fleet tests run.
var springLines = []string{"boot3", "boot4"}

// probePhase checks what application a shows over HTTP in phase p: its
// lockbridge health (UP, the phase followed, the phase lease running, locks
// held: 0, then 1 while its driver holds a lock, which is on the keys p
// writes), its info entry and its phase gauge; it returns the locks it
// obtained so far by its acquire timer.
func probePhase(t *testing.T, e *env, a *springApp, p string, gauge float64) (obtained float64) {
	t.Helper()
	health := func() map[string]any {
		h := a.get("/actuator/health/lockbridge")
		require.Equal(t, "UP", h["status"], "%s health: %v", a.id, h)
		d, _ := h["details"].(map[string]any)
		require.Equal(t, p, d["phase"], "%s health: %v", a.id, h)
		require.Positive(t, d["phaseLeaseLeftMillis"], "%s health: %v", a.id, h)
		return d
	}
	require.EqualValues(t, 0, health()["locksHeld"], a.id)
	key := "probe-" + a.id
	a.send("hold locks " + key + " 10000")
	a.await("held locks "+key, time.Minute)
	require.EqualValues(t, 1, health()["locksHeld"], "%s: the lock its driver holds", a.id)
	legacy, err := e.raw.Exists(context.Background(), key).Result()
	require.NoError(t, err)
	modern, err := e.raw.Exists(context.Background(), "{"+key+"}:modern").Result()
	require.NoError(t, err)
	want := map[string][2]int64{"legacy": {1, 0}, "dual-write": {1, 1}, "dual-read": {0, 1}, "modern": {0, 1}}[p]
	require.Equal(t, want, [2]int64{legacy, modern}, "%s at %s: the keys of its lock (legacy, modern)", a.id, p)
	a.send("release locks " + key)
	a.await("released locks "+key, time.Minute)
	require.EqualValues(t, 0, health()["locksHeld"], a.id)

	info, _ := a.get("/actuator/info")["lockbridge"].(map[string]any)
	require.Equal(t, p, info["phase"], "%s info: %v", a.id, info)
	require.Equal(t, "migrate", info["mode"], "%s info: %v", a.id, info)
	require.Equal(t, gauge, a.metric("lockbridge.migrate.phase", "VALUE"), "%s phase gauge", a.id)
	return a.metric("lockbridge.lock.acquire.duration", "COUNT", "lockbridge.lock.outcome:obtained")
}

// TestInteropSpringBootMigrates: the Boot 3.5 and the Boot 4.0 application,
// each a process started with the starter and a few properties, migrate
// beside Go followers: their Locks (lockbridge.namespace followed) and two
// Go migrate.Lockers contend for one lock while control.Controller steps
// legacy → dual-write → dual-read → modern. 0 overlaps by the guard; every
// side acquires in every stage; the controller counts each application
// (its registry entry, by its PID) at the phase; and in each phase each
// application's Actuator health, info and metrics, read over HTTP, show
// the phase followed and the locks held.
func TestInteropSpringBootMigrates(t *testing.T) {
	jars := springJars(t)
	e := newEnv(t)
	ctx := context.Background()
	ns := "sfleet"
	ctl := jfleetController(t, e, ns)
	// A phase lease of 2 s (10 intervals, not the default 3): a JVM stalled
	// on a loaded machine stays live for the controller.
	props := javaFlags{"lockbridge.namespace": ns,
		"lockbridge.phase-interval": fmt.Sprint(jfleetInterval.Milliseconds()) + "ms",
		"lockbridge.phase-lease":    "2s", "app.lock-lease": fmt.Sprint(jfleetLease.Milliseconds()) + "ms"}
	var apps []*springApp
	for _, line := range springLines {
		apps = append(apps, startSpringApp(t, e, jars[line], line, props))
	}
	for _, a := range apps {
		a.ready()
	}
	gauges := map[string]float64{"legacy": 1, "dual-write": 2, "dual-read": 3, "modern": 4}
	obtained := map[string]float64{}
	for _, a := range apps {
		obtained[a.id] = probePhase(t, e, a, "legacy", gauges["legacy"])
	}

	stop := make(chan struct{})
	wg := goFleet(ctx, t, e, ns, "go", 2, stop)
	defer func() { close(stop); wg.Wait() }()
	for _, s := range []jfleetStage{
		{from: migrate.PhaseLegacy, to: migrate.PhaseDualWrite},
		{from: migrate.PhaseDualWrite, to: migrate.PhaseDualRead},
		{from: migrate.PhaseDualRead, to: migrate.PhaseModern},
	} {
		name := fmt.Sprintf("%v->%v", s.from, s.to)
		before := map[string]int64{"go": guardSum(t, e, "", "go")}
		for _, a := range apps {
			before[a.id] = guardSum(t, e, "", a.id)
			a.send("contend locks " + lockName + " 2 1 -")
			a.await("contending locks", time.Minute)
		}
		o0 := e.counter(t, "cs:overlaps")
		time.Sleep(jfleetSpan)
		springMembers(t, ctl, apps, s.from)
		step(ctx, t, ctl, s)
		time.Sleep(jfleetSpan)

		line := fmt.Sprintf("%-22s", name)
		for _, a := range apps {
			a.send("stop locks")
			done := strings.Fields(a.await("done locks", time.Minute))
			n := guardSum(t, e, "", a.id) - before[a.id]
			require.Equal(t, done[0], fmt.Sprint(n), "%s: the driver's count is the guard's", a.id)
			require.Positive(t, n, "%s: %s acquired", name, a.id)
			line += fmt.Sprintf("  %s %5d", a.id, n)
		}
		g := guardSum(t, e, "", "go") - before["go"]
		require.Positive(t, g, "%s: the Go side acquired", name)
		o := e.counter(t, "cs:overlaps") - o0
		line += fmt.Sprintf("  go %5d  overlaps %d", g, o)
		t.Log(line)
		require.Zero(t, o, "%s: overlaps", name)
		for _, a := range apps {
			n := probePhase(t, e, a, s.to.String(), gauges[s.to.String()])
			require.Greater(t, n, obtained[a.id], "%s: its acquire timer counted the stage's locks", a.id)
			obtained[a.id] = n
		}
	}
}

// springMembers checks that the controller counts each application once,
// by its process id, live at phase p, and that this is the registry entry
// its info shows.
func springMembers(t *testing.T, ctl *control.Controller, apps []*springApp, p migrate.Phase) {
	t.Helper()
	st, err := ctl.Status(context.Background())
	require.NoError(t, err)
	for _, a := range apps {
		info, _ := a.get("/actuator/info")["lockbridge"].(map[string]any)
		found := 0
		for _, m := range st.Members {
			if m.PID == a.cmd.Process.Pid {
				require.NoError(t, m.Invalid, "the controller parses %s's entry %+v", a.id, m)
				require.True(t, m.Live, "%s: %+v", a.id, m)
				require.Equal(t, p, m.Phase, "%s runs the fleet's phase: %+v", a.id, m)
				require.Equal(t, info["clientId"], m.ID, "%s: the entry its info shows", a.id)
				found++
			}
		}
		require.Equal(t, 1, found, "the controller counts %s once", a.id)
	}
}

// springLease is the lease of the rolling-deploy fleet's locks: the
// registries' expireAfter (app.lock-lease) and ShedLock's lockAtMostFor.
const springLease = 2 * time.Second

// springTakeoverMargin: a taker may get the lock this much before the
// holder's "held" line's time plus the lease — the key's PX runs from the
// holder's SET, which comes before that line. Both times are this host's
// clock.
const springTakeoverMargin = 150 * time.Millisecond

// TestInteropSpringRollingDeploy: a rolling deploy of the test application
// that moves its Spring Integration LockRegistry and its ShedLock
// LockProvider to lockbridge by one bean each, on each Boot line: two
// instances still on the previous release (app.locks=framework:
// RedisLockRegistry, ShedLock's RedisLockProvider) and one on this release
// (LockbridgeLockRegistry, LockbridgeLockProvider), each a process, contend
// for one registry lock and one ShedLock job — 0 overlaps by the guard,
// both releases acquiring — and a holder of each release is killed with
// SIGKILL holding both: an instance of the other release takes each lock
// over once its lease has run out, not before.
func TestInteropSpringRollingDeploy(t *testing.T) {
	jars := springJars(t)
	for _, line := range springLines {
		line := line
		t.Run(line, func(t *testing.T) {
			springRollingDeploy(t, jars[line], line)
		})
	}
}

func springRollingDeploy(t *testing.T, jar, line string) {
	e := newEnv(t)
	lease := javaFlags{"app.lock-lease": fmt.Sprint(springLease.Milliseconds()) + "ms"}
	start := func(id, locks string) *springApp {
		p := javaFlags{"app.locks": locks}
		for k, v := range lease {
			p[k] = v
		}
		return startSpringApp(t, e, jar, line+"-"+id, p)
	}
	oldA, oldB, neu := start("old-a", "framework"), start("old-b", "framework"), start("new", "lockbridge")
	all := []*springApp{oldA, oldB, neu}
	for _, a := range all {
		a.ready()
	}

	// Both releases contend for the registry lock and the ShedLock job.
	ways := []string{"registry", "shedlock"}
	for _, a := range all {
		for _, w := range ways {
			a.send(fmt.Sprintf("contend %s shared 2 1 %s:", w, w))
			a.await("contending "+w, time.Minute)
		}
	}
	time.Sleep(3 * time.Second)
	for _, a := range all {
		for _, w := range ways {
			a.send("stop " + w)
		}
	}
	for _, w := range ways {
		var old, neuN int64
		for _, a := range all {
			n, err := strconv.ParseInt(strings.Fields(a.await("done "+w, time.Minute))[0], 10, 64)
			require.NoError(t, err)
			require.Equal(t, guardSum(t, e, w+":", a.id), n, "%s: the driver's count is the guard's", a.id)
			if a == neu {
				neuN += n
			} else {
				old += n
			}
		}
		o := e.counter(t, w+":cs:overlaps")
		t.Logf("%s %s: previous release %d, lockbridge %d, overlaps %d", line, w, old, neuN, o)
		require.Zero(t, o, "%s: overlaps", w)
		require.Positive(t, old, "%s: the previous release's instances acquired", w)
		require.Positive(t, neuN, "%s: the lockbridge instance acquired", w)
	}

	// Crashes: the previous release's holder, then lockbridge's.
	springCrash(t, e, oldA, neu, ways, "crash-old")
	springCrash(t, e, neu, oldB, ways, "crash-new")
}

// springCrash: holder takes key by every way, the taker starts waiting for
// them (refused while the holder lives), the holder is killed with
// SIGKILL; the taker gets each lock once the lease has run out from the
// holder's acquisition, not before.
func springCrash(t *testing.T, e *env, holder, taker *springApp, ways []string, key string) {
	t.Helper()
	held := map[string]int64{}
	for _, w := range ways {
		holder.send(fmt.Sprintf("hold %s %s 10000", w, key))
		ms, err := strconv.ParseInt(holder.await(fmt.Sprintf("held %s %s", w, key), time.Minute), 10, 64)
		require.NoError(t, err)
		held[w] = ms
	}
	for w, k := range map[string]string{"registry": "locks:" + key, "shedlock": "job-lock:default:" + key} {
		pttl, err := e.raw.PTTL(context.Background(), k).Result()
		require.NoError(t, err)
		require.True(t, pttl > 0 && pttl <= springLease, "%s: %s stands with a lease, PTTL %v", w, k, pttl)
	}
	for _, w := range ways {
		taker.send(fmt.Sprintf("take %s %s %d", w, key, (4 * springLease).Milliseconds()))
	}
	holder.kill()
	for _, w := range ways {
		f := strings.Fields(taker.await(fmt.Sprintf("took %s %s", w, key), time.Minute))
		at, err := strconv.ParseInt(f[0], 10, 64)
		require.NoError(t, err)
		waited, err := strconv.ParseInt(f[1], 10, 64)
		require.NoError(t, err)
		after := time.Duration(at-held[w]) * time.Millisecond
		t.Logf("%s killed holding %s %s: %s took it %v after the holder's acquisition (lease %v), having waited %d ms",
			holder.id, w, key, taker.id, after, springLease, waited)
		require.GreaterOrEqual(t, after, springLease-springTakeoverMargin, "%s: not before the lease ran out", w)
		require.Less(t, time.Duration(at-waited-held[w])*time.Millisecond, springLease-springTakeoverMargin,
			"%s: the taker was refused while the lease ran (it began waiting before the lease ran out)", w)
	}
}
