package migrate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/locktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock for controller tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestController(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		clock := &fakeClock{t: time.Now()}
		quiet := time.Minute
		ns := t.Name()
		newCtl := func() *Controller {
			c, err := NewController(tg.Client, ns, WithQuietPeriod(quiet), WithControllerClock(clock.Now))
			require.NoError(t, err)
			return c
		}
		ctl := newCtl()
		s := ctl.s

		t.Run("FreshNamespaceIsLegacy", func(t *testing.T) {
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, PhaseLegacy, st.Phase)
			assert.Equal(t, PhaseDualWrite, st.Next)
			assert.True(t, st.Safe(), "blockers: %v", st.Blockers)
		})

		t.Run("AdvanceToDualWriteNotifies", func(t *testing.T) {
			sub, err := tg.Client.Subscribe(ctx, s.k.channel)
			require.NoError(t, err)
			defer sub.Close()
			step, err := ctl.Advance(ctx, false)
			require.NoError(t, err)
			assert.Equal(t, Step{From: PhaseLegacy, To: PhaseDualWrite}, step)
			p, err := ctl.Phase(ctx)
			require.NoError(t, err)
			assert.Equal(t, PhaseDualWrite, p)
			stored, _, err := tg.Client.Get(ctx, s.k.phase)
			require.NoError(t, err)
			assert.Equal(t, "dual-write", stored)
			select {
			case m := <-sub.Messages():
				assert.Equal(t, "dual-write", m.Payload)
			case <-time.After(5 * time.Second):
				t.Fatal("no phase-change notice")
			}
		})

		t.Run("DualReadWaitsForTheQuietPeriod", func(t *testing.T) {
			_, err := ctl.Advance(ctx, false)
			var unsafe *UnsafeStepError
			require.ErrorAs(t, err, &unsafe)
			assert.ErrorIs(t, err, ErrUnsafeStep)
			assert.Contains(t, unsafe.Blockers[0], "has run dual-write")
			clock.Add(quiet + time.Second)
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.True(t, st.Safe(), "blockers: %v", st.Blockers)
		})

		t.Run("LaggingClientBlocks", func(t *testing.T) {
			now := clock.Now()
			require.NoError(t, s.heartbeat(ctx, Client{ID: "a", Phase: PhaseDualWrite, Seen: now, Expires: now.Add(time.Minute)}))
			require.NoError(t, s.heartbeat(ctx, Client{ID: "b", Phase: PhaseLegacy, Host: "h", PID: 7, Seen: now, Expires: now.Add(time.Minute)}))
			require.NoError(t, s.heartbeat(ctx, Client{ID: "dead", Phase: PhaseLegacy, Seen: now.Add(-time.Hour), Expires: now.Add(-time.Hour + time.Minute)}))
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, map[Phase]int{PhaseDualWrite: 1, PhaseLegacy: 1}, st.Live)
			require.Len(t, st.Blockers, 1, "%v", st.Blockers)
			assert.Contains(t, st.Blockers[0], `client "b" ("h" pid 7) runs legacy`)
			ids := []string{}
			for _, c := range st.Clients {
				ids = append(ids, c.ID)
			}
			assert.Equal(t, []string{"a", "b", "dead"}, ids)
			st, err = ctl.Status(ctx)
			require.NoError(t, err)
			assert.Len(t, st.Clients, 3, "Status changes nothing")

			_, err = ctl.Advance(ctx, false)
			assert.ErrorIs(t, err, ErrUnsafeStep)
			st, err = ctl.Status(ctx)
			require.NoError(t, err)
			assert.Len(t, st.Clients, 2, "a step drops a client dead for longer than the quiet period")
			p, _ := ctl.Phase(ctx)
			assert.Equal(t, PhaseDualWrite, p, "a refused step changes nothing")

			require.NoError(t, s.heartbeat(ctx, Client{ID: "b", Phase: PhaseDualWrite, Seen: now, Expires: now.Add(time.Minute)}))
			step, err := ctl.Advance(ctx, false)
			require.NoError(t, err)
			assert.Equal(t, PhaseDualRead, step.To)
		})

		t.Run("SightingBlocksBeyondDualWrite", func(t *testing.T) {
			now := clock.Now()
			for _, id := range []string{"a", "b"} {
				require.NoError(t, s.heartbeat(ctx, Client{ID: id, Phase: PhaseDualRead, Seen: now, Expires: now.Add(time.Hour)}))
			}
			require.NoError(t, s.recordSighting(ctx, now.Add(-10*time.Second), "lock:old"))
			require.NoError(t, s.recordSighting(ctx, now.Add(-20*time.Second), "lock:older"))
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, "lock:old", st.Sighting.Key, "the latest sighting is kept")
			assert.Equal(t, int64(2), st.Sighting.Count)
			assert.Equal(t, now.Add(-10*time.Second).UnixMilli(), st.Sighting.At.UnixMilli())
			require.Len(t, st.Blockers, 1)
			assert.Contains(t, st.Blockers[0], "lock:old")

			_, err = ctl.Advance(ctx, false)
			require.ErrorIs(t, err, ErrUnsafeStep)
			step, err := ctl.Advance(ctx, true)
			require.NoError(t, err)
			assert.Equal(t, Step{From: PhaseDualRead, To: PhaseModern, Overridden: st.Blockers}, step)

			_, err = ctl.Advance(ctx, true)
			assert.ErrorIs(t, err, ErrUnsafeStep, "nothing beyond modern, even forced")
		})

		t.Run("RollbackOneStepFromASettledFleet", func(t *testing.T) {
			now := clock.Now()
			for _, id := range []string{"a", "b"} {
				require.NoError(t, s.heartbeat(ctx, Client{ID: id, Phase: PhaseModern, Seen: now, Expires: now.Add(time.Hour)}))
			}
			step, err := ctl.Rollback(ctx, false)
			require.NoError(t, err, "one step back from a settled fleet")
			assert.Equal(t, PhaseDualRead, step.To)

			// "a" and "b" still run modern: a second step back would put
			// them two phases from dual-write... and modern/dual-write do
			// exclude each other, but dual-read → legacy would not.
			step, err = ctl.Rollback(ctx, false)
			require.NoError(t, err, "modern beside dual-write is safe")
			assert.Equal(t, PhaseDualWrite, step.To)
			_, err = ctl.Rollback(ctx, false)
			var unsafe *UnsafeStepError
			require.ErrorAs(t, err, &unsafe, "clients at modern beside legacy: refused")
			assert.Contains(t, unsafe.Blockers[0], `client "a"`)
			step, err = ctl.Rollback(ctx, true)
			require.NoError(t, err)
			assert.Equal(t, PhaseLegacy, step.To)
			assert.Len(t, step.Overridden, 2)
			_, err = ctl.Rollback(ctx, true)
			assert.ErrorIs(t, err, ErrUnsafeStep)
			for _, id := range []string{"a", "b"} {
				require.NoError(t, s.leave(ctx, id))
			}
		})

		t.Run("StepFromAPhaseTheFleetLeft", func(t *testing.T) {
			// The operator saw dual-read; a colleague has moved on to modern.
			cur, err := ctl.Phase(ctx)
			require.NoError(t, err)
			from := PhaseDualWrite
			if cur == from {
				from = PhaseDualRead
			}
			to, _ := from.Next()
			_, err = ctl.Step(ctx, from, to, true)
			assert.ErrorIs(t, err, ErrPhaseChanged, "never a step other than the one asked for, even forced")
			_, err = ctl.Step(ctx, cur, cur, true)
			assert.ErrorIs(t, err, ErrUnsafeStep)
			p, _ := ctl.Phase(ctx)
			assert.Equal(t, cur, p)
		})

		t.Run("ConcurrentControllersDoNotSkipAPhase", func(t *testing.T) {
			// Two operators both saw legacy; only one step happens.
			err1 := s.setPhase(ctx, PhaseLegacy, PhaseDualWrite, clock.Now())
			err2 := s.setPhase(ctx, PhaseLegacy, PhaseDualWrite, clock.Now())
			require.NoError(t, err1)
			assert.ErrorIs(t, err2, ErrPhaseChanged)
		})

		t.Run("BadStoredPhase", func(t *testing.T) {
			_, err := tg.Client.Do(ctx, "SET", s.k.phase, "sideways")
			require.NoError(t, err)
			_, err = ctl.Phase(ctx)
			assert.ErrorIs(t, err, lockbridge.ErrInvalid)
			_, err = ctl.Advance(ctx, true)
			assert.Error(t, err)
		})
	})
}

func TestNewControllerRejectsBadArguments(t *testing.T) {
	tg := locktest.Single(t)[0]
	for name, f := range map[string]func() error{
		"empty namespace": func() error { _, err := NewController(tg.Client, ""); return err },
		"brace":           func() error { _, err := NewController(tg.Client, "a}"); return err },
		"zero quiet":      func() error { _, err := NewController(tg.Client, "n", WithQuietPeriod(0)); return err },
		"nil clock":       func() error { _, err := NewController(tg.Client, "n", WithControllerClock(nil)); return err },
	} {
		err := f()
		assert.True(t, errors.Is(err, lockbridge.ErrInvalid), "%s: %v", name, err)
	}
}
