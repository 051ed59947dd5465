package modern_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/modern"
)

// Bad input never panics and never reaches Redis: it is an error wrapping
// ErrInvalid, from TryLock and from Lock alike.
func TestInvalidInput(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	ok := modern.New(tg.Client)
	cases := []struct {
		name   string
		locker *modern.Locker
		key    string
		ttl    time.Duration
	}{
		{"empty key", ok, "", time.Second},
		{"key too long", ok, strings.Repeat("k", check.MaxKeyLen+1), time.Second},
		{"zero ttl", ok, "k", 0},
		{"negative ttl", ok, "k", -time.Second},
		{"ttl below a millisecond", ok, "k", 999 * time.Microsecond},
		{"nil client", modern.New(nil), "k", time.Second},
		{"nil option", modern.New(tg.Client, nil), "k", time.Second},
		{"nil backoff", modern.New(tg.Client, modern.WithBackoff(nil)), "k", time.Second},
		{"negative pollers", modern.New(tg.Client, modern.WithPollers(-time.Millisecond)), "k", time.Second},
		{"bad exponential backoff", modern.New(tg.Client, modern.WithBackoff(lockbridge.ExponentialBackoff(0, time.Second))),
			"k", time.Second},
		{"bad linear backoff", modern.New(tg.Client, modern.WithBackoff(lockbridge.LinearBackoff(time.Second,
			time.Millisecond))), "k", time.Second},
		{"nil token func", modern.New(tg.Client, modern.WithTokenFunc(nil)), "k", time.Second},
		{"empty token", modern.New(tg.Client, modern.WithTokenFunc(func() (string, error) { return "", nil })), "k",
			time.Second},
		{"token too long", modern.New(tg.Client, modern.WithTokenFunc(func() (string, error) {
			return strings.Repeat("t", 1025), nil
		})), "k", time.Second},
		{"fence key off-slot", modern.New(tg.Client, modern.WithFencing()), "a}b", time.Second},
		{"nil locker", nil, "k", time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lk, err := c.locker.TryLock(ctx, c.key, c.ttl)
			assert.Nil(t, lk)
			require.ErrorIs(t, err, lockbridge.ErrInvalid, "TryLock")
			assert.True(t, strings.HasPrefix(err.Error(), "modern: "), "message %q", err)
			lk, err = c.locker.Lock(ctx, c.key, c.ttl)
			assert.Nil(t, lk)
			require.ErrorIs(t, err, lockbridge.ErrInvalid, "Lock")
			// Every call returns it, not just the first.
			_, err = c.locker.TryLock(ctx, c.key, c.ttl)
			require.ErrorIs(t, err, lockbridge.ErrInvalid, "TryLock again")
		})
	}
	n, err := tg.Client.Do(ctx, "DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, int64(0), n, "nothing reached Redis")

	t.Run("token func error", func(t *testing.T) {
		boom := errors.New("entropy exhausted")
		l := modern.New(tg.Client, modern.WithTokenFunc(func() (string, error) { return "", boom }))
		_, err := l.TryLock(ctx, "k", time.Second)
		assert.ErrorIs(t, err, boom)
		assert.False(t, errors.Is(err, lockbridge.ErrNotObtained))
	})

	t.Run("ttl is whole milliseconds", func(t *testing.T) {
		lk, err := ok.TryLock(ctx, locktest.Key(t, "k"), 1500*time.Microsecond)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now().Add(time.Millisecond), lk.ExpiresAt(), 5*time.Millisecond)
		_ = lk.Unlock(ctx)
	})
}

func TestCustomToken(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	n := 0
	l := modern.New(tg.Client, modern.WithTokenFunc(func() (string, error) {
		n++
		return "host-1/pid-42/" + string(rune('a'+n)), nil
	}))
	key := locktest.Key(t, "k")
	lk, err := l.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "host-1/pid-42/b", lk.Token())
	v, _ := locktest.Get(t, tg.Client, key)
	assert.Equal(t, "host-1/pid-42/b", v)
	require.NoError(t, lk.Unlock(ctx))
}

func TestZeroLockerIsInvalid(t *testing.T) {
	var l modern.Locker
	_, err := l.TryLock(context.Background(), "k", time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	_, err = l.Lock(context.Background(), "k", time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}
