package redisson_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

var fieldRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:[0-9]+$`)

// The bytes of a Redisson lock, on one server and in a cluster: a hash
// named for the lock, one field per owner counting its holds, a lease on
// the key, and "0" published on redisson_lock__channel:{name} when the last
// hold goes.
func TestLockOnTheWire(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "orders")
		l := redisson.New(tg.Client)
		sub, err := tg.Client.Subscribe(ctx, redisson.ChannelName(key))
		require.NoError(t, err)
		defer sub.Close()

		o := l.NewOwner()
		require.Regexp(t, fieldRE, o.Field())
		assert.Equal(t, l.ClientID()+":"+"1", o.Field(), "the first owner of a Locker is 1")
		first, err := o.TryLock(ctx, key, 10*time.Second)
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, tg.Client, key))
		assert.Equal(t, o.Field(), first.Token())
		assert.InDelta(t, 10000, locktest.PTTL(t, tg.Client, key), 1000)

		// Reentry: the count goes up and the lease is set again.
		second, err := o.TryLock(ctx, key, 20*time.Second)
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{o.Field(): 2}, hash(t, tg.Client, key))
		assert.Greater(t, locktest.PTTL(t, tg.Client, key), int64(15000))
		n, err := second.(*redisson.Lock).Owner().HoldCount(ctx, second.Key())
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)

		// Another owner, of this Locker or another, waits.
		for _, other := range []*redisson.Owner{l.NewOwner(), redisson.New(tg.Client).NewOwner()} {
			lk, err := other.TryLock(ctx, key, time.Second)
			assert.Nil(t, lk)
			var no *lockbridge.NotObtainedError
			require.ErrorAs(t, err, &no)
			require.ErrorIs(t, err, lockbridge.ErrNotObtained)
			assert.Greater(t, no.HolderTTL, 15*time.Second)
		}
		locked, err := l.IsLocked(ctx, key)
		require.NoError(t, err)
		assert.True(t, locked)

		// Unlocking one hold leaves the other, with the lease set again to
		// the hold's ttl or, longer, what the other hold has left (never
		// cutting its lease); nothing is published.
		require.NoError(t, first.Unlock(ctx))
		assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, tg.Client, key))
		assert.InDelta(t, 20000, locktest.PTTL(t, tg.Client, key), 1000)
		assert.True(t, done(first), "the unlocked hold is done")
		assert.False(t, done(second), "the other hold goes on")
		select {
		case m := <-sub.Messages():
			t.Fatalf("published %q while a hold is left", m.Payload)
		case <-time.After(50 * time.Millisecond):
		}

		require.NoError(t, second.Unlock(ctx))
		assert.Empty(t, hash(t, tg.Client, key), "the last unlock deletes the key")
		select {
		case m := <-sub.Messages():
			assert.Equal(t, redisson.ChannelName(key), m.Channel)
			assert.Equal(t, "0", m.Payload, "Redisson's UNLOCK_MESSAGE")
		case <-time.After(5 * time.Second):
			t.Fatal("no unlock message")
		}
		assert.NoError(t, second.Err())
		err = second.Unlock(ctx)
		assert.ErrorIs(t, err, lockbridge.ErrNotHeld, "a second Unlock of one hold")
		n, err = o.HoldCount(ctx, key)
		require.NoError(t, err)
		assert.Zero(t, n)
		if !tg.Cluster {
			latches := locktest.Do(t, tg.Client, "KEYS", "redisson_unlock_latch:*")
			assert.Empty(t, latches, "the unlock latches are deleted once answered, as Redisson does")
		}
	})
}

func TestChannelAndLatchNames(t *testing.T) {
	assert.Equal(t, "redisson_lock__channel:{orders}", redisson.ChannelName("orders"))
	assert.Equal(t, "redisson_lock__channel:a{b}c", redisson.ChannelName("a{b}c"))
	assert.Equal(t, "redisson_unlock_latch:{orders}:0123", redisson.LatchName("orders", "0123"))
	assert.Equal(t, "redisson_unlock_latch:a{b}c:0123", redisson.LatchName("a{b}c", "0123"))
}

// Locker.TryLock and Locker.Lock take a new owner each time: not reentrant.
func TestLockerCallsAreNotReentrant(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(tg.Client)
	lk, err := l.TryLock(ctx, key, 10*time.Second)
	require.NoError(t, err)
	_, err = l.TryLock(ctx, key, 10*time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	require.NoError(t, lk.Unlock(ctx))
}

// A hold whose field is gone — ForceUnlock, or the lease ran out — is not
// held: Unlock and Refresh say so and the hold counts as lost.
func TestForceUnlockAndNotHeld(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		l := redisson.New(tg.Client)
		sub, err := tg.Client.Subscribe(ctx, redisson.ChannelName(key))
		require.NoError(t, err)
		defer sub.Close()

		a, err := l.TryLock(ctx, key, 10*time.Second)
		require.NoError(t, err)
		ok, err := l.ForceUnlock(ctx, key)
		require.NoError(t, err)
		assert.True(t, ok)
		select {
		case m := <-sub.Messages():
			assert.Equal(t, "0", m.Payload)
		case <-time.After(5 * time.Second):
			t.Fatal("force unlock published nothing")
		}
		ok, err = l.ForceUnlock(ctx, key)
		require.NoError(t, err)
		assert.False(t, ok, "nothing left to delete")
		locked, err := l.IsLocked(ctx, key)
		require.NoError(t, err)
		assert.False(t, locked)

		var nh *lockbridge.NotHeldError
		require.ErrorAs(t, a.Refresh(ctx, time.Second), &nh)
		assert.Equal(t, lockbridge.ReasonGone, nh.Reason)
		assert.ErrorIs(t, a.Err(), lockbridge.ErrLost)
		require.ErrorIs(t, a.Unlock(ctx), lockbridge.ErrNotHeld)

		b, err := l.TryLock(ctx, key, 20*time.Millisecond)
		require.NoError(t, err)
		time.Sleep(60 * time.Millisecond)
		require.ErrorAs(t, b.Unlock(ctx), &nh, "the lease ran out")
		assert.ErrorIs(t, b.Err(), lockbridge.ErrLost)
	})
}

// A key that is not a hash is nobody's lock: the Redis error, not a wait.
func TestWrongType(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	locktest.Set(t, tg.Client, key, "v")
	l := redisson.New(tg.Client)
	for _, try := range []func(context.Context, string, time.Duration) (lockbridge.Lock, error){l.TryLock, l.Lock} {
		lk, err := try(ctx, key, time.Second)
		assert.Nil(t, lk)
		require.Error(t, err)
		assert.NotErrorIs(t, err, lockbridge.ErrNotObtained)
		assert.Contains(t, err.Error(), "WRONGTYPE")
	}
	v, _ := locktest.Get(t, tg.Client, key)
	assert.Equal(t, "v", v, "untouched")
}
