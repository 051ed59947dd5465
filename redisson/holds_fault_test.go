package redisson_test

import (
	"context"

	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/redisson"
)

// A hold whose field the watchdog found gone (a ForceUnlock) is lost; its
// count left the hash with the field. When the same owner has taken the
// lock again meanwhile (another goroutine of the task), an Unlock of the
// lost hold must not take the new hold's count: that would delete the key
// under a holder that still believes it holds, and let another owner in.
func TestFaultUnlockOfLostHoldSparesNewHold(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(tg.Client, redisson.WithWatchdog())
	o := l.NewOwner()
	stale, err := o.TryLock(ctx, key, 300*time.Millisecond)
	require.NoError(t, err)
	_, err = l.ForceUnlock(ctx, key)
	require.NoError(t, err)
	require.True(t, locktest.WaitDone(stale, 5*time.Second), "the watchdog found the field gone")
	require.ErrorIs(t, stale.Err(), lockbridge.ErrLost)

	fresh, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	defer func() { _ = fresh.Unlock(ctx) }()

	require.ErrorIs(t, stale.Unlock(ctx), lockbridge.ErrNotHeld, "the lost hold is not held")
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, tg.Client, key), "the new hold keeps its count")
	other, err := l.TryLock(ctx, key, time.Minute)
	if err == nil {
		_ = other.Unlock(ctx)
	}
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder while the new hold lasts (its Err: %v)",
		fresh.Err())
}

// One Owner, two goroutines on one lock (the Owner is safe for concurrent
// use). The first one's attempt meets another owner's lock, its reply never
// comes and its context ends; meanwhile the other owner unlocks and the
// second goroutine takes the lock for the Owner. The first attempt, seeing
// no hold of its Owner when it started, must not settle its unknown outcome
// by releasing the Owner's field: that field is the second goroutine's hold.
func TestFaultConcurrentOwnerAttemptSparesSiblingHold(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(c)
	o := l.NewOwner()
	x, err := l.TryLock(ctx, key, time.Minute) // another owner
	require.NoError(t, err)

	p.DropReply(faultproxy.Script(script(t, "acquire.lua")), 1, faultproxy.Hang)
	first := make(chan error, 1)
	go func() {
		actx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		_, err := o.TryLock(actx, key, time.Minute)
		first <- err
	}()
	require.Eventually(t, func() bool { return p.Dropped() == 1 }, 5*time.Second, time.Millisecond,
		"the first attempt ran and its reply is held back")
	require.NoError(t, x.Unlock(ctx))
	sibling, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err, "the second goroutine takes the lock for the owner")
	defer func() { _ = sibling.Unlock(ctx) }()

	err = <-first
	require.Error(t, err, "the first attempt did not get the lock")
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key), "the sibling's hold is still counted")
	other, err := l.TryLock(ctx, key, time.Minute)
	if err == nil {
		_ = other.Unlock(ctx)
	}
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder while the sibling holds (its Err: %v)",
		sibling.Err())
}

// A hold taken with a lease and no watchdog outlives its lease; the same
// owner (another goroutine of the task) takes the lock again, a fresh field
// with count 1. The stale hold's Unlock must not take that count: it would
// delete the lock under the new hold, which still believes it holds, and let
// another owner in. After an unlock whose reply was lost, the owner does not
// take the lock again at all: that unlock may still land (the first run
// found no field, so it left no latch to answer with, and asking again
// cannot settle it).
func TestFaultUnlockOfExpiredHoldSparesNewHold(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(map[bool]string{false: "unlock", true: "unlock asked again"}[lost], func(t *testing.T) {
			p, c, raw := proxied(t)
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			l := redisson.New(c)
			o := l.NewOwner()
			stale, err := o.TryLock(ctx, key, 100*time.Millisecond)
			require.NoError(t, err)
			time.Sleep(200 * time.Millisecond) // its lease ran out on the server
			if lost {
				p.DropReply(faultproxy.Script(script(t, "release.lua")), 1, faultproxy.Close)
				require.ErrorIs(t, stale.Unlock(ctx), lockbridge.ErrUnknownOutcome)
			}
			fresh, err := o.TryLock(ctx, key, time.Minute)
			if lost {
				// That unlock may still be on its way (TestFaultLateUnlockSparesTheOwnersNextHold):
				// the owner takes the lock again only once its latch has answered — never here,
				// where the first run found no field and left no latch.
				require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
				require.ErrorIs(t, stale.Unlock(ctx), lockbridge.ErrUnknownOutcome, "no latch answers")
				_, err = o.TryLock(ctx, key, time.Minute)
				require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
				assert.Empty(t, hash(t, raw, key))
				return
			}
			require.NoError(t, err)
			defer func() { _ = fresh.Unlock(ctx) }()

			require.Error(t, stale.Unlock(ctx), "the stale hold is not held")
			assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key), "the new hold keeps its count")
			other, err := l.TryLock(ctx, key, time.Minute)
			if err == nil {
				_ = other.Unlock(ctx)
			}
			require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder while the new hold lasts (its Err: %v)",
				fresh.Err())
		})
	}
}

// Re-entries with leases of their own: a hold whose own lease ran out by
// our clock while a re-entry (taken while it still ran) kept the lock alive
// still unlocks its count, and the lock is free after the last unlock.
func TestUnlockOfOutlivedReentryReleases(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	o := redisson.New(tg.Client).NewOwner()
	short, err := o.TryLock(ctx, key, 100*time.Millisecond)
	require.NoError(t, err)
	long, err := o.TryLock(ctx, key, time.Minute) // a re-entry: the whole lock now lives a minute
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, long.Unlock(ctx))
	require.NoError(t, short.Unlock(ctx), "its count was still in the field")
	assert.Empty(t, hash(t, tg.Client, key), "free")
}

// The server is stopped (SIGSTOP) under a watchdog hold: no renewal comes
// back, and the hold is reported lost before its lease can end on the
// server. Its Unlock then sends nothing; the lock ends with its lease once
// the server runs again.
func TestFaultWatchdogServerStopped(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	lk, err := redisson.New(c, redisson.WithWatchdog()).TryLock(ctx, key, 600*time.Millisecond)
	require.NoError(t, err)
	deadline := lk.ExpiresAt()
	srv.Pause()
	resumed := false
	defer func() {
		if !resumed {
			srv.Resume()
		}
	}()
	require.True(t, locktest.WaitDone(lk, 5*time.Second), "reported lost")
	assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	assert.True(t, time.Now().Before(deadline.Add(600*time.Millisecond)),
		"lost no later than the lease the server may still count")
	srv.Resume()
	resumed = true
	require.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
	require.Eventually(t, func() bool { return len(hash(t, c, key)) == 0 }, 5*time.Second, 10*time.Millisecond,
		"the lock ends with its lease")
}

// An owner holds a lock for a minute and re-enters it with a short lease
// (an inner call with its own ttl). Redisson's scripts set the lease of the
// whole lock on every acquire and partial unlock: sending the short ttl
// would end the lock on the server long before the outer hold's lease (and
// its next watchdog renewal), and let another owner in while the outer hold
// believes it holds. The outer hold's lease must bound the lock's.
func TestFaultShortReentrySparesOuterLease(t *testing.T) {
	for _, watchdog := range []bool{false, true} {
		t.Run(map[bool]string{false: "lease", true: "watchdog"}[watchdog], func(t *testing.T) {
			tg := locktest.Single(t)[0]
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			var opts []redisson.Option
			if watchdog {
				opts = append(opts, redisson.WithWatchdog())
			}
			l := redisson.New(tg.Client, opts...)
			o := l.NewOwner()
			outer, err := o.TryLock(ctx, key, 6*time.Second)
			require.NoError(t, err)
			defer func() { _ = outer.Unlock(ctx) }()
			inner, err := o.TryLock(ctx, key, 100*time.Millisecond)
			require.NoError(t, err)
			time.Sleep(150 * time.Millisecond) // the inner hold's watchdog, if any, renews meanwhile
			require.NoError(t, inner.Unlock(ctx))
			time.Sleep(300 * time.Millisecond)

			require.NoError(t, outer.Err())
			require.True(t, time.Now().Before(outer.ExpiresAt()), "the outer hold's lease runs")
			other, err := l.TryLock(ctx, key, time.Minute)
			if err == nil {
				_ = other.Unlock(ctx)
			}
			require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder while the outer hold's lease runs")
		})
	}
}

// Redisson's fair release replies success when the lock's key is gone (and
// wakes the queue head). A fair hold whose lease ran out, or that was force
// unlocked, was lost: its Unlock must say so (ErrNotHeld, Err wraps
// ErrLost), as the plain lock's does, not report a clean release.
func TestFaultFairUnlockOfLostHoldSignalled(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	l := redisson.New(tg.Client, redisson.WithFair(time.Minute))

	expired, err := l.TryLock(ctx, locktest.Key(t, "expired"), 20*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(60 * time.Millisecond)
	require.ErrorIs(t, expired.Unlock(ctx), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, expired.Err(), lockbridge.ErrLost)

	key := locktest.Key(t, "forced")
	forced, err := l.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	ok, err := l.ForceUnlock(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	require.ErrorIs(t, forced.Unlock(ctx), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, forced.Err(), lockbridge.ErrLost)
}
