package retry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
)

func TestCourtesyOffChangesNothing(t *testing.T) {
	b := lockbridge.LinearBackoff(time.Millisecond, time.Millisecond)
	var nilC *Courtesy
	assert.Equal(t, b, nilC.Backoff(b))
	assert.Equal(t, b, (&Courtesy{}).Backoff(b))

	// Inactive: the backoff's own delay, and notices cut waits short.
	c := &Courtesy{Poll: time.Hour, Active: func() bool { return false }}
	d, again := c.Backoff(b).Delay(1)
	assert.True(t, again)
	assert.Equal(t, time.Millisecond, d)
	assert.False(t, c.Backoff(b).(quiet).Quiet())
}

func TestCourtesyWaitsAsAPoller(t *testing.T) {
	c := &Courtesy{Poll: 100 * time.Millisecond}
	b := c.Backoff(lockbridge.LinearBackoff(time.Millisecond, time.Millisecond))
	for n := 1; n < 50; n++ {
		d, again := b.Delay(n)
		require.True(t, again)
		require.GreaterOrEqual(t, d, 50*time.Millisecond)
		require.LessOrEqual(t, d, 100*time.Millisecond)
	}
	assert.True(t, b.(quiet).Quiet())

	// A backoff that gives up still ends the wait.
	_, again := c.Backoff(lockbridge.NoRetry()).Delay(1)
	assert.False(t, again)
}

func TestCourtesyLoopIgnoresNotices(t *testing.T) {
	// A wake arrives at once; a courteous wait lets it pass and sleeps its
	// pause (at least 25 ms of a 50 ms poll) before the second attempt.
	c := &Courtesy{Poll: 50 * time.Millisecond}
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	var at []time.Time
	_, err := Loop(context.Background(), nil, c.Backoff(lockbridge.LinearBackoff(time.Hour, time.Hour)), wake,
		func(context.Context) (int, time.Duration, error) {
			at = append(at, time.Now())
			if len(at) == 1 {
				return 0, 0, errHeld
			}
			return 1, 0, nil
		})
	require.NoError(t, err)
	require.Len(t, at, 2)
	assert.GreaterOrEqual(t, at[1].Sub(at[0]), 25*time.Millisecond)
	assert.Len(t, wake, 1, "the notice was not consumed")
}
