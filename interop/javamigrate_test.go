package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// The mixed Go/Java fleet: Go migrate.Lockers and lockbridge-java's
// MigrateLocker (in the worker's JVM) follow one namespace on one
// redis-server while control.Controller moves it one step at a time.

const (
	jfleetInterval = 200 * time.Millisecond // the phase interval of every locker
	jfleetLease    = 5 * time.Second        // the locks' lease: longer than a JVM stall on a loaded machine
	jfleetSpan     = 2 * time.Second        // contention before and after each step
)

// jfleetStage is one rolling deploy: the fleet is redeployed (a new JVM,
// new Go lockers), contends, and the controller takes one step.
type jfleetStage struct {
	from, to migrate.Phase
	rollback bool
}

// jfleetCount is what the guard counted during one stage.
type jfleetCount struct {
	javaAcq, goAcq, overlaps int64
	javaMembers              int
}

// guardCounts sums the guard's acq:java* and acq:go* counters and reads the
// overlap counter.
func guardCounts(t *testing.T, e *env) (javaAcq, goAcq, overlaps int64) {
	t.Helper()
	keys, err := e.guard.Keys(context.Background(), "acq:*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		if strings.HasPrefix(k, "acq:java") {
			javaAcq += e.counter(t, k)
		} else {
			goAcq += e.counter(t, k)
		}
	}
	return javaAcq, goAcq, e.counter(t, "cs:overlaps")
}

// goFleet runs n Go workers, each with its own following Locker, until
// stop is closed; the Lockers close (leaving the registry) before it
// returns.
func goFleet(ctx context.Context, t *testing.T, e *env, ns, prefix string, n int,
	stop <-chan struct{}) *sync.WaitGroup {
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
					if errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, migrate.ErrPhaseUnknown) ||
						errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil { // (the wait's deadline)
						continue
					}
					t.Errorf("%s: %v", id, err)
					return
				}
				if err := e.enter(ctx, id); err != nil {
					t.Errorf("%s: guard: %v", id, err)
				}
				time.Sleep(time.Millisecond)
				if err := e.exit(context.Background()); err != nil {
					t.Errorf("%s: guard: %v", id, err)
				}
				if err := l.Unlock(context.Background()); err != nil && !errors.Is(err, lockbridge.ErrNotHeld) {
					t.Errorf("%s: unlock: %v", id, err)
				}
			}
		}(fmt.Sprintf("%s-%d", prefix, i))
	}
	return &wg
}

// step takes one step of the controller, retrying while it is refused
// (the fleet's lockers are still moving, say); it fails the test with the
// blockers after a minute.
func step(ctx context.Context, t *testing.T, ctl *control.Controller, s jfleetStage) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var err error
		if s.rollback {
			_, err = ctl.Rollback(ctx, false)
		} else {
			_, err = ctl.Advance(ctx, false)
		}
		if err == nil {
			return
		}
		if !errors.Is(err, control.ErrUnsafeStep) || time.Now().After(deadline) {
			st, _ := ctl.Status(ctx)
			t.Fatalf("step %v -> %v: %v; blockers %v", s.from, s.to, err, st.Blockers)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestInteropJavaMigrates: a fleet of Go and Java MigrateLockers on one
// lock, moved by control.Controller through every phase and back one step,
// each stage a rolling redeploy of both languages: 0 overlaps, counted by
// the guard on a second redis-server; both languages acquire in every
// stage; the controller parses the Java registry entries and counts them.
func TestInteropJavaMigrates(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ns := "jfleet"
	ctl, err := control.New(e.lock, ns, control.WithQuietPeriod(time.Second),
		control.WithLivenessMargin(500*time.Millisecond), control.WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	_, err = ctl.Init(ctx, false)
	require.NoError(t, err)

	stages := []jfleetStage{
		{from: migrate.PhaseLegacy, to: migrate.PhaseDualWrite},
		{from: migrate.PhaseDualWrite, to: migrate.PhaseDualRead},
		{from: migrate.PhaseDualRead, to: migrate.PhaseModern},
		{from: migrate.PhaseModern, to: migrate.PhaseDualRead, rollback: true},
		{from: migrate.PhaseDualRead, to: migrate.PhaseModern},
	}
	var report []string
	for i, s := range stages {
		name := fmt.Sprintf("%v->%v", s.from, s.to)
		j0, g0, o0 := guardCounts(t, e)
		// Redeploy: a new JVM and new Go lockers, following the namespace.
		j := startJava(t, e, javaFlags{"mode": "contend", "locker": "lockbridge-migrate", "namespace": ns,
			"interval-ms": fmt.Sprint(jfleetInterval.Milliseconds()), "name": lockName, "id": fmt.Sprintf("java-s%d", i),
			"threads": "2", "lease-ms": fmt.Sprint(jfleetLease.Milliseconds()), "wait-ms": "1000", "hold-ms": "1",
			"duration-ms": "120000"})
		stop := make(chan struct{})
		wg := goFleet(ctx, t, e, ns, fmt.Sprintf("go-s%d", i), 2, stop)

		time.Sleep(jfleetSpan)
		st, err := ctl.Status(ctx)
		require.NoError(t, err)
		javaMembers := 0
		for _, m := range st.Members {
			if m.PID != os.Getpid() && m.Live {
				require.NoError(t, m.Invalid, "the controller parses the Java entry %+v", m)
				assert.Equal(t, s.from, m.Phase, "the Java client runs the fleet's phase: %+v", m)
				host, _ := os.Hostname()
				assert.Equal(t, host, m.Host, "the host name as Go reads it")
				javaMembers++
			}
		}
		assert.Equal(t, 2, javaMembers, "the controller counts both Java clients (one per worker thread)")
		step(ctx, t, ctl, s)
		time.Sleep(jfleetSpan)

		j.send("stop")
		done := j.expect("done", time.Minute)
		close(stop)
		wg.Wait()
		j1, g1, o1 := guardCounts(t, e)
		c := jfleetCount{javaAcq: j1 - j0, goAcq: g1 - g0, overlaps: o1 - o0, javaMembers: javaMembers}
		line := fmt.Sprintf("%-22s java %5d  go %5d  overlaps %d", name, c.javaAcq, c.goAcq, c.overlaps)
		report = append(report, line)
		t.Log(line, "(worker:", done+")")
		assert.Zero(t, c.overlaps, "%s: overlaps", name)
		assert.Positive(t, c.javaAcq, "%s: the Java side acquired", name)
		assert.Positive(t, c.goAcq, "%s: the Go side acquired", name)
		p, err := ctl.Phase(ctx)
		require.NoError(t, err)
		require.Equal(t, s.to, p)
	}
	if path := os.Getenv("LOCKBRIDGE_JAVA_FLEET_REPORT"); path != "" {
		require.NoError(t, os.WriteFile(filepath.Clean(path), []byte(strings.Join(report, "\n")+"\n"), 0o644))
	}
}

// scriptSHA1 returns the SHA1 of a script from the golden vectors.
func scriptSHA1(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "scripts.json"))
	require.NoError(t, err)
	var v struct {
		Scripts []struct{ Name, SHA1 string }
	}
	require.NoError(t, json.Unmarshal(b, &v))
	for _, s := range v.Scripts {
		if s.Name == name {
			return s.SHA1
		}
	}
	t.Fatalf("no script %s in the vectors", name)
	return ""
}

// scriptSource assembles a script from the repository's files by the rule
// of the golden vectors (fragments, each followed by a newline, then the
// body).
func scriptSource(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "scripts.json"))
	require.NoError(t, err)
	var v struct {
		Scripts []struct {
			Name      string
			Fragments []string
			Body      string
		}
	}
	require.NoError(t, json.Unmarshal(b, &v))
	for _, s := range v.Scripts {
		if s.Name != name {
			continue
		}
		var src strings.Builder
		for _, f := range s.Fragments {
			fb, err := os.ReadFile(filepath.Join("..", f))
			require.NoError(t, err)
			src.Write(fb)
			src.WriteByte('\n')
		}
		bb, err := os.ReadFile(filepath.Join("..", s.Body))
		require.NoError(t, err)
		src.Write(bb)
		return src.String()
	}
	t.Fatalf("no script %s in the vectors", name)
	return ""
}

// TestFaultJavaReleaseReplyDropped: lockbridge-java's dual-write release
// runs on the server but its reply is dropped and the connection closed.
// The Java side reports an UnknownOutcomeException and never sends the
// release again — a replayed owner-window release would delete the
// successor's lock, which a Go locker takes right after.
func TestFaultJavaReleaseReplyDropped(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := faultproxy.Start(t, e.srv.Addr())
	sha := scriptSHA1(t, "migrate/scripts/release.lua")
	// Loaded beforehand, so the Java release is one EVALSHA that runs.
	got, err := e.raw.ScriptLoad(ctx, scriptSource(t, "migrate/scripts/release.lua")).Result()
	require.NoError(t, err)
	require.Equal(t, sha, got)
	release := func(w []string) bool {
		return len(w) > 1 && ((strings.EqualFold(w[0], "EVALSHA") && w[1] == sha) ||
			(strings.EqualFold(w[0], "EVAL") && strings.Contains(w[1], "-- migrate/scripts/release.lua:")))
	}
	sent := p.Count(release)

	j := startJavaAt(t, e, p.Addr(), javaFlags{"mode": "once", "locker": "lockbridge-migrate", "phase": "dual-write",
		"name": lockName, "lease-ms": "10000", "wait-ms": "5000"})
	j.expect("acquired", 30*time.Second)
	p.DropReply(release, 1, faultproxy.Close)
	j.send("release")
	line := j.expect("release-error", 30*time.Second)
	assert.Contains(t, line, "UnknownOutcomeException")
	assert.Equal(t, 1, p.Dropped())
	n, err := e.raw.Exists(ctx, lockName, "{"+lockName+"}:modern").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the release ran: both keys are gone")

	// A successor takes the lock at once.
	succ, err := migrate.New(e.lock, migrate.WithPhase(migrate.PhaseDualWrite)).TryLock(ctx, lockName, 10*time.Second)
	require.NoError(t, err)
	// Give a replaying client every chance: the worker's JVM stays up.
	time.Sleep(time.Second)
	assert.Equal(t, 1, sent(), "the release was sent once")
	require.NoError(t, succ.Unlock(ctx), "the successor's lock was never touched")
}

// jfleetController initialises namespace ns and returns its controller,
// with a short quiet period and liveness margin for the test.
func jfleetController(t *testing.T, e *env, ns string) *control.Controller {
	t.Helper()
	ctl, err := control.New(e.lock, ns, control.WithQuietPeriod(time.Second),
		control.WithLivenessMargin(500*time.Millisecond), control.WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	_, err = ctl.Init(context.Background(), false)
	require.NoError(t, err)
	return ctl
}

// TestInteropJavaKilledMidHold: a lockbridge-java follower SIGKILLed while
// it holds a dual-write lock: a Go follower cannot take the lock while the
// dead holder's keys stand, and takes it once they expire.
func TestInteropJavaKilledMidHold(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ns := "jkill"
	ctl := jfleetController(t, e, ns)
	step(ctx, t, ctl, jfleetStage{from: migrate.PhaseLegacy, to: migrate.PhaseDualWrite})

	j := startJava(t, e, javaFlags{"mode": "once", "locker": "lockbridge-migrate", "namespace": ns,
		"interval-ms": fmt.Sprint(jfleetInterval.Milliseconds()), "name": lockName, "lease-ms": "3000", "wait-ms": "5000"})
	j.expect("acquired", 30*time.Second)
	time.Sleep(3 * jfleetInterval) // a heartbeat reports the held lock
	j.kill()

	lk := migrate.New(e.lock, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(jfleetInterval))
	defer func() { _ = lk.Close(ctx) }()
	_, err := lk.TryLock(ctx, lockName, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "the dead holder's lock stands")
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	dead := 0
	for _, m := range st.Members {
		if m.PID != os.Getpid() {
			require.NoError(t, m.Invalid)
			assert.True(t, m.Live, "the killed client is counted until its hold passes: %+v", m)
			assert.Equal(t, migrate.PhaseDualWrite, m.HeldNewest, "the killed client's entry reports its held lock: %+v", m)
			dead++
		}
	}
	assert.Equal(t, 1, dead)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	l, err := lk.Lock(wctx, lockName, time.Second)
	require.NoError(t, err, "taken once the dead holder's keys expired")
	require.NoError(t, l.Unlock(ctx))
}

// TestInteropJavaStaleFollower: a lockbridge-java follower cut off from
// Redis (its connections through a proxy that goes down) while the
// controller moves the fleet two steps on: it stops locking once its phase
// lease lapses, the controller counts it until its entry expires, and when
// it is back it starts afresh at the fleet's phase — 0 overlaps with the Go
// followers throughout.
func TestInteropJavaStaleFollower(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ns := "jstale"
	ctl := jfleetController(t, e, ns)
	step(ctx, t, ctl, jfleetStage{from: migrate.PhaseLegacy, to: migrate.PhaseDualWrite})
	p := faultproxy.Start(t, e.srv.Addr())

	j := startJavaAt(t, e, p.Addr(), javaFlags{"mode": "contend", "locker": "lockbridge-migrate", "namespace": ns,
		"interval-ms": fmt.Sprint(jfleetInterval.Milliseconds()), "name": lockName, "id": "java", "threads": "2",
		"lease-ms": fmt.Sprint(jfleetLease.Milliseconds()), "wait-ms": "500", "hold-ms": "1", "duration-ms": "120000"})
	stop := make(chan struct{})
	wg := goFleet(ctx, t, e, ns, "go", 2, stop)
	time.Sleep(jfleetSpan)
	j0, _, _ := guardCounts(t, e)
	for deadline := time.Now().Add(30 * time.Second); j0 == 0 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond) // a slow JVM (a loaded machine): until it acquired once
		j0, _, _ = guardCounts(t, e)
	}
	require.Positive(t, j0, "the Java side acquired before the cut")

	p.Down(true)
	p.Cut()
	// The controller steps twice once the Java entries have expired.
	step(ctx, t, ctl, jfleetStage{from: migrate.PhaseDualWrite, to: migrate.PhaseDualRead})
	step(ctx, t, ctl, jfleetStage{from: migrate.PhaseDualRead, to: migrate.PhaseModern})
	j1, _, _ := guardCounts(t, e)

	p.Down(false)
	time.Sleep(2 * jfleetSpan)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if n, _, _ := guardCounts(t, e); n > j1 {
			break
		}
		time.Sleep(200 * time.Millisecond) // a slow JVM (a loaded machine): until it acquired again
	}
	j.send("stop")
	j.expect("done", time.Minute)
	close(stop)
	wg.Wait()
	j2, g2, o2 := guardCounts(t, e)
	t.Logf("stale follower: java %d before the cut, %d while cut off, %d after; go %d; overlaps %d", j0, j1-j0, j2-j1, g2,
		o2)
	assert.Zero(t, o2, "overlaps")
	assert.Positive(t, j2-j1, "the Java side locks again, at modern")
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseModern, st.Phase)
}

// TestInteropJavaSeedToLockbridge: a Java service's own rolling deploy from
// the old seed code to lockbridge-java's LegacyLocker, same profile: an
// instance on the seed code, then one on lockbridge-java beside it, then
// the seed instance stopped — 0 overlaps, both acquire. For the
// StringRedisTemplate profile and for a default RedisTemplate's
// (JDK-serialized key and value).
func TestInteropJavaSeedToLockbridge(t *testing.T) {
	for _, c := range []struct {
		name    string
		seed    javaFlags
		profile string
	}{
		{"raw", javaFlags{"locker": "spring-callback", "client": "lettuce", "template": "string"}, "raw"},
		{"jdk", javaFlags{"locker": "spring-ops", "client": "lettuce", "template": "jdk"}, "jdk"},
	} {
		c := c
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			common := javaFlags{"mode": "contend", "name": lockName, "threads": "2", "lease-ms": "5000", "wait-ms": "1000",
				"poll-ms": "5", "hold-ms": "1", "duration-ms": "60000"}
			seedFlags := javaFlags{"id": "java-seed"}
			lbFlags := javaFlags{"id": "java-lockbridge", "locker": "lockbridge-legacy", "profile": c.profile}
			for k, v := range common {
				seedFlags[k], lbFlags[k] = v, v
			}
			for k, v := range c.seed {
				seedFlags[k] = v
			}
			seed := startJava(t, e, seedFlags)
			time.Sleep(time.Second)
			lb := startJava(t, e, lbFlags)
			time.Sleep(2 * time.Second)
			seed.send("stop")
			seedDone := seed.expect("done", time.Minute)
			time.Sleep(time.Second)
			lb.send("stop")
			lbDone := lb.expect("done", time.Minute)
			seedAcq := e.counter(t, "acq:java-seed-0") + e.counter(t, "acq:java-seed-1")
			lbAcq := e.counter(t, "acq:java-lockbridge-0") + e.counter(t, "acq:java-lockbridge-1")
			overlaps := e.counter(t, "cs:overlaps")
			t.Logf("%s: seed %d (%s), lockbridge-java %d (%s), overlaps %d", c.name, seedAcq, seedDone, lbAcq, lbDone, overlaps)
			assert.Zero(t, overlaps)
			assert.Positive(t, seedAcq)
			assert.Positive(t, lbAcq)
		})
	}
}

// TestInteropJavaPhasePairs: lockbridge-java's MigrateLocker in a fixed
// phase beside Go's migrate.Locker in a fixed phase, for every pair of
// phases that exclude each other (the pairs a controller-run fleet can
// hold at once): 0 overlaps over at least 400 acquisitions per pair (4,000
// in the long run), both languages acquiring.
func TestInteropJavaPhasePairs(t *testing.T) {
	count := int64(400)
	if long() {
		count = 4000
	}
	phases := []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead, migrate.PhaseModern}
	for _, jp := range phases {
		for _, gp := range phases {
			if !migrate.Compatible(jp, gp) {
				continue
			}
			p := pair{java: javaSide{name: "lockbridge-java-" + jp.String(), flags: javaFlags{"locker": "lockbridge-migrate",
				"phase": jp.String()}},
				goes: migrateSide(gp, profileRaw)}
			t.Run(p.name(), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				res := contend(t, e, p, fleet{javaThreads: 2, goWorkers: 2, count: count, lease: 5 * time.Second,
					goThink: time.Millisecond})
				t.Logf("%s: %d acquisitions (java %d, go %d), %d overlaps, %v", p.name(), res.javaAcq+res.goAcq, res.javaAcq,
					res.goAcq,
					res.overlaps, res.elapsed.Round(time.Millisecond))
				assert.Zero(t, res.overlaps, "overlaps")
				assert.GreaterOrEqual(t, res.javaAcq+res.goAcq, count)
				assert.Positive(t, res.javaAcq, "the Java side acquired")
				assert.Positive(t, res.goAcq, "the Go side acquired")
			})
		}
	}
}

// TestInteropDemoJavaMigrates: `lockbridge demo --java-migrates` on a real
// redis-server: lockbridge-java workers in JVMs reach modern with the Go
// fleet, 0 overlaps, and the demo leaves no key behind.
func TestInteropDemoJavaMigrates(t *testing.T) {
	e := newEnv(t)
	bin := filepath.Join(t.TempDir(), "lockbridge")
	build := exec.Command("go", "build", "-o", bin, "../cmd/lockbridge")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	cmd := exec.Command(bin, "demo", "--java-migrates", "--redis", "redis://"+e.srv.Addr(), "--java-jar", workerJar,
		"--java", "1", "--go", "2", "--lease", "5s")
	out, err = cmd.CombinedOutput()
	t.Logf("lockbridge demo --java-migrates:\n%s", out)
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "the Java workers reached modern with the Go fleet: 0 overlaps")
	for _, st := range []string{"legacy -> dual-write", "dual-write -> dual-read", "dual-read -> modern"} {
		assert.Contains(t, s, st)
	}
	n, err := e.raw.DBSize(context.Background()).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the demo leaves no key behind")
}
