package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// A failover to a replica that never received the legacy sighting (the
// replica lagged, or was cut off, while a dual-write locker met a Java
// holder and recorded it) loses that evidence for good: nothing writes it
// again unless a locker happens to meet the Java holder again. The
// controller on the promoted replica must not read the missing sighting as
// "no legacy locker": as after a restore (Repair, Init from the mark), it
// must wait the quiet period before a step past dual-write. Here it steps
// at once, and a dual-read holder and the Java locker then hold one lock.
func TestFaultFailoverLosesTheSightingAndTheControllerSteps(t *testing.T) {
	ctx := context.Background()
	r := redistest.StartReplicated(t)
	c := locktest.GoRedis(t, r.Primary)
	ns := t.Name()
	ctl := initNS(t, c, ns, WithQuietPeriod(time.Minute))
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour) // the fleet has run dual-write past the quiet period
	dw := migrate.New(c, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer func() { _ = dw.Close(ctx) }()
	p, err := dw.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualWrite, p)
	r.Sync(t)
	r.Detach(t) // the replica lags from here on

	// A Java service (the seed's scheme, here legacy's twin of it) holds a
	// lock; the dual-write locker meets it and records the sighting.
	name := locktest.Key(t, "orders")
	java, err := legacy.New(c).TryLock(ctx, name, 10*time.Second)
	require.NoError(t, err)
	_, err = dw.TryLock(ctx, name, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && !st.Sighting.At.IsZero()
	}, 5*time.Second, 10*time.Millisecond, "the sighting is recorded")
	_, err = ctl.Advance(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep, "on the primary the sighting blocks the step")
	_ = java // the Java service goes on; its key is lost with the failover

	r.Failover(t)
	promoted := locktest.GoRedis(t, r.Replica)
	ctl2, err := New(promoted, ns, WithQuietPeriod(time.Minute))
	require.NoError(t, err)
	step, err := ctl2.Advance(ctx, false)
	if !assert.ErrorIs(t, err, ErrUnsafeStep,
		"the failover lost the sighting: the controller must not step past dual-write on its absence") {
		t.Logf("stepped: %+v", step)
		// What the step lets happen: a dual-read holder, and the Java
		// service taking the same lock the legacy way.
		dr := migrate.New(promoted, migrate.WithPhaseFrom(ns))
		defer func() { _ = dr.Close(ctx) }()
		lk, err := dr.TryLock(ctx, name, 10*time.Second)
		require.NoError(t, err)
		defer func() { _ = lk.Unlock(ctx) }()
		j2, err := legacy.New(promoted).TryLock(ctx, name, 10*time.Second)
		if err == nil {
			defer func() { _ = j2.Unlock(ctx) }()
		}
		assert.Error(t, err, "a dual-read holder and a Java locker hold %q at once", name)
	}
}

// A step judged by one server history and sent after a failover (the
// reading on the old primary, the step on the promoted replica) sets
// nothing: phase_set.lua compares the replication id the step was judged
// by with the server's, records the new one as a restore, and the
// controller then waits as after one.
func TestFaultStepJudgedOnAnotherHistorySetsNothing(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	initNS(t, tg.Client, t.Name())
	ctl, err := New(tg.Client, t.Name(), WithInitSilence(time.Minute))
	require.NoError(t, err)
	err = ctl.s.setPhase(ctx, "legacy", migrate.PhaseDualWrite, "step", 0, 0, judged{replid: "0123456789abcdef"})
	require.ErrorIs(t, err, errHistoryChanged)
	p, err := ctl.Phase(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseLegacy, p, "nothing set")
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Contains(t, kinds(st.Blockers), blockRestored, "the change is recorded as a restore: %+v", st.Blockers)
	assert.False(t, st.moved, "and the new id recorded")

	// The namespace's recorded id differs from the server's (as after a
	// failover): the next Advance records it and refuses.
	locktest.Do(t, tg.Client, "HSET", ctl.s.k.Meta, "replid", "0123456789abcdef")
	locktest.Do(t, tg.Client, "HDEL", ctl.s.k.Meta, "restored")
	st, err = ctl.Status(ctx)
	require.NoError(t, err)
	assert.True(t, st.moved)
	_, err = ctl.Advance(ctx, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, kinds(ue.Blockers), blockRestored)
	assert.NotEmpty(t, locktest.Do(t, tg.Client, "HGET", ctl.s.k.Meta, "restored"), "the restore stamped")
}

// At modern, where no step is left, a cleanup after a failover records
// the change as a restore and refuses until the init silence has passed:
// the evidence it would remove is what a rollback is judged by.
func TestFaultCleanupAfterAFailoverWaitsAsAfterARestore(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl := initNS(t, tg.Client, t.Name(), WithQuietPeriod(time.Millisecond))
	walk(t, ctl, migrate.PhaseModern)
	backdate(t, ctl.s, time.Hour)
	locktest.Do(t, tg.Client, "HSET", ctl.s.k.Meta, "replid", "0123456789abcdef") // as after a failover
	waiting, err := New(tg.Client, t.Name(), WithQuietPeriod(time.Millisecond), WithInitSilence(time.Minute))
	require.NoError(t, err)
	_, err = waiting.Cleanup(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep)
	assert.NotEmpty(t, locktest.Do(t, tg.Client, "HGET", ctl.s.k.Meta, "restored"), "the change recorded as a restore")
	st, err := waiting.Status(ctx)
	require.NoError(t, err)
	assert.False(t, st.moved)
	assert.Contains(t, kinds(st.Blockers), blockRestored, "and waited for")
}

// judgedElsewhere is a client whose cleanup.lua calls carry another
// replication id than the reading's: as when a failover or a restart comes
// between Cleanup's reading and its script.
type judgedElsewhere struct{ driver.Client }

func (c judgedElsewhere) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	if s == migrateproto.CleanupScript && len(args) == 5 {
		args = append(append([]any(nil), args[:4]...), "0123456789abcdef")
	}
	return c.Client.Eval(ctx, s, keys, args...)
}

// A cleanup whose reading was judged on one replication history must
// remove nothing on a server with another: the evidence it read (the
// sighting, the dead entries it counted) may not be what that server
// holds. Before, cleanup.lua took no replication id and removed them.
func TestFaultCleanupJudgedOnAnotherHistoryRemovesNothing(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl := initNS(t, tg.Client, t.Name(), WithQuietPeriod(time.Minute), WithLivenessMargin(time.Second))
	walk(t, ctl, migrate.PhaseModern)
	s := ctl.s
	backdate(t, s, time.Hour)
	sight(t, s, 2*time.Hour)
	beat(t, s, "dead", migrate.PhaseModern, time.Second)
	kill(t, s, "dead", time.Hour)

	elsewhere, err := New(judgedElsewhere{tg.Client}, t.Name(), WithQuietPeriod(time.Minute),
		WithLivenessMargin(time.Second))
	require.NoError(t, err)
	_, err = elsewhere.Cleanup(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep)
	assert.Contains(t, err.Error(), "replication id changed")
	assert.True(t, exists(t, s, s.k.Sighting), "the sighting stays")
	assert.Equal(t, int64(1), locktest.Do(t, tg.Client, "HEXISTS", s.k.Clients, "dead"), "the dead entry stays")

	done, err := ctl.Cleanup(ctx, false)
	require.NoError(t, err, "judged and run on one history, it goes through")
	assert.Equal(t, []string{"dead"}, done.Forgotten)
	assert.False(t, exists(t, s, s.k.Sighting))
}
