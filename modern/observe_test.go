package modern

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/logtest"
)

// The auto-refresh logs the refresh that found the lock gone, and the loss.
func TestAutoRefreshLogsTheLoss(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	rec, log := logtest.New()
	l := New(tg.Client, WithAutoRefresh(), WithLogger(log))
	key := locktest.Key(t, "orders")
	lk, err := l.TryLock(ctx, key, 300*time.Millisecond)
	require.NoError(t, err)
	assert.Empty(t, rec.Records(""), "nothing logged while all goes well")
	locktest.Do(t, tg.Client, "DEL", key) // behind the holder's back
	require.True(t, locktest.WaitDone(lk, 2*time.Second))
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)

	r := rec.Records("background refresh failed")
	require.Len(t, r, 1)
	assert.Equal(t, slog.LevelError, r[0].Level)
	assert.Equal(t, "not_held", r[0].Attrs["lockbridge.lock.outcome"])
	assert.Equal(t, key, r[0].Attrs["lockbridge.lock.key"])
	lost, ok := rec.Wait("lock lost", time.Second)
	require.True(t, ok)
	assert.Equal(t, slog.LevelError, lost.Level)
	assert.Equal(t, "modern", lost.Attrs["lockbridge.lock.system"])
	assert.Equal(t, key, lost.Attrs["lockbridge.lock.key"])
}
