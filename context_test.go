package lockbridge_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redlock"
)

// Typed gives each package's concrete lock from TryLock and Lock.
func TestTyped(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	key := locktest.Key(t, "k")

	m, err := lockbridge.Typed[*modern.Lock](modern.New(tg.Client, modern.WithFencing()).TryLock(ctx, key, time.Minute))
	require.NoError(t, err)
	assert.Positive(t, m.Fence())
	require.NoError(t, m.Unlock(ctx))

	g, err := lockbridge.Typed[*legacy.Lock](legacy.New(tg.Client).Lock(ctx, key, time.Minute))
	require.NoError(t, err)
	assert.NotEmpty(t, g.Value())
	require.NoError(t, g.Unlock(ctx))

	mg, err := lockbridge.Typed[*migrate.Lock](migrate.New(tg.Client,
		migrate.WithPhase(migrate.PhaseDualWrite)).TryLock(ctx, key, time.Minute))
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseDualWrite, mg.Phase())
	require.NoError(t, mg.Unlock(ctx))

	// The call's own error passes through.
	held, err := modern.New(tg.Client).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	_, err = lockbridge.Typed[*modern.Lock](modern.New(tg.Client).TryLock(ctx, key, time.Minute))
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	require.NoError(t, held.Unlock(ctx))

	// The wrong type: an error, and the lock released rather than leaked.
	_, err = lockbridge.Typed[*redlock.Lock](modern.New(tg.Client).TryLock(ctx, key, time.Minute))
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
	_, ok, err := tg.Client.Get(ctx, key)
	require.NoError(t, err)
	assert.False(t, ok, "the lock of the wrong type was released")

	_, err = lockbridge.Typed[*modern.Lock](nil, nil)
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
}

// WithLock's context ends when the lock goes, with the lock's error as its
// cause.
func TestWithLock(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()

	t.Run("lost", func(t *testing.T) {
		key := locktest.Key(t, "k")
		lk, err := modern.New(tg.Client, modern.WithAutoRefresh()).TryLock(ctx, key, 300*time.Millisecond)
		require.NoError(t, err)
		lctx, cancel := lockbridge.WithLock(ctx, lk)
		defer cancel()
		_, err = tg.Client.Del(ctx, key) // the next refresh finds it gone
		require.NoError(t, err)
		select {
		case <-lctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the context outlived the lock")
		}
		require.ErrorIs(t, context.Cause(lctx), lockbridge.ErrLost)
		var nh *lockbridge.NotHeldError
		require.ErrorAs(t, context.Cause(lctx), &nh)
		assert.Equal(t, lockbridge.ReasonGone, nh.Reason)
	})
	t.Run("released", func(t *testing.T) {
		lk, err := legacy.New(tg.Client).TryLock(ctx, locktest.Key(t, "k"), time.Minute)
		require.NoError(t, err)
		lctx, cancel := lockbridge.WithLock(ctx, lk)
		defer cancel()
		require.NoError(t, lctx.Err(), "live while held")
		require.NoError(t, lk.Unlock(ctx))
		<-lctx.Done()
		require.ErrorIs(t, context.Cause(lctx), lockbridge.ErrNotHeld)
	})
	t.Run("cancel keeps the lock", func(t *testing.T) {
		key := locktest.Key(t, "k")
		lk, err := modern.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		lctx, cancel := lockbridge.WithLock(ctx, lk)
		cancel()
		<-lctx.Done()
		assert.True(t, errors.Is(context.Cause(lctx), context.Canceled))
		select {
		case <-lk.Done():
			t.Fatal("cancel released the lock")
		default:
		}
		require.NoError(t, lk.Unlock(ctx))
	})
	t.Run("bad input", func(t *testing.T) {
		//lint:ignore SA1012 a nil context is the bad input under test
		c, cancel := lockbridge.WithLock(nil, nil) //nolint:staticcheck
		defer cancel()
		<-c.Done()
		assert.ErrorIs(t, context.Cause(c), lockbridge.ErrInvalid)
		c, cancel = lockbridge.WithLock(ctx, nil)
		defer cancel()
		<-c.Done()
		assert.ErrorIs(t, context.Cause(c), lockbridge.ErrInvalid)
	})
}
