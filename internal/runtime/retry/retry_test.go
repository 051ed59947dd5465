package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
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

// A cluster refusal the adapter could not get past (the slot still moving)
// is waited after like a held lock; the same refusal after an attempt whose
// outcome is unknown, or with a backoff that gives up, is returned.
func TestLoopWaitsThroughClusterRefusals(t *testing.T) {
	for _, reply := range []string{
		"TRYAGAIN Multiple keys request during rehashing of slot",
		"ASK 3999 127.0.0.1:6381",
		"MOVED 3999 127.0.0.1:6381",
		"CLUSTERDOWN The cluster is down",
	} {
		t.Run(reply, func(t *testing.T) {
			refusal := fmt.Errorf("modern: acquire: %w", driver.ReplyError(reply))
			require.True(t, Refused(refusal))
			calls := 0
			got, err := Loop(context.Background(), nil, lockbridge.LinearBackoff(time.Millisecond, time.Millisecond), nil,
				func(context.Context) (string, time.Duration, error) {
					calls++
					if calls < 3 {
						return "", 0, refusal
					}
					return "lock", 0, nil
				})
			require.NoError(t, err)
			assert.Equal(t, "lock", got)

			_, err = Loop(context.Background(), nil, lockbridge.NoRetry(), nil,
				func(context.Context) (string, time.Duration, error) { return "", 0, refusal })
			assert.ErrorIs(t, err, driver.ReplyError(reply))

			unknown := &driver.UnknownOutcomeError{Command: "EVALSHA", Err: refusal}
			assert.False(t, Refused(unknown))
			calls = 0
			_, err = Loop(context.Background(), nil, lockbridge.LinearBackoff(time.Millisecond, time.Millisecond), nil,
				func(context.Context) (string, time.Duration, error) { calls++; return "", 0, unknown })
			assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
			assert.Equal(t, 1, calls)
		})
	}
	assert.False(t, Refused(driver.ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value")))
	assert.False(t, Refused(errors.New("EOF")))
}
