package redisson_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// With the watchdog a hold outlives many leases; when its field is gone
// the watchdog reports the lock lost.
func TestWatchdog(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(tg.Client, redisson.WithWatchdog())
	lk, err := l.TryLock(ctx, key, 300*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(time.Second) // more than three leases
	assert.NoError(t, lk.Err())
	assert.Len(t, hash(t, tg.Client, key), 1, "still held")
	assert.Greater(t, locktest.PTTL(t, tg.Client, key), int64(0))

	ok, err := l.ForceUnlock(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, locktest.WaitDone(lk, 5*time.Second), "the watchdog found the field gone")
	assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	var nh *lockbridge.NotHeldError
	assert.ErrorAs(t, lk.Err(), &nh)
}

// Without the watchdog the lease ends by itself, as a Java lock taken with
// a leaseTime.
func TestNoWatchdogLeaseEnds(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	lk, err := redisson.New(tg.Client).TryLock(ctx, key, 100*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	locked, err := redisson.New(tg.Client).IsLocked(ctx, key)
	require.NoError(t, err)
	assert.False(t, locked)
	require.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
}
