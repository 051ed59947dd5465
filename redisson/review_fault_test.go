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
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder while the new hold lasts (its Err: %v)", fresh.Err())
}
