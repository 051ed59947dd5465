package legacy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// Release and refresh by the owner window.
var windowBehaviours = []behaviour{
	{"LoserOverwriteThenRelease", testLoserOverwriteThenRelease},
	{"OutsideTheWindow", testOutsideTheWindow},
	{"PausedHolderSuccessorInWindow", testPausedHolderSuccessorInWindow},
	{"PausedHolderRealSleep", testPausedHolderRealSleep},
	{"ExpiredWithoutSuccessor", testExpiredWithoutSuccessor},
	{"ClassicRelease", testClassicRelease},
}

// A losing contender's GETSET replaced our W by its own X, near W: our
// release still frees the key, whatever the codec.
func testLoserOverwriteThenRelease(t *testing.T, tg locktest.Target) {
	for _, codec := range legacy.ValueCodecs() {
		for _, delta := range []int64{+3, -3, +5000, -5000} {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			l, err := legacy.New(tg.Client, legacy.WithValueCodec(codec)).TryLock(ctx, key, 10*time.Second)
			require.NoError(t, err)
			w := legacy.ExpiryOf(l.(*legacy.Lock))
			_, _, err = tg.Client.GetSet(ctx, key, codec.Encode(w+delta))
			require.NoError(t, err)
			require.NoError(t, l.Unlock(ctx), "%v %+d", codec, delta)
			_, ok := locktest.Get(t, tg.Client, key)
			assert.False(t, ok, "%v %+d: the key is freed", codec, delta)
			assert.NoError(t, l.Err())
		}
	}
}

// Outside the window the value is someone else's: left alone.
func testOutsideTheWindow(t *testing.T, tg locktest.Target) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	lk := legacy.New(tg.Client)
	for _, other := range []func(w int64) string{
		func(w int64) string { return legacy.ValueDecimal.Encode(w + 5001) },
		func(w int64) string { return legacy.ValueDecimal.Encode(w - 5001) },
		func(w int64) string { return "uuid:" + legacy.ValueDecimal.Encode(w) },
		func(w int64) string { return legacy.ValueJavaString.Encode(w) },
	} {
		l, err := lk.TryLock(ctx, key, 10*time.Second)
		require.NoError(t, err)
		v := other(legacy.ExpiryOf(l.(*legacy.Lock)))
		locktest.Set(t, tg.Client, key, v)
		err = l.Unlock(ctx)
		require.ErrorIs(t, err, lockbridge.ErrNotHeld)
		assert.Contains(t, err.Error(), "another holder's value")
		stored, _ := locktest.Get(t, tg.Client, key)
		assert.Equal(t, v, stored, "someone else's value is left alone")
		<-l.Done()
		assert.ErrorIs(t, l.Err(), lockbridge.ErrLost)
		_, err = tg.Client.Del(ctx, key)
		require.NoError(t, err)
	}
}

// A holder paused past its lease, and a successor whose value happens to
// fall inside the holder's window (the holder's lease is long, the
// successor's short): only the clock condition tells them apart. The
// holder's release and refresh fail with ErrNotHeld and the successor's
// bytes are untouched.
func testPausedHolderSuccessorInWindow(t *testing.T, tg locktest.Target) {
	for _, op := range []string{"unlock", "refresh"} {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, op)
		// The holder read its clock 61 s ago and was paused since: its lease
		// of 60 s ended a second ago.
		clock := &locktest.OffsetClock{}
		clock.Set(-61 * time.Second)
		holder := legacy.New(tg.Client, legacy.WithClock(clock.Now))
		l, err := holder.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		clock.Set(0)
		w := legacy.ExpiryOf(l.(*legacy.Lock))

		successor, err := legacy.New(tg.Client).TryLock(ctx, key, 5*time.Second)
		require.NoError(t, err, "the holder's lease has ended: a successor takes over")
		y := legacy.ExpiryOf(successor.(*legacy.Lock))
		require.LessOrEqual(t, 2*(y-w), int64(60_000), "the successor's value is inside the holder's window")
		theirs, _ := locktest.Get(t, tg.Client, key)

		if op == "unlock" {
			err = l.Unlock(ctx)
		} else {
			err = l.Refresh(ctx, time.Minute)
		}
		require.ErrorIs(t, err, lockbridge.ErrNotHeld)
		assert.Contains(t, err.Error(), "by the local clock")
		<-l.Done()
		assert.ErrorIs(t, l.Err(), lockbridge.ErrLost)
		stored, _ := locktest.Get(t, tg.Client, key)
		assert.Equal(t, theirs, stored, "the successor's lock is untouched")
		require.NoError(t, successor.Unlock(ctx))
	}
}

// The same with a real pause: a lease of 50 ms, a sleep well above it.
func testPausedHolderRealSleep(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		for _, op := range []string{"unlock", "refresh"} {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, mode.String()+op)
			l, err := legacy.New(tg.Client, legacyproto.WithMode(mode)).TryLock(ctx, key, 50*time.Millisecond)
			require.NoError(t, err)
			time.Sleep(150 * time.Millisecond)
			successor, err := legacy.New(tg.Client).TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			theirs, _ := locktest.Get(t, tg.Client, key)
			if op == "unlock" {
				err = l.Unlock(ctx)
			} else {
				err = l.Refresh(ctx, time.Minute)
			}
			require.ErrorIs(t, err, lockbridge.ErrNotHeld, "%v %s", mode, op)
			assert.ErrorIs(t, l.Err(), lockbridge.ErrLost)
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, theirs, stored, "%v %s: the successor's lock is untouched", mode, op)
			require.NoError(t, successor.Unlock(ctx))
		}
	}
}

// A lease that ended with nobody taking over: ErrNotHeld all the same
// (we were not protected to the end), and the key is left as it is, even
// when it holds exactly our bytes: a successor can write those very bytes
// (a contender with a clock behind ours, or of the same lease in the same
// millisecond), so deleting them could free a live lock. They expire by
// their value.
func testExpiredWithoutSuccessor(t *testing.T, tg locktest.Target) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	clock := &locktest.OffsetClock{}
	clock.Set(-10 * time.Second)
	lk := legacy.New(tg.Client, legacy.WithClock(clock.Now))
	l, err := lk.TryLock(ctx, key, time.Second)
	require.NoError(t, err)
	ours := l.(*legacy.Lock).Value()
	clock.Set(0)
	err = l.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.Contains(t, err.Error(), "the lease ended")
	stored, _ := locktest.Get(t, tg.Client, key)
	assert.Equal(t, ours, stored, "bytes equal to ours are left to expire")

	// After a loser's overwrite: left too.
	clock.Set(-10 * time.Second)
	_, err = tg.Client.Del(ctx, key)
	require.NoError(t, err)
	l, err = lk.TryLock(ctx, key, time.Second)
	require.NoError(t, err)
	clock.Set(0)
	x := legacy.ValueDecimal.Encode(legacy.ExpiryOf(l.(*legacy.Lock)) + 1)
	locktest.Set(t, tg.Client, key, x)
	require.ErrorIs(t, l.Unlock(ctx), lockbridge.ErrNotHeld)
	stored, _ = locktest.Get(t, tg.Client, key)
	assert.Equal(t, x, stored)
}

// Classic mode releases like the Java seed: DEL when the local clock says
// the lease has not ended, whatever the key holds; otherwise nothing.
func testClassicRelease(t *testing.T, tg locktest.Target) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	s := newSpy(tg.Client)
	lk := legacy.New(s, legacy.WithClassic())
	l, err := lk.TryLock(ctx, key, 10*time.Second)
	require.NoError(t, err)
	_, _, err = tg.Client.GetSet(ctx, key, legacy.ValueDecimal.Encode(legacy.ExpiryOf(l.(*legacy.Lock))+3))
	require.NoError(t, err)
	s.Commands()
	require.NoError(t, l.Unlock(ctx), "a loser's overwrite: freed all the same")
	assert.Equal(t, []string{"DEL"}, s.Commands())
	_, ok := locktest.Get(t, tg.Client, key)
	assert.False(t, ok)

	// Gone before the release: ErrNotHeld.
	l, err = lk.TryLock(ctx, key, 10*time.Second)
	require.NoError(t, err)
	_, err = tg.Client.Del(ctx, key)
	require.NoError(t, err)
	err = l.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.Contains(t, err.Error(), "the key is gone")

	// Paused past the lease by the local clock (the clock read 10 s back
	// at the acquire; now the pause is over): no DEL at all.
	clock := &locktest.OffsetClock{}
	clock.Set(-10 * time.Second)
	paused := legacy.New(s, legacy.WithClassic(), legacy.WithClock(clock.Now))
	l, err = paused.TryLock(ctx, key, time.Second)
	require.NoError(t, err)
	clock.Set(0)
	successor, err := legacy.New(tg.Client, legacy.WithClassic()).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	theirs, _ := locktest.Get(t, tg.Client, key)
	s.Commands()
	err = l.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.Contains(t, err.Error(), "by the local clock")
	assert.Empty(t, s.Commands(), "no DEL sent")
	stored, _ := locktest.Get(t, tg.Client, key)
	assert.Equal(t, theirs, stored)
	require.NoError(t, successor.Unlock(ctx))
}
