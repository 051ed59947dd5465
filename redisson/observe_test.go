package redisson

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/logtest"
)

// The watchdog logs the renewal that found the field gone, and the loss.
func TestWatchdogLogsTheLoss(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	rec, log := logtest.New()
	l := New(tg.Client, WithWatchdog(), WithLogger(log))
	key := locktest.Key(t, "orders")
	lk, err := l.TryLock(ctx, key, 300*time.Millisecond)
	require.NoError(t, err)
	locktest.Do(t, tg.Client, "DEL", key) // a forceUnlock from elsewhere, unpublished
	require.True(t, locktest.WaitDone(lk, 2*time.Second))
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)

	r, ok := rec.Wait("background refresh failed", time.Second)
	require.True(t, ok)
	assert.Equal(t, "not_held", r.Attrs["lockbridge.lock.outcome"])
	lost, ok := rec.Wait("lock lost", time.Second)
	require.True(t, ok)
	assert.Equal(t, "redisson", lost.Attrs["lockbridge.lock.system"])
	assert.Equal(t, key, lost.Attrs["lockbridge.lock.key"])
}
