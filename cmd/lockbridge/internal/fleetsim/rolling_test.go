package fleetsim_test

// A rolling migration end to end: workers flip phase one at a time under the
// Controller from Legacy to Modern and back one step, with seed-replay
// workers retired before DualRead: zero overlaps throughout.
//
// compat_test.go proves the pairs; this runs the whole rollout the way an
// operator does it (cmd/lockbridge/internal/fleetsim, the same simulation as the CLI's
// demo) on a real redis-server through both adapters, and on the 3-master
// cluster: Java-seed workers and
// Go workers (migrate.Locker in a fixed phase, heartbeating into the
// registry) contend for three locks while the controller advances, the Go
// workers are redeployed one at a time, the seed workers are retired before
// dual-read, and the fleet rolls back from modern to dual-read at the end.
// An exclusion check inside every critical section counts overlaps.

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/cmd/lockbridge/internal/fleetsim"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompatRollingMigration(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		t.Parallel()
		var events []fleetsim.Event
		sim, err := fleetsim.New(fleetsim.Config{
			Client:    tg.Client,
			Fresh:     true, // the test started the server
			Namespace: "rolling-" + tg.Name,
			Duration:  5 * time.Second,
			Quiet:     500 * time.Millisecond,
			Heartbeat: 100 * time.Millisecond,
			Rollback:  true,
			OnEvent:   func(ev fleetsim.Event) { events = append(events, ev) }, // calls are serialized
		})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sum, err := sim.Run(ctx)
		require.NoError(t, err)
		if t.Failed() || sum.Overlaps > 0 {
			for _, ev := range events {
				t.Log(ev)
			}
		}

		assert.Zero(t, sum.Overlaps, "two holders at once: %v", sum.OverlapsSeen)
		assert.Zero(t, sum.Errors, "worker errors: %v", sum.FirstErrors)
		assert.Equal(t, []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
			migrate.PhaseModern, migrate.PhaseDualRead}, sum.Reached,
			"every phase reached, then one step back")
		assert.True(t, sum.RolledBack)
		require.NotEmpty(t, sum.RefusedSteps, "the controller refused at least one early step")
		assert.Contains(t, sum.RefusedSteps[0], "dual-write → dual-read")
		assert.Zero(t, sum.Forced, "no step was forced")

		assert.Positive(t, sum.ByKind[fleetsim.Java].Acquired, "the seed workers acquired before they were retired")
		for _, p := range []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
			migrate.PhaseModern} {
			assert.Positive(t, sum.ByPhase[p].Acquired, "Go workers acquired in %v", p)
		}

		// The seed workers were retired before the step to dual-read, and the
		// Go workers were redeployed one at a time after each step.
		retired, toDualRead, deploys := -1, -1, 0
		for i, ev := range events {
			switch {
			case ev.Kind == fleetsim.EventRetire:
				retired = i
			case ev.Kind == fleetsim.EventPhase && strings.Contains(ev.Text, "dual-write → dual-read"):
				toDualRead = i
			case ev.Kind == fleetsim.EventDeploy:
				deploys++
			}
		}
		require.NotEqual(t, -1, retired)
		require.NotEqual(t, -1, toDualRead)
		assert.Less(t, retired, toDualRead)
		assert.Equal(t, 4*fleetsim.DefaultGoWorkers, deploys)
	})
}

// TestCompatRollingFollowers runs the same rollout with Go lockers that
// follow the phase from Redis (migrate.WithPhaseFrom) instead of being
// redeployed: the controller's notice moves them, the fleet registry shows
// them, and a Redis guard counter inside every critical section — Java seed
// replays included until they retire — sees no overlap.
func TestCompatRollingFollowers(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ns := "followers-" + tg.Name
		name := locktest.Key(t, "lock")
		guard := locktest.NewGuard(tg.Client, name)
		ctl, err := control.New(tg.Client, ns, control.WithQuietPeriod(300*time.Millisecond),
			control.WithInitSilence(time.Millisecond))
		require.NoError(t, err)
		_, err = ctl.Init(ctx, tg.Cluster) // a test's new cluster: forced
		require.NoError(t, err)

		var wg sync.WaitGroup
		work := func(stop <-chan struct{}, lock func() (func(context.Context) error, error), n *atomic.Int64) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				unlock, err := lock()
				if err != nil {
					continue // not obtained within the attempt's deadline
				}
				guard.Hold(t, time.Millisecond)
				n.Add(1)
				if err := unlock(ctx); err != nil {
					t.Errorf("unlock: %v", err)
				}
			}
		}
		stopGo, stopJava := make(chan struct{}), make(chan struct{})
		var goAcquired, javaAcquired atomic.Int64
		fast := lockbridge.LinearBackoff(time.Millisecond, 2*time.Millisecond)
		for i := 0; i < 4; i++ {
			l := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(50*time.Millisecond),
				migrate.WithBackoff(fast))
			defer l.Close(context.Background())
			_, err := l.Phase(ctx)
			require.NoError(t, err)
			wg.Add(1)
			go work(stopGo, func() (func(context.Context) error, error) {
				actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				lk, err := l.Lock(actx, name, time.Second)
				if err != nil {
					return nil, err
				}
				return lk.Unlock, nil
			}, &goAcquired)
		}
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go work(stopJava, func() (func(context.Context) error, error) {
				actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				// The Java seed, replayed, polling faster than its 100 ms
				// so the test stays short (the poll is not protocol).
				for {
					exp, ok, err := javareplay.Lock(actx, tg.Client, name, time.Second, nil)
					if err != nil {
						return nil, err
					}
					if ok {
						return func(ctx context.Context) error { return javareplay.Unlock(ctx, tg.Client, name, exp, nil) }, nil
					}
					select {
					case <-actx.Done():
						return nil, actx.Err()
					case <-time.After(2 * time.Millisecond):
					}
				}
			}, &javaAcquired)
		}
		defer func() { close(stopGo); wg.Wait() }()

		settled := func(p migrate.Phase) {
			t.Helper()
			require.Eventually(t, func() bool {
				st, err := ctl.Status(ctx)
				return err == nil && st.Phase == p && st.Live[p] == 4 && len(st.Live) == 1
			}, 10*time.Second, 10*time.Millisecond, "every follower reports %v", p)
			time.Sleep(100 * time.Millisecond) // contend a while in the new phase
		}
		settled(migrate.PhaseLegacy)
		_, err = ctl.Advance(ctx, false)
		require.NoError(t, err)
		settled(migrate.PhaseDualWrite)

		close(stopJava) // retire the Java services before dual-read
		require.Eventually(t, func() bool {
			_, err := ctl.Advance(ctx, false)
			return err == nil
		}, 10*time.Second, 50*time.Millisecond,
			"dual-read is allowed once the legacy lockers are gone and the quiet period passed")
		settled(migrate.PhaseDualRead)
		// A lock a follower took just before it moved is held (and
		// reported) until released: the controller waits for it.
		require.Eventually(t, func() bool {
			_, err := ctl.Advance(ctx, false)
			return err == nil
		}, 10*time.Second, 50*time.Millisecond, "modern is allowed once no lock of dual-write is held")
		settled(migrate.PhaseModern)
		require.Eventually(t, func() bool {
			_, err := ctl.Rollback(ctx, false)
			return err == nil
		}, 10*time.Second, 50*time.Millisecond, "the rollback is allowed once no lock of another phase is held")
		settled(migrate.PhaseDualRead)

		assert.Zero(t, guard.Violations(), "two holders at once")
		assert.Positive(t, javaAcquired.Load())
		assert.Positive(t, goAcquired.Load())
	})
}
