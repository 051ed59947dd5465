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
	ctx := context.Background()
	for _, mode := range []legacy.Mode{legacy.ModeAtomic, legacy.ModeClassic} {
		l := legacy.New(tg.Client, legacy.WithMode(mode))
		held, err := l.TryLock(ctx, locktest.Key(t, "held"+strconv.Itoa(int(mode))), time.Minute)
		require.NoError(t, err)
		var nilCtx context.Context
		var nilLocker *legacy.Locker
		var nilLock *legacy.Lock
		for _, c := range []struct {
			name string
			call func() error
		}{
			{"TryLock nil ctx", func() error { _, err := l.TryLock(nilCtx, "k", time.Second); return err }},
			{"Lock nil ctx", func() error { _, err := l.Lock(nilCtx, "k", time.Second); return err }},
			{"Refresh nil ctx", func() error { return held.Refresh(nilCtx, time.Second) }},
			{"Unlock nil ctx", func() error { return held.Unlock(nilCtx) }},
			{"nil Locker TryLock", func() error { _, err := nilLocker.TryLock(ctx, "k", time.Second); return err }},
			{"nil Locker Lock", func() error { _, err := nilLocker.Lock(ctx, "k", time.Second); return err }},
			{"zero Locker TryLock", func() error { _, err := new(legacy.Locker).TryLock(ctx, "k", time.Second); return err }},
			{"zero Locker Lock", func() error { _, err := new(legacy.Locker).Lock(ctx, "k", time.Second); return err }},
			{"nil Lock Refresh", func() error { return nilLock.Refresh(ctx, time.Second) }},
			{"zero Lock Unlock", func() error { return new(legacy.Lock).Unlock(ctx) }},
			{"zero Lock Refresh", func() error { return new(legacy.Lock).Refresh(ctx, time.Second) }},
		} {
			t.Run(mode.String()+"/"+c.name, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = c.call() })
				assert.ErrorIs(t, err, lockbridge.ErrInvalid)
			})
		}
		assert.ErrorIs(t, nilLock.Unlock(ctx), lockbridge.ErrNotHeld)
		assert.NoError(t, held.Unlock(ctx), "the lock is still held after the bad calls")
	}
}
