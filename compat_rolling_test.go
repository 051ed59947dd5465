package lockbridge_test

// A rolling migration end to end: workers flip phase one at a time under the
// Controller from Legacy to Modern and back one step, with seed-replay
// workers retired before DualRead: zero overlaps throughout.
//
// compat_test.go proves the pairs; this runs the whole rollout the way an
// operator does it (internal/fleetsim, the same simulation as the CLI's
// demo) on a real redis-server, through both adapters: Java-seed workers and
// Go workers (migrate.Locker in a fixed phase, heartbeating into the
// registry) contend for three locks while the controller advances, the Go
// workers are redeployed one at a time, the seed workers are retired before
// dual-read, and the fleet rolls back from modern to dual-read at the end.
// An exclusion check inside every critical section counts overlaps.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/fleetsim"
	"github.com/lockbridge/lockbridge/internal/locktest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompatRollingMigration(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		t.Parallel()
		var events []fleetsim.Event
		sim, err := fleetsim.New(fleetsim.Config{
			Client:    tg.Client,
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
		assert.Equal(t, []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead, migrate.PhaseModern, migrate.PhaseDualRead}, sum.Reached,
			"every phase reached, then one step back")
		assert.True(t, sum.RolledBack)
		require.NotEmpty(t, sum.RefusedSteps, "the controller refused at least one early step")
		assert.Contains(t, sum.RefusedSteps[0], "dual-write → dual-read")
		assert.Zero(t, sum.Forced, "no step was forced")

		assert.Positive(t, sum.ByKind[fleetsim.Java].Acquired, "the seed workers acquired before they were retired")
		for _, p := range []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead, migrate.PhaseModern} {
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
