package lockopt

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
)

func TestBackoffRejectsBadArguments(t *testing.T) {
	for name, b := range map[string]lockbridge.Backoff{
		"nil":                   nil,
		"exponential zero min":  lockbridge.ExponentialBackoff(0, time.Second),
		"exponential max < min": lockbridge.ExponentialBackoff(time.Second, time.Millisecond),
		"linear negative step":  lockbridge.LinearBackoff(-time.Millisecond, time.Second),
		"linear max < step":     lockbridge.LinearBackoff(time.Second, time.Millisecond),
	} {
		t.Run(name, func(t *testing.T) {
			e := For("modern")
			var dst lockbridge.Backoff
			e.Backoff(&dst, b)
			err := e.Err()
			require.Error(t, err)
			assert.True(t, errors.Is(err, lockbridge.ErrInvalid), "got %v", err)
			assert.Nil(t, dst, "an invalid backoff is not stored")
		})
	}
}

func TestBackoffKeepsGoodOnes(t *testing.T) {
	for _, b := range []lockbridge.Backoff{lockbridge.ExponentialBackoff(time.Millisecond, time.Second),
		lockbridge.LinearBackoff(time.Millisecond, time.Second), lockbridge.NoRetry()} {
		e := For("modern")
		var dst lockbridge.Backoff
		e.Backoff(&dst, b)
		require.NoError(t, e.Err())
		assert.Equal(t, b, dst)
	}
}
