package logtest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
)

// CheckLossLogged takes a lock with l — a Locker whose locks refresh
// themselves in the background, logging to rec — has drop delete it behind
// its back, and checks that the refresher logged the loss, for package
// system, once Done closed (the loss is logged after Done closes: a logger
// that blocks must not hold the loss signal).
func CheckLossLogged(t *testing.T, l lockbridge.Locker, rec *Recorder, system string, drop func(key string)) {
	t.Helper()
	key := locktest.Key(t, "orders")
	lk, err := l.TryLock(context.Background(), key, 300*time.Millisecond)
	require.NoError(t, err)
	assert.Empty(t, rec.Records(""), "nothing logged while all goes well")
	drop(key) // behind the holder's back
	require.True(t, locktest.WaitDone(lk, 2*time.Second))
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)

	lost, ok := rec.Wait("lockbridge: lock lost", 2*time.Second)
	require.True(t, ok, "the loss is logged")
	require.Len(t, rec.Records(""), 1, "one record: the loss")
	assert.Equal(t, "lockbridge: lock lost", lost.Msg)
	assert.Equal(t, slog.LevelError, lost.Level)
	assert.Contains(t, lost.Attrs["error"], system+": lock lost")
	assert.Equal(t, system, lost.Attrs["lockbridge.lock.system"])
	assert.Equal(t, key, lost.Attrs["lockbridge.lock.key"])
}

// Del returns the drop of CheckLossLogged for one server: DEL key on c.
func Del(t *testing.T, c driver.Client) func(key string) {
	return func(key string) { locktest.Do(t, c, "DEL", key) }
}
