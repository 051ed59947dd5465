package control

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// serverNow is the server's clock, in ms.
func serverNow(t *testing.T, c driver.Client) int64 {
	t.Helper()
	r, err := c.Do(context.Background(), "TIME")
	require.NoError(t, err)
	a := r.([]any)
	s, _ := strconv.ParseInt(a[0].(string), 10, 64)
	us, _ := strconv.ParseInt(a[1].(string), 10, 64)
	return s*1000 + us/1000
}

// backdate makes the phase appear set d ago by the server's clock.
func backdate(t *testing.T, s store, d time.Duration) {
	t.Helper()
	_, err := s.c.Do(context.Background(), "SET", s.k.Since, strconv.FormatInt(serverNow(t, s.c)-d.Milliseconds(), 10))
	require.NoError(t, err)
}

// beat writes a registry entry of protocol 3 for id, with hold (its seq
// the time in µs: growing).
func beat(t *testing.T, s store, id string, p migrate.Phase, hold time.Duration, held ...migrate.Phase) {
	t.Helper()
	e := migrateproto.Entry{V: migrateproto.Version, Seq: time.Now().UnixMicro(), ID: id, Phase: p.String(), Host: "h",
		PID: 7, Instance: 1, Gen: 1}
	if len(held) == 2 {
		ms := int64(1000)
		e.HeldOldest, e.HeldNewest, e.HeldMS = held[0].String(), held[1].String(), &ms
	}
	_, err := s.heartbeat(context.Background(), e, hold, 0)
	require.NoError(t, err)
}

// kill makes id's entry expired long ago by the server's clock.
func kill(t *testing.T, s store, id string, ago time.Duration) {
	t.Helper()
	_, err := s.c.Do(context.Background(), "ZADD", s.k.Expiry, strconv.FormatInt(serverNow(t, s.c)-ago.Milliseconds(), 10),
		id)
	require.NoError(t, err)
}

func kinds(bs []Blocker) []BlockerKind {
	var out []BlockerKind
	for _, b := range bs {
		out = append(out, b.Kind)
	}
	return out
}

func TestController(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		quiet := time.Minute
		ns := t.Name()
		ctl, err := New(tg.Client, ns, WithQuietPeriod(quiet), WithLivenessMargin(time.Second),
			WithInitSilence(time.Millisecond))
		require.NoError(t, err)
		s := ctl.s

		t.Run("FreshNamespaceIsUninitialised", func(t *testing.T) {
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			require.NotNil(t, st.PhaseProblem)
			assert.Equal(t, migrate.ReasonUninitialized, st.PhaseProblem.Reason)
			assert.False(t, st.Safe())
			_, err = ctl.Phase(ctx)
			assert.ErrorIs(t, err, migrate.ErrPhaseUnknown)
			assert.ErrorContains(t, err, "lockbridge phase init")
			_, err = ctl.Advance(ctx, true)
			assert.ErrorIs(t, err, migrate.ErrPhaseUnknown, "an unknown phase is never stepped from, even forced")
		})

		t.Run("Init", func(t *testing.T) {
			force := false
			if tg.Cluster {
				// In a cluster a namespace without a mark proves nothing:
				// refused unless forced (the test's cluster is new).
				_, err := ctl.Init(ctx, false)
				var ue *UnsafeStepError
				require.ErrorAs(t, err, &ue)
				assert.Equal(t, blockNoMark, ue.Blockers[0].Kind)
				force = true
			}
			step, err := ctl.Init(ctx, force)
			require.NoError(t, err)
			if !force {
				assert.Equal(t, Step{To: migrate.PhaseLegacy}, step)
			}
			_, err = ctl.Init(ctx, false)
			assert.ErrorIs(t, err, ErrAlreadyInitialized)
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, migrate.PhaseLegacy, st.Phase)
			assert.Equal(t, migrateproto.Version, st.Protocol)
			next, _ := st.Phase.Next()
			assert.Equal(t, migrate.PhaseDualWrite, next)
			assert.True(t, st.Safe(), "blockers: %v", st.Blockers)
		})

		t.Run("AdvanceToDualWriteNotifies", func(t *testing.T) {
			sub, err := tg.Client.Subscribe(ctx, s.k.Channel)
			require.NoError(t, err)
			defer sub.Close()
			step, err := ctl.Advance(ctx, false)
			require.NoError(t, err)
			assert.Equal(t, Step{From: migrate.PhaseLegacy, To: migrate.PhaseDualWrite}, step)
			p, err := ctl.Phase(ctx)
			require.NoError(t, err)
			assert.Equal(t, migrate.PhaseDualWrite, p)
			stored, _, err := tg.Client.Get(ctx, s.k.Phase)
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
			assert.Equal(t, []BlockerKind{BlockQuietPeriod}, kinds(unsafe.Blockers))
			assert.Contains(t, unsafe.Blockers[0].Text, "has run dual-write")
			backdate(t, s, quiet+time.Second)
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.True(t, st.Safe(), "blockers: %v", st.Blockers)
		})

		t.Run("LaggingClientBlocks", func(t *testing.T) {
			beat(t, s, "a", migrate.PhaseDualWrite, time.Minute)
			beat(t, s, "b", migrate.PhaseLegacy, time.Minute)
			beat(t, s, "dead", migrate.PhaseLegacy, time.Minute)
			kill(t, s, "dead", time.Hour)
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, map[migrate.Phase]int{migrate.PhaseDualWrite: 1, migrate.PhaseLegacy: 1}, st.Live)
			require.Len(t, st.Blockers, 1, "%v", st.Blockers)
			assert.Equal(t, Blocker{Kind: BlockClientPhase, Member: "b", Phase: migrate.PhaseLegacy,
				Text: `client "b" ("h" pid 7) runs legacy, the fleet is at dual-write`}, st.Blockers[0])
			var ids []string
			for _, c := range st.Members {
				ids = append(ids, c.ID)
			}
			assert.Equal(t, []string{"a", "b", "dead"}, ids)
			st, err = ctl.Status(ctx)
			require.NoError(t, err)
			assert.Len(t, st.Members, 3, "Status changes nothing")

			_, err = ctl.Advance(ctx, false)
			assert.ErrorIs(t, err, ErrUnsafeStep)
			st, err = ctl.Status(ctx)
			require.NoError(t, err)
			assert.Len(t, st.Members, 2, "a step drops a client dead for longer than the quiet period")
			p, _ := ctl.Phase(ctx)
			assert.Equal(t, migrate.PhaseDualWrite, p, "a refused step changes nothing")

			beat(t, s, "b", migrate.PhaseDualWrite, time.Minute)
			step, err := ctl.Advance(ctx, false)
			require.NoError(t, err)
			assert.Equal(t, migrate.PhaseDualRead, step.To)
		})

		t.Run("SightingBlocksBeyondDualWrite", func(t *testing.T) {
			for _, id := range []string{"a", "b"} {
				beat(t, s, id, migrate.PhaseDualRead, time.Hour)
			}
			require.NoError(t, s.recordSighting(ctx, "lock:older"))
			require.NoError(t, s.recordSighting(ctx, "lock:old"))
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, "lock:old", st.Sighting.Key, "the latest sighting is kept")
			assert.Equal(t, int64(2), st.Sighting.Count)
			assert.WithinDuration(t, st.Now, st.Sighting.At, 5*time.Second, "stamped by the server's clock")
			require.Equal(t, []BlockerKind{blockSighting}, kinds(st.Blockers))
			assert.Contains(t, st.Blockers[0].Text, "lock:old")

			_, err = ctl.Advance(ctx, false)
			require.ErrorIs(t, err, ErrUnsafeStep)
			step, err := ctl.Advance(ctx, true)
			require.NoError(t, err)
			assert.Equal(t, Step{From: migrate.PhaseDualRead, To: migrate.PhaseModern, Overridden: st.Blockers}, step)

			_, err = ctl.Advance(ctx, true)
			assert.ErrorIs(t, err, ErrUnsafeStep, "nothing beyond modern, even forced")
		})

		t.Run("RollbackOneStepFromASettledFleet", func(t *testing.T) {
			for _, id := range []string{"a", "b"} {
				beat(t, s, id, migrate.PhaseModern, time.Hour)
			}
			step, err := ctl.Rollback(ctx, false)
			require.NoError(t, err, "one step back from a settled fleet")
			assert.Equal(t, migrate.PhaseDualRead, step.To)

			step, err = ctl.Rollback(ctx, false)
			require.NoError(t, err, "modern beside dual-write is safe")
			assert.Equal(t, migrate.PhaseDualWrite, step.To)
			_, err = ctl.Rollback(ctx, false)
			var unsafe *UnsafeStepError
			require.ErrorAs(t, err, &unsafe, "clients at modern beside legacy: refused")
			assert.Equal(t, blockIncompatible, unsafe.Blockers[0].Kind)
			assert.Equal(t, "a", unsafe.Blockers[0].Member)
			step, err = ctl.Rollback(ctx, true)
			require.NoError(t, err)
			assert.Equal(t, migrate.PhaseLegacy, step.To)
			assert.Len(t, step.Overridden, 2)
			_, err = ctl.Rollback(ctx, true)
			assert.ErrorIs(t, err, ErrUnsafeStep)
			for _, id := range []string{"a", "b"} {
				require.NoError(t, s.leave(ctx, id))
			}
		})

		t.Run("StepFromAPhaseTheFleetLeft", func(t *testing.T) {
			cur, err := ctl.Phase(ctx)
			require.NoError(t, err)
			from := migrate.PhaseDualWrite
			if cur == from {
				from = migrate.PhaseDualRead
			}
			to, _ := from.Next()
			_, err = ctl.Step(ctx, from, to, true)
			assert.ErrorIs(t, err, errPhaseChanged, "never a step other than the one asked for, even forced")
			_, err = ctl.Step(ctx, cur, cur, true)
			assert.ErrorIs(t, err, ErrUnsafeStep)
			p, _ := ctl.Phase(ctx)
			assert.Equal(t, cur, p)
		})

		t.Run("ConcurrentControllersDoNotSkipAPhase", func(t *testing.T) {
			err1 := s.setPhase(ctx, "legacy", migrate.PhaseDualWrite, "step", 0, 0, judged{})
			err2 := s.setPhase(ctx, "legacy", migrate.PhaseDualWrite, "step", 0, 0, judged{})
			require.NoError(t, err1)
			assert.ErrorIs(t, err2, errPhaseChanged)
		})

		t.Run("BadStoredPhase", func(t *testing.T) {
			_, err := tg.Client.Do(ctx, "SET", s.k.Phase, "sideways")
			require.NoError(t, err)
			_, err = ctl.Phase(ctx)
			var pe *migrate.PhaseUnknownError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, migrate.ReasonUnreadable, pe.Reason)
			_, err = ctl.Advance(ctx, true)
			assert.ErrorIs(t, err, migrate.ErrPhaseUnknown)
		})
	})
}

func TestNewControllerRejectsBadArguments(t *testing.T) {
	tg := locktest.Single(t)[0]
	for name, f := range map[string]func() error{
		"nil client":      func() error { _, err := New(nil, "n"); return err },
		"empty namespace": func() error { _, err := New(tg.Client, ""); return err },
		"brace":           func() error { _, err := New(tg.Client, "a}"); return err },
		"zero quiet":      func() error { _, err := New(tg.Client, "n", WithQuietPeriod(0)); return err },
		"negative margin": func() error { _, err := New(tg.Client, "n", WithLivenessMargin(-1)); return err },
		"zero silence":    func() error { _, err := New(tg.Client, "n", WithInitSilence(0)); return err },
		"unknown policy":  func() error { _, err := New(tg.Client, "n", WithMaxmemoryPolicy("allkeys")); return err },
		"nil option":      func() error { _, err := New(tg.Client, "n", nil); return err },
	} {
		err := f()
		assert.True(t, errors.Is(err, lockbridge.ErrInvalid), "%s: %v", name, err)
	}
}
