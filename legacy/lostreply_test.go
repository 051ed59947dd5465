package legacy_test

// A reply lost in transit must never let a retried release, or an undo,
// meet another holder's lock.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// lossy runs every command on the real server, but loses the reply of the
// next run of the named script: the caller gets a deadline error although
// the script ran — what a timeout on the way back looks like.
type lossy struct {
	driver.Client
	mu   sync.Mutex
	lose string
}

func (l *lossy) LoseNext(script string) { l.mu.Lock(); l.lose = script; l.mu.Unlock() }

func (l *lossy) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	r, err := l.Client.Eval(ctx, s, keys, args...)
	l.mu.Lock()
	lost := l.lose == s.Name()
	if lost {
		l.lose = ""
	}
	l.mu.Unlock()
	if lost {
		return nil, fmt.Errorf("reply lost: %w", context.DeadlineExceeded)
	}
	return r, err
}

// Legacy values name no owner: two contenders of one profile that lock in
// the same millisecond write the same bytes. So an acquire whose reply was
// lost must not "undo" by deleting a value equal to its own: that may be
// the other contender's live lock.
func TestAcquireWhoseReplyIsLostNeverFreesAnotherHolder(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		now := time.Now()
		clock := func() time.Time { return now } // both compute the same W
		key := locktest.Key(t, "k")
		holder, err := legacy.New(tg.Client, legacy.WithClock(clock)).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		before, _, _ := tg.Client.Get(ctx, key)

		c := &lossy{Client: tg.Client}
		c.LoseNext("legacy/scripts/acquire.lua")
		_, err = legacy.New(c, legacy.WithClock(clock)).TryLock(ctx, key, time.Minute)
		require.ErrorIs(t, err, context.DeadlineExceeded)

		after, ok, err := tg.Client.Get(ctx, key)
		require.NoError(t, err)
		require.True(t, ok, "the holder's lock was deleted by a contender's undo")
		assert.Equal(t, before, after)
		require.NoError(t, holder.Unlock(ctx))
	})
}

func TestUnlockWhoseReplyIsLostEndsTheLock(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		c := &lossy{Client: tg.Client}
		l := legacy.New(c)
		key := locktest.Key(t, "k")
		lk, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)

		c.LoseNext("legacy/scripts/release.lua")
		err = lk.Unlock(ctx)
		require.Error(t, err, "the reply was lost")
		assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost, "the outcome is unknown: the lock ends")

		// The release did land: a successor takes the lock...
		succ, err := legacy.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		before, _, _ := tg.Client.Get(ctx, key)
		// ...and neither a retried Unlock nor a Refresh may touch it.
		assert.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
		assert.ErrorIs(t, lk.Refresh(ctx, time.Minute), lockbridge.ErrNotHeld)
		after, ok, _ := tg.Client.Get(ctx, key)
		require.True(t, ok, "the successor's lock was deleted")
		assert.Equal(t, before, after)
		require.NoError(t, succ.Unlock(ctx))
	})
}

func TestUnlockAfterAReplyErrorMayBeRetried(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	key := locktest.Key(t, "k")
	lk, err := legacy.New(tg.Client).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	// Scripting refused for a moment (an error reply: the script did not run).
	_, err = tg.Client.Do(ctx, "SCRIPT", "FLUSH")
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx), "EVAL after NOSCRIPT still releases")
	_, ok, _ := tg.Client.Get(ctx, key)
	assert.False(t, ok)
}
