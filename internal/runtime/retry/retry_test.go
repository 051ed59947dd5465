package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errHeld = fmt.Errorf("held: %w", lockbridge.ErrNotObtained)

func TestLoopRetriesUntilObtained(t *testing.T) {
	calls := 0
	got, err := Loop(context.Background(), nil, lockbridge.LinearBackoff(time.Millisecond, time.Millisecond), nil,
		func(context.Context) (string, time.Duration, error) {
			calls++
			if calls < 3 {
				return "", 0, errHeld
			}
			return "lock", 0, nil
		})
	require.NoError(t, err)
	assert.Equal(t, "lock", got)
	assert.Equal(t, 3, calls)
}

func TestLoopStopsOnOtherErrors(t *testing.T) {
	boom := errors.New("connection refused")
	calls := 0
	_, err := Loop(context.Background(), nil, lockbridge.LinearBackoff(time.Millisecond, time.Millisecond), nil,
		func(context.Context) (int, time.Duration, error) { calls++; return 0, 0, boom })
	assert.ErrorIs(t, err, boom)
	assert.False(t, errors.Is(err, lockbridge.ErrNotObtained), "a Redis error is never disguised as not obtained")
	assert.Equal(t, 1, calls)
}

func TestLoopNoRetryMakesOneAttempt(t *testing.T) {
	calls := 0
	_, err := Loop(context.Background(), nil, lockbridge.NoRetry(), nil,
		func(context.Context) (int, time.Duration, error) { calls++; return 0, 0, errHeld })
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
	assert.Equal(t, 1, calls)
}

func TestLoopContextEndWrapsBoth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := Loop(ctx, nil, lockbridge.LinearBackoff(5*time.Millisecond, 5*time.Millisecond), nil,
		func(context.Context) (int, time.Duration, error) { return 0, 0, errHeld })
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// A context cancelled before the first attempt: the attempt's own error
	// (say, the driver's context error) still comes back as not obtained.
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Loop(cctx, nil, lockbridge.NoRetry(), nil,
		func(ctx context.Context) (int, time.Duration, error) { return 0, 0, ctx.Err() })
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
	assert.ErrorIs(t, err, context.Canceled)

	// A Redis error of the last attempt stays visible.
	boom := errors.New("NOPERM")
	_, err = Loop(cctx, nil, lockbridge.NoRetry(), nil,
		func(ctx context.Context) (int, time.Duration, error) { return 0, 0, boom })
	assert.ErrorIs(t, err, boom)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestLoopNeverWaitsPastTheHolder(t *testing.T) {
	// The backoff says an hour; the holder has 1 ms left: the loop retries
	// after the holder's time, not the backoff's.
	calls := 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Loop(ctx, nil, lockbridge.LinearBackoff(time.Hour, time.Hour), nil,
		func(context.Context) (int, time.Duration, error) {
			calls++
			if calls == 1 {
				return 0, time.Millisecond, errHeld
			}
			return 1, 0, nil
		})
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
}

func TestLoopWakesOnNotification(t *testing.T) {
	wake := make(chan struct{}, 1)
	calls := 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Loop(ctx, nil, lockbridge.LinearBackoff(time.Hour, time.Hour), wake,
		func(context.Context) (int, time.Duration, error) {
			calls++
			if calls == 1 {
				wake <- struct{}{} // the holder releases while we are about to wait
				return 0, 0, errHeld
			}
			return 1, 0, nil
		})
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
}
