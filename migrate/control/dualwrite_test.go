package control

// Dual-write releases and leases: each case was a way to let two holders in,
// or to block the controller for nothing.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// A dual-write acquire cancelled before (or while) it is sent is undone by
// a release that must not touch another holder's legacy value near ours.
func TestCancelledDualWriteAcquireLeavesJavaHolderAlone(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		name := locktest.Key(t, "k")
		_, ok, err := javareplay.Lock(ctx, tg.Client, name, 5*time.Second, nil)
		require.NoError(t, err)
		require.True(t, ok)
		javaValue, _ := locktest.Get(t, tg.Client, name)

		l := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseDualWrite))
		for i := 0; i < 20; i++ {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := l.TryLock(cctx, name, 5*time.Second)
			require.Error(t, err)
			dctx, cancel := context.WithTimeout(ctx, time.Duration(i)*50*time.Microsecond)
			_, _ = l.Lock(dctx, name, 5*time.Second)
			cancel()
		}
		v, ok := locktest.Get(t, tg.Client, name)
		require.True(t, ok, "the Java holder's lock was deleted")
		assert.Equal(t, javaValue, v)
	})
}

// A second Unlock of a released lock must not meet the successor's lock.
func TestSecondUnlockLeavesSuccessorAlone(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	name := locktest.Key(t, "k")
	l := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseDualWrite))
	lk, err := l.TryLock(ctx, name, 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))

	succ := legacy.New(tg.Client)
	slk, err := succ.TryLock(ctx, name, 5*time.Second)
	require.NoError(t, err)
	before, _ := locktest.Get(t, tg.Client, name)

	err = lk.Unlock(ctx)
	assert.ErrorIs(t, err, lockbridge.ErrNotHeld)
	after, ok := locktest.Get(t, tg.Client, name)
	require.True(t, ok, "the successor's lock was deleted")
	assert.Equal(t, before, after)
	require.NoError(t, slk.Unlock(ctx))
}

// With a seconds profile and no +1, the legacy value lets legacy lockers in
// at the next whole second, which may come before start+ttl: the dual-write
// holder's lease must end no later, and its modern key must outlive the
// legacy value (or a crashed holder would look like a legacy-only one).
func TestDualWriteSecondsLease(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	name := locktest.Key(t, "k")
	l := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseDualWrite), migrate.WithNamespace(ns),
		migrate.WithLegacy(legacy.WithUnit(time.Second), legacy.WithPlusOne(false)))
	defer l.Close(ctx)
	lk, err := l.TryLock(ctx, name, 1900*time.Millisecond)
	require.NoError(t, err)
	v, _ := locktest.Get(t, tg.Client, name)
	w, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err)
	legacyEnd := time.Unix(w+1, 0)
	assert.False(t, lk.ExpiresAt().After(legacyEnd), "lease %v ends after legacy lockers may take over at %v",
		lk.ExpiresAt(), legacyEnd)
	_, modernKey, _ := l.Keys(name)
	assert.GreaterOrEqual(t, time.Now().Add(time.Duration(locktest.PTTL(t, tg.Client,
		modernKey))*time.Millisecond).Add(20*time.Millisecond), legacyEnd,
		"the modern key outlives the legacy value")

	// The holder crashes. A contender waits it out and never reports a
	// legacy sighting: the modern key was there as long as the legacy value.
	other := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseDualWrite), migrate.WithNamespace(ns),
		migrate.WithLegacy(legacy.WithUnit(time.Second), legacy.WithPlusOne(false)),
		migrate.WithBackoff(lockbridge.LinearBackoff(5*time.Millisecond, 5*time.Millisecond)))
	defer other.Close(ctx)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	olk, err := other.Lock(wctx, name, time.Second)
	require.NoError(t, err)
	require.NoError(t, olk.Unlock(ctx))
	ctl, err := New(tg.Client, ns)
	require.NoError(t, err)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.Sighting.Count, "a crashed dual-write holder is not a legacy-only locker")
}
