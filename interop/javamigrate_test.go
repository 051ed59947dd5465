package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/migrate"
)

// The mixed Go/Java fleet: Go migrate.Lockers and lockbridge-java's
// MigrateLocker (in the worker's JVM) follow one namespace on one
// redis-server while migrate.Controller moves it one step at a time.

const (
	jfleetInterval = 200 * time.Millisecond // the phase interval of every locker
	jfleetLease    = 2 * time.Second        // the locks' lease
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
func goFleet(ctx context.Context, t *testing.T, e *env, ns, prefix string, n int, stop <-chan struct{}) *sync.WaitGroup {
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
					if errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, migrate.ErrPhaseUnknown) || ctx.Err() != nil {
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
func step(ctx context.Context, t *testing.T, ctl *migrate.Controller, s jfleetStage) {
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
		if !errors.Is(err, migrate.ErrUnsafeStep) || time.Now().After(deadline) {
			st, _ := ctl.Status(ctx)
			t.Fatalf("step %v -> %v: %v; blockers %v", s.from, s.to, err, st.Blockers)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestInteropJavaMigrates: a fleet of Go and Java MigrateLockers on one
// lock, moved by migrate.Controller through every phase and back one step,
// each stage a rolling redeploy of both languages: 0 overlaps, counted by
// the guard on a second redis-server; both languages acquire in every
// stage; the controller parses the Java registry entries and counts them.
func TestInteropJavaMigrates(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ns := "jfleet"
	ctl, err := migrate.NewController(e.lock, ns, migrate.WithQuietPeriod(time.Second), migrate.WithLivenessMargin(500*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, ctl.Init(ctx))

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
				require.NoError(t, m.Invalid, "the controller parses the Java entry %s", m.Raw)
				assert.Equal(t, s.from, m.Phase, "the Java client runs the fleet's phase: %s", m.Raw)
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
