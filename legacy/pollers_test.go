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

// WithPollers: Lock waits as a poller does, a pause of half to all of the
// interval between attempts, not its 10 ms backoff: a holder that releases
// early is found at the next poll.
func TestPollersWaitAsAPoller(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	const poll = 400 * time.Millisecond
	w, ok, err := javareplay.Lock(ctx, tg.Client, key, 10*time.Second, time.Now)
	require.NoError(t, err)
	require.True(t, ok)
	go func() {
		time.Sleep(50 * time.Millisecond)
		assert.NoError(t, javareplay.Unlock(ctx, tg.Client, key, w, time.Now))
	}()
	start := time.Now()
	l, err := legacy.New(tg.Client, legacy.WithPollers(poll)).Lock(ctx, key, time.Minute)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), poll/2, "attempted again before a poller's pause")
	require.NoError(t, l.Unlock(ctx))
}
