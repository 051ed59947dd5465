package control

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

// flushNamespace deletes every key NamespaceKeys names, as an operator's
// cleanup of the namespace would; lock keys stay.
func flushNamespace(t *testing.T, c driver.Client, ns string) {
	t.Helper()
	keys, err := NamespaceKeys(ns)
	require.NoError(t, err)
	for _, k := range keys {
		_, err := c.Del(context.Background(), k)
		require.NoError(t, err)
	}
}

// noSecondHolder asserts that a locker started now (an older build rolled
// back, a new instance) does not get name while another holds it: it is
// refused, never granted.
func noSecondHolder(t *testing.T, c driver.Client, ns, name string) {
	t.Helper()
	ctx := context.Background()
	fresh := migrate.New(c, migrate.WithPhaseFrom(ns))
	defer func() { _ = fresh.Close(ctx) }()
	lk, err := fresh.TryLock(ctx, name, time.Second)
	if err == nil {
		p := lk.(interface{ Phase() migrate.Phase }).Phase()
		_ = lk.Unlock(ctx)
		t.Fatalf("two holders: a locker started after init took %q in %v while the first holder still holds it", name, p)
	}
	assert.True(t, errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, migrate.ErrPhaseUnknown),
		"refused, typed: %v", err)
}

// initAfterLoss runs init on a namespace that lost its keys: it may refuse,
// or restore the phase the namespace had (modern here), never another.
func initAfterLoss(t *testing.T, ctl *Controller) error {
	t.Helper()
	_, err := ctl.Init(context.Background(), false)
	if err == nil {
		p, perr := ctl.Phase(context.Background())
		require.NoError(t, perr)
		assert.Equal(t, migrate.PhaseModern, p, "init restores only the phase the namespace had")
	}
	return err
}

// A namespace at modern loses its keys (an operator's flush); a follower
// still holds a lock on its modern key. Before its heartbeat re-registers
// it, `phase init` must not start the namespace at legacy: a locker
// started afterwards would read legacy and take the legacy key beside the
// modern holder.
func TestFaultInitAfterLostNamespaceBesideModernHolder(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)
	// A slow heartbeat: the window between the flush and its re-registering
	// is the one the review found (init within 1.2 s of the flush).
	holder := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(time.Minute))
	defer func() { _ = holder.Close(ctx) }()
	name := locktest.Key(t, "k")
	lk, err := holder.TryLock(ctx, name, 20*time.Second)
	require.NoError(t, err)
	defer func() { _ = lk.Unlock(ctx) }()
	require.Equal(t, migrate.PhaseModern, lk.(interface{ Phase() migrate.Phase }).Phase())

	flushNamespace(t, tg.Client, ns)
	_ = initAfterLoss(t, ctl)
	noSecondHolder(t, tg.Client, ns, name)
}

// At the end state the migrate lockers are retired and services lock with
// a plain modern.Locker on the derived key: nothing heartbeats. A flush of
// the namespace must not let `phase init` start it at legacy, whenever it
// runs: a migrate Locker of an older build rolled back would then take the
// legacy key beside the modern holder.
func TestFaultInitAfterLostNamespaceAtTheEndState(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)
	name := locktest.Key(t, "k")
	_, key, err := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseModern)).Keys(name)
	require.NoError(t, err)
	lk, err := modern.New(tg.Client).TryLock(ctx, key, 20*time.Second)
	require.NoError(t, err)
	defer func() { _ = lk.Unlock(ctx) }()

	flushNamespace(t, tg.Client, ns)
	_ = initAfterLoss(t, ctl)
	noSecondHolder(t, tg.Client, ns, name)
}

// A namespace whose keys and mark are both gone (FLUSHDB spares nothing
// but the lock keys' owners): its holder's locker was closed while it held
// a lock (a graceful shutdown during a long job: nothing heartbeats). Init
// waits the silence — refusing at once, saying how long is left, when its
// context cannot wait that long — and starts legacy only once the lock the
// controller could not see has run out.
func TestFaultInitWaitsForTheSilence(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)
	holder := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
	name := locktest.Key(t, "k")
	const ttl = 1500 * time.Millisecond
	lk, err := holder.TryLock(ctx, name, ttl)
	require.NoError(t, err)
	_, modernKey, err := holder.Keys(name)
	require.NoError(t, err)
	require.NoError(t, holder.Close(ctx), "closed while it holds the lock")
	flushNamespace(t, tg.Client, ns)
	mark, err := MarkKey(ns)
	require.NoError(t, err)
	_, err = tg.Client.Del(ctx, mark)
	require.NoError(t, err)

	const silence = 2 * time.Second
	waiter, err := New(tg.Client, ns, WithInitSilence(silence))
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = waiter.Init(short, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, blockSilence, ue.Blockers[0].Kind)
	assert.Contains(t, ue.Blockers[0].Text, "left")
	noSecondHolder(t, tg.Client, ns, name)

	step, err := waiter.Init(ctx, false)
	require.NoError(t, err)
	assert.Equal(t, Step{To: migrate.PhaseLegacy}, step)
	assert.Equal(t, int64(-2), locktest.PTTL(t, tg.Client, modernKey),
		"the lock nobody could see ran out before legacy began")
	_ = lk
}

// A trace that appears while init waits — a follower of the old namespace
// heartbeating, the instance it read in its entry — makes init refuse: the
// namespace ran.
func TestFaultInitRefusedWhenATraceAppearsWhileItWaits(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseModern)
	follower := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(300*time.Millisecond))
	defer func() { _ = follower.Close(ctx) }()
	_, err := follower.Phase(ctx)
	require.NoError(t, err)
	_, err = tg.Client.Do(ctx, "FLUSHDB")
	require.NoError(t, err)

	waiter, err := New(tg.Client, ns, WithInitSilence(2*time.Second))
	require.NoError(t, err)
	_, err = waiter.Init(ctx, false)
	phaseErr(t, err, migrate.ReasonLost)
	_, err = waiter.Phase(ctx)
	require.ErrorIs(t, err, migrate.ErrPhaseUnknown, "nothing was set")
}

// A namespace whose keys were deleted is restored by init at the phase its
// mark shows, with its instance: the followers that refused it lock again
// without a restart, and a fresh one runs that phase.
func TestInitRestoresTheMarkAndFollowersResume(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ls, ctl := modernFleet(t, tg.Client, ns, 2)
	name := locktest.Key(t, "k")
	flushNamespace(t, tg.Client, ns)
	refusesWith(t, ls, name, migrate.ReasonLost)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseModern, st.mark.phase)
	assert.Contains(t, st.PhaseProblem.Error(), "lockbridge phase init --namespace "+ns+"` restores modern")

	step, err := ctl.Init(ctx, false)
	require.NoError(t, err)
	assert.Equal(t, Step{To: migrate.PhaseModern}, step)
	for _, l := range ls {
		require.Eventually(t, func() bool {
			lk, err := l.TryLock(ctx, name, time.Second)
			if err != nil {
				return false
			}
			defer func() { _ = lk.Unlock(ctx) }()
			return lk.(interface{ Phase() migrate.Phase }).Phase() == migrate.PhaseModern
		}, 10*time.Second, 5*time.Millisecond, "the instance kept: no restart needed")
	}
}

// Forced, init starts legacy whatever it finds, and reports what it
// overrode.
func TestInitForcedOverridesTheMark(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseModern)
	flushNamespace(t, tg.Client, ns)
	step, err := ctl.Init(ctx, true)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseLegacy, step.To)
	require.NotEmpty(t, step.Overridden)
	assert.Equal(t, blockRan, step.Overridden[0].Kind)
	p, err := ctl.Phase(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseLegacy, p)
}
