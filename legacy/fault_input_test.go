package legacy_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// A stored expiry of math.MaxInt64 is live for ever: Remaining used to add 1
// and wrap around to the most negative int64 (1 ns left, a waiter spinning).
func TestFaultRemainingMaxInt64(t *testing.T) {
	now := time.Now()
	for _, opts := range [][]legacy.Option{nil, {legacy.WithUnit(time.Second)}} {
		p, err := legacyproto.NewProfile(opts...)
		require.NoError(t, err)
		assert.Equal(t, time.Duration(math.MaxInt64), p.Remaining(math.MaxInt64, now), "%v", p)
		assert.Greater(t, p.Remaining(math.MaxInt64-1, now), 100*365*24*time.Hour, "%v", p)
		assert.True(t, p.TimeOf(math.MaxInt64).After(now), "%v", p)
		assert.Equal(t, time.Duration(0), p.Remaining(math.MinInt64, now), "%v", p)
	}

	// A waiter on such a lock waits by its backoff, not 1 ns at a time; and
	// the error names a time in the future.
	tg := locktest.Single(t)[0]
	key := locktest.Key(t, "k")
	_, err := tg.Client.Do(context.Background(), "SET", key, strconv.FormatInt(math.MaxInt64, 10))
	require.NoError(t, err)
	_, err = legacy.New(tg.Client).TryLock(context.Background(), key, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	assert.NotContains(t, err.Error(), "-9223372036854775808")
}

// No nil or zero input panics: each is an error wrapping ErrInvalid (Unlock
// of a nil Lock: ErrNotHeld, as before). A nil context used to panic.
func TestFaultNilInputs(t *testing.T) {
	tg := locktest.Single(t)[0]
	for _, mode := range []legacyproto.Mode{legacyproto.ModeAtomic, legacyproto.ModeClassic} {
		t.Run(mode.String(), func(t *testing.T) {
			l := legacy.New(tg.Client, legacyproto.WithMode(mode))
			held, err := l.TryLock(context.Background(), locktest.Key(t, "held"), time.Minute)
			require.NoError(t, err)
			locktest.NilInputs(t, l, held, locktest.Nils{
				Locker: (*legacy.Locker)(nil), ZeroLocker: new(legacy.Locker),
				Lock: (*legacy.Lock)(nil), ZeroLock: new(legacy.Lock),
			})
		})
	}
}
