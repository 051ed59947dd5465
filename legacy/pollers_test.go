package legacy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// WithPollers: a Lock of a key the Locker has just released leaves it free
// for the hand-off window first (Poll/80 to Poll/40), and the Java seed
// polling meanwhile gets the lock.
func TestPollersYieldAfterOwnRelease(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	const poll = 4 * time.Second // a hand-off window of 50 to 100 ms
	lk := legacy.New(tg.Client, legacy.WithPollers(poll))
	l, err := lk.Lock(ctx, key, time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Unlock(ctx))
	start := time.Now()
	l, err = lk.Lock(ctx, key, time.Minute)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), poll/80-5*time.Millisecond, "took its own lock straight back")
	require.NoError(t, l.Unlock(ctx))

	// A poller that tries within the pause gets the lock.
	go func() {
		time.Sleep(10 * time.Millisecond)
		w, ok, err := javareplay.Lock(ctx, tg.Client, key, 200*time.Millisecond, time.Now)
		if assert.NoError(t, err) && assert.True(t, ok, "the poller got in") {
			time.Sleep(100 * time.Millisecond)
			assert.NoError(t, javareplay.Unlock(ctx, tg.Client, key, w, time.Now))
		}
	}()
	l, err = lk.Lock(ctx, key, time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Unlock(ctx))
}
