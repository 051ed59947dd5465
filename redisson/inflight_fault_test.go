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
	"github.com/lockbridge/lockbridge/redisson"
)

// An Owner's holds of one lock share its field, so a write of the owner's
// whose reply never came may still land on the server at any later time —
// on a hold the owner takes after it. These tests hold such a write back in
// the network (faultproxy.Hold: the command reaches the server late, after
// the client gave up on it) while the same owner takes the lock anew, then
// let it land and look for a second holder.

// secondHolder reports whether another owner gets the lock while held
// still believes it holds; it unlocks what it got.
func secondHolder(ctx context.Context, t *testing.T, l *redisson.Locker, key string, held lockbridge.Lock) bool {
	t.Helper()
	if done(held) {
		return false
	}
	other, err := l.TryLock(ctx, key, time.Minute)
	if err != nil {
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		return false
	}
	_ = other.Unlock(ctx)
	return !done(held)
}

// An Unlock whose command is held up in the network reports an unknown
// outcome; the lock's lease ends on the server meanwhile, and the same owner
// takes the lock again: a fresh field, count 1. When the first unlock lands,
// it must not take that count: it would delete the lock under the new hold,
// which still believes it holds, and let another owner in.
func TestFaultLateUnlockSparesTheOwnersNextHold(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(c)
	o := l.NewOwner()
	stale, err := o.TryLock(ctx, key, 200*time.Millisecond)
	require.NoError(t, err)

	p.Hold(faultproxy.Script(script(t, "release.lua")), time.Second)
	uctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err = stale.Unlock(uctx)
	cancel()
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, "the unlock's reply never came")
	time.Sleep(300 * time.Millisecond) // the lease ran out on the server

	fresh, err := o.TryLock(ctx, key, time.Minute)
	if err != nil {
		// Refusing while the owner's unlock may still land is safe.
		require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
		return
	}
	defer func() { _ = fresh.Unlock(ctx) }()
	time.Sleep(time.Second) // the first unlock lands
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key), "the new hold keeps its count")
	assert.False(t, secondHolder(ctx, t, l, key, fresh), "no second holder while the new hold lasts")
}

// An acquire held up in the network reports an unknown outcome (its context
// ended); the owner takes the lock again with a long lease. When the first
// acquire lands it sets the whole lock's lease to its own, short one: the
// new hold's lease must not outlive the key.
func TestFaultLateAcquireSparesTheOwnersNextHold(t *testing.T) {
	p, c, _ := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(c)
	o := l.NewOwner()

	p.Hold(faultproxy.Script(script(t, "acquire.lua")), time.Second)
	actx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err := o.TryLock(actx, key, 200*time.Millisecond)
	cancel()
	require.Error(t, err, "the acquire's reply never came")

	fresh, err := o.TryLock(ctx, key, time.Minute)
	if err != nil {
		require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
		return
	}
	defer func() { _ = fresh.Unlock(ctx) }()
	time.Sleep(time.Second + 400*time.Millisecond) // the first acquire landed, and its lease ran out
	assert.False(t, secondHolder(ctx, t, l, key, fresh), "no second holder while the new hold lasts")
}

// A watchdog renewal held up in the network past the hold's give-up point:
// the hold is lost, its Unlock sends nothing, the key ends with its lease and
// the owner takes the lock again with a long lease. When the renewal lands
// it sets the whole lock's lease to the old, short one: the new hold's lease
// must not outlive the key.
func TestFaultLateRenewalSparesTheOwnersNextHold(t *testing.T) {
	p, c, _ := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(c, redisson.WithWatchdog())
	o := l.NewOwner()
	stale, err := o.TryLock(ctx, key, 300*time.Millisecond)
	require.NoError(t, err)
	for i := 0; i < 20; i++ { // every renewal before the give-up point
		p.Hold(faultproxy.Script(script(t, "renew.lua")), 1500*time.Millisecond)
	}
	require.True(t, locktest.WaitDone(stale, 5*time.Second), "no renewal came back: lost")
	p.ClearRules()
	require.ErrorIs(t, stale.Unlock(ctx), lockbridge.ErrNotHeld)
	time.Sleep(400 * time.Millisecond) // the key ended with its lease

	fresh, err := o.TryLock(ctx, key, 10*time.Second)
	if err != nil {
		require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
		return
	}
	defer func() { _ = fresh.Unlock(ctx) }()
	time.Sleep(2 * time.Second) // the renewals landed, and their lease ran out
	assert.False(t, secondHolder(ctx, t, l, key, fresh), "no second holder while the new hold lasts")
}

// An unlock whose reply was lost blocks its owner's next acquire of the lock
// (it may still land) until asking again gets the latch's answer: the first
// run ran, and the owner takes the lock again.
func TestFaultUnlockSettledByTheLatchUnblocksTheOwner(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	o := redisson.New(c).NewOwner()
	first, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	p.DropReply(faultproxy.Script(script(t, "release.lua")), 1, faultproxy.Close)
	require.ErrorIs(t, first.Unlock(ctx), lockbridge.ErrUnknownOutcome)

	_, err = o.TryLock(ctx, key, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, "refused: the unlock may still land")
	assert.NotErrorIs(t, err, lockbridge.ErrNotObtained)
	assert.Empty(t, hash(t, raw, key), "nothing sent")

	require.NoError(t, first.Unlock(ctx), "the latch answers: released")
	again, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key))
	require.NoError(t, again.Unlock(ctx))
}
