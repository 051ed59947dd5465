package legacy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// Go beside the Java seed, replayed command for command (internal/testing/javareplay).
var seedBehaviours = []behaviour{
	{"SeedHolderTakenOverByGo", testSeedHolderTakenOverByGo},
	{"GoHolderTakenOverBySeed", testGoHolderTakenOverBySeed},
	{"SeedPhantom", testSeedPhantom},
	{"ClassicNilGetSetAcquires", testClassicNilGetSetAcquires},
	{"SeedLoserOverwritesOurValue", testSeedLoserOverwritesOurValue},
	{"PausedHolderSeedSuccessor", testPausedHolderSeedSuccessor},
}

// A seed holder that never unlocks is taken over after its lease.
func testSeedHolderTakenOverByGo(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			w, ok, err := javareplay.Lock(ctx, tg.Client, key, 100*time.Millisecond, nil)
			require.NoError(t, err)
			require.True(t, ok)
			lk := legacy.New(tg.Client, legacyproto.WithMode(mode))
			// Seen from a clock a minute back (so that no stall of the test
			// can make it expire), the seed's lock is live.
			_, err = legacy.New(tg.Client, legacyproto.WithMode(mode),
				legacy.WithClock(locktest.Skewed(-time.Minute))).TryLock(ctx,
				key, time.Minute)
			require.ErrorIs(t, err, lockbridge.ErrNotObtained, "the seed's lock is live")
			l, err := lk.Lock(ctx, key, time.Minute)
			require.NoError(t, err)
			assert.Greater(t, time.Now().UnixMilli(), w, "not before the seed's lease ended")
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, l.(*legacy.Lock).Value(), stored)
			// The seed, back, sees a live lock (and can parse it).
			_, ok, err = javareplay.Lock(ctx, tg.Client, key, time.Minute, nil)
			require.NoError(t, err)
			assert.False(t, ok)
			require.NoError(t, l.Unlock(ctx))
		})
	}
}

// A Go holder that never unlocks is taken over by the seed after its lease.
func testGoHolderTakenOverBySeed(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			l, err := legacy.New(tg.Client, legacyproto.WithMode(mode)).TryLock(ctx, key, 100*time.Millisecond)
			require.NoError(t, err)
			_, ok, err := javareplay.Lock(ctx, tg.Client, key, time.Minute, locktest.Skewed(-time.Minute))
			require.NoError(t, err)
			assert.False(t, ok, "the Go lock is live for the seed")
			sw, err := javareplay.Acquire(ctx, tg.Client, key, time.Minute, nil)
			require.NoError(t, err)
			assert.Greater(t, time.Now().UnixMilli(), legacy.ExpiryOf(l.(*legacy.Lock)))
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, fmt.Sprint(sw), stored)
			require.ErrorIs(t, l.Unlock(ctx), lockbridge.ErrNotHeld)
			stored2, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, stored, stored2, "the late Go release leaves the seed's lock alone")
			require.NoError(t, javareplay.Unlock(ctx, tg.Client, key, sw, nil))
		})
	}
}

// The seed's phantom: its GETSET found no key (the holder's DEL landed
// between its GET and GETSET), so it reports failure, yet its value stays
// in the key, with no TTL, until it expires. Go treats it as the live lock
// it looks like, takes it over once expired, and its release frees the key.
func testSeedPhantom(t *testing.T, tg locktest.Target) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	locktest.Set(t, tg.Client, key, "1700000000001") // expired long ago
	s := newSpy(tg.Client)
	s.Before("GETSET", func() {
		_, err := tg.Client.Del(context.Background(), key)
		require.NoError(t, err)
	})
	p, ok, err := javareplay.Lock(ctx, s, key, 200*time.Millisecond, nil)
	require.NoError(t, err)
	assert.False(t, ok, "the seed reports failure on a nil GETSET")
	assert.Equal(t, []string{"SETNX", "GET", "GETSET"}, s.Commands())
	stored, present := locktest.Get(t, tg.Client, key)
	require.True(t, present)
	assert.Equal(t, fmt.Sprint(p), stored, "the phantom: the seed's value, nobody's lock")
	assert.Equal(t, int64(-1), locktest.PTTL(t, tg.Client, key))

	for _, mode := range modes {
		_, err = legacy.New(tg.Client, legacyproto.WithMode(mode),
			legacy.WithClock(locktest.Skewed(-time.Minute))).TryLock(ctx,
			key, time.Minute)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained, "the phantom looks live until it expires")
	}
	l, err := legacy.New(tg.Client).Lock(ctx, key, time.Minute)
	require.NoError(t, err)
	assert.Greater(t, time.Now().UnixMilli(), p)
	require.NoError(t, l.Unlock(ctx))
	_, present = locktest.Get(t, tg.Client, key)
	assert.False(t, present, "our release frees the key")
}

// Classic mode does not copy the phantom: a nil GETSET means our GETSET
// created the key, and the lock is ours.
func testClassicNilGetSetAcquires(t *testing.T, tg locktest.Target) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	locktest.Set(t, tg.Client, key, "1700000000001")
	s := newSpy(tg.Client)
	s.Before("GETSET", func() {
		_, err := tg.Client.Del(context.Background(), key)
		require.NoError(t, err)
	})
	l, err := legacy.New(s, legacy.WithClassic()).TryLock(ctx, key, time.Minute)
	require.NoError(t, err, "a nil GETSET: acquired")
	assert.Equal(t, []string{"SETNX", "GET", "GETSET"}, s.Commands())
	stored, _ := locktest.Get(t, tg.Client, key)
	assert.Equal(t, l.(*legacy.Lock).Value(), stored)
	require.NoError(t, l.Unlock(ctx))
	_, present := locktest.Get(t, tg.Client, key)
	assert.False(t, present)
}

// Two contenders see the same expired value. Go takes it over first; the
// seed's GETSET then overwrites our value with its own and, reading ours
// back, loses. Our release still frees the key (the owner window).
func testSeedLoserOverwritesOurValue(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			locktest.Set(t, tg.Client, key, "1700000000001")
			s := newSpy(tg.Client)
			var l lockbridge.Lock
			s.Before("GETSET", func() {
				var err error
				l, err = legacy.New(tg.Client, legacyproto.WithMode(mode)).TryLock(context.Background(), key, 10*time.Second)
				require.NoError(t, err, "Go takes the expired value over first")
			})
			x, ok, err := javareplay.Lock(ctx, s, key, 9*time.Second, nil) // X ≠ W, inside the window
			require.NoError(t, err)
			assert.False(t, ok, "the seed read our live value back: it lost")
			require.NotNil(t, l)
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, fmt.Sprint(x), stored, "the loser's GETSET overwrote our value")
			assert.NotEqual(t, l.(*legacy.Lock).Value(), stored)

			_, ok, err = javareplay.Lock(ctx, tg.Client, key, time.Second, nil)
			require.NoError(t, err)
			assert.False(t, ok, "still excluded")
			require.NoError(t, l.Unlock(ctx))
			_, present := locktest.Get(t, tg.Client, key)
			assert.False(t, present, "our release frees the key")
		})
	}
}

// A Go holder paused past its lease, a seed successor: the late release
// fails with ErrNotHeld and the seed's lock is untouched.
func testPausedHolderSeedSuccessor(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			l, err := legacy.New(tg.Client, legacyproto.WithMode(mode)).TryLock(ctx, key, 40*time.Millisecond)
			require.NoError(t, err)
			time.Sleep(120 * time.Millisecond)
			sw, ok, err := javareplay.Lock(ctx, tg.Client, key, 20*time.Millisecond, nil)
			require.NoError(t, err)
			require.True(t, ok)
			require.ErrorIs(t, l.Unlock(ctx), lockbridge.ErrNotHeld)
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, fmt.Sprint(sw), stored)
		})
	}
}
