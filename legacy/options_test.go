package legacy_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

var _ lockbridge.Locker = (*legacy.Locker)(nil)
var _ lockbridge.Lock = (*legacy.Lock)(nil)

// Invalid options never panic: every TryLock and Lock reports them.
func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	c := locktest.Single(t)[0].Client
	ctx := locktest.Ctx(t)
	for name, opt := range map[string]legacy.Option{
		"mode":                legacyproto.WithMode(legacyproto.Mode(7)),
		"unit":                legacy.WithUnit(time.Minute),
		"unit zero":           legacy.WithUnit(0),
		"key codec":           legacy.WithKeyCodec(legacy.KeyCodec(-1)),
		"value codec":         legacy.WithValueCodec(legacy.ValueCodec(5)),
		"clock":               legacy.WithClock(nil),
		"safety ttl":          legacy.WithSafetyTTL(-time.Second),
		"safety µs":           legacy.WithSafetyTTL(time.Microsecond),
		"backoff":             legacy.WithBackoff(nil),
		"pollers":             legacy.WithPollers(-time.Millisecond),
		"bad backoff":         legacy.WithBackoff(lockbridge.ExponentialBackoff(0, 0)),
		"nil option":          nil,
		"skew margin":         legacy.WithSkewMargin(-time.Millisecond),
		"server clock margin": legacy.WithServerClockMargin(-time.Second),
	} {
		lk := legacy.New(c, opt)
		for i := 0; i < 2; i++ {
			l, err := lk.TryLock(ctx, "k", time.Second)
			assert.Nil(t, l)
			assert.ErrorIs(t, err, lockbridge.ErrInvalid, name)
			assert.True(t, strings.HasPrefix(err.Error(), "legacy: "), err.Error())
			l, err = lk.Lock(ctx, "k", time.Second)
			assert.Nil(t, l)
			assert.ErrorIs(t, err, lockbridge.ErrInvalid, name)
			assert.False(t, errors.Is(err, lockbridge.ErrNotObtained), name)
		}
		_, err := legacyproto.NewProfile(opt)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, name)
	}
	_, ok := locktest.Get(t, c, "k")
	assert.False(t, ok, "nothing was written")

	// Every invalid option is reported, not just the first.
	_, err := legacy.New(c, legacy.WithUnit(time.Hour), legacy.WithClock(nil)).TryLock(ctx, "k", time.Second)
	assert.Contains(t, err.Error(), "unit 1h0m0s")
	assert.Contains(t, err.Error(), "nil clock")

	_, err = legacy.New(nil).TryLock(ctx, "k", time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	var nilLocker *legacy.Locker
	_, err = nilLocker.TryLock(ctx, "k", time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	c := locktest.Single(t)[0].Client
	ctx := locktest.Ctx(t)
	lk := legacy.New(c)
	for _, tc := range []struct {
		key string
		ttl time.Duration
	}{
		{"", time.Second},
		{strings.Repeat("k", 64<<10+1), time.Second},
		{"k", 0},
		{"k", -time.Second},
		{"k", 999 * time.Microsecond},
	} {
		_, err := lk.TryLock(ctx, tc.key, tc.ttl)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, "%d bytes, %v", len(tc.key), tc.ttl)
		_, err = lk.Lock(ctx, tc.key, tc.ttl)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	}
	l, err := lk.TryLock(ctx, "k", time.Millisecond)
	require.NoError(t, err, "one unit is enough")
	_ = l.Unlock(ctx)

	// A context already ended is the Redis call's error, not "not obtained".
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, mode := range modes {
		_, err = legacy.New(c, legacyproto.WithMode(mode)).TryLock(cctx, "k2", time.Second)
		assert.ErrorIs(t, err, context.Canceled)
		assert.False(t, errors.Is(err, lockbridge.ErrNotObtained))
	}
}

// Attempt is one try that tells a waiting loop how long the holder has left.
func TestAttempt(t *testing.T) {
	t.Parallel()
	c := locktest.Single(t)[0].Client
	ctx := locktest.Ctx(t)
	now := time.UnixMilli(1700000000000).Add(250 * time.Microsecond)
	for _, mode := range modes {
		key := locktest.Key(t, mode.String())
		lk := legacy.New(c, legacyproto.WithMode(mode), legacy.WithClock(locktest.At(now)))
		l, left, err := attempt(ctx, lk, key, time.Second)
		require.NoError(t, err)
		assert.Equal(t, time.Duration(0), left)
		assert.Equal(t, int64(1700000001001), legacy.ExpiryOf(l))

		l2, left, err := attempt(ctx, lk, key, time.Second)
		assert.Nil(t, l2)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		assert.Equal(t, time.Second+time.Millisecond+750*time.Microsecond, left, "until W has passed: W+1 ms − now")

		locktest.Set(t, c, key, "uuid:1")
		_, left, err = attempt(ctx, lk, key, time.Second)
		require.ErrorAs(t, err, new(*legacy.ForeignValueError))
		assert.Equal(t, time.Duration(0), left, "unknown for a foreign value")

		_, _, err = attempt(ctx, lk, "", time.Second)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	}
}

func TestNilLock(t *testing.T) {
	var l *legacy.Lock
	ctx := context.Background()
	assert.ErrorIs(t, l.Unlock(ctx), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, l.Refresh(ctx, time.Second), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, l.Err(), lockbridge.ErrNotHeld)
	<-l.Done()
	assert.Equal(t, "", l.Key())
	assert.Equal(t, "", l.Token())
	assert.Equal(t, "", l.Value())
	assert.True(t, l.ExpiresAt().IsZero())
}

func TestModeAndCodecNames(t *testing.T) {
	assert.Equal(t, "atomic", legacyproto.ModeAtomic.String())
	assert.Equal(t, "classic", legacyproto.ModeClassic.String())
	assert.Equal(t, "Mode(9)", legacyproto.Mode(9).String())
	assert.Equal(t, "KeyCodec(9)", legacy.KeyCodec(9).String())
}

// Unlock and Refresh racing on one lock: exactly one Unlock wins, and the
// lock ends released, never lost.
func TestConcurrentUnlockRefresh(t *testing.T) {
	t.Parallel()
	for _, tg := range locktest.Single(t) {
		for _, mode := range modes {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, tg.Name+mode.String())
			l, err := legacy.New(tg.Client, legacyproto.WithMode(mode)).TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			var wg sync.WaitGroup
			var unlocked atomic.Int32
			for i := 0; i < 8; i++ {
				wg.Add(2)
				go func() {
					defer wg.Done()
					if err := l.Unlock(ctx); err == nil {
						unlocked.Add(1)
					} else {
						assert.ErrorIs(t, err, lockbridge.ErrNotHeld)
					}
				}()
				go func() {
					defer wg.Done()
					if err := l.Refresh(ctx, time.Minute); err != nil {
						assert.ErrorIs(t, err, lockbridge.ErrNotHeld)
					}
					_ = l.Token()
					_ = l.ExpiresAt()
				}()
			}
			wg.Wait()
			assert.Equal(t, int32(1), unlocked.Load())
			<-l.Done()
			assert.NoError(t, l.Err())
			_, ok := locktest.Get(t, tg.Client, key)
			assert.False(t, ok)
		}
	}
}
