package legacy_test

import (
	"context"
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

// Skewing every client's clock against the real server's TIME is the same
// as skewing the server: clientsAhead is how far the clients' clocks run
// ahead of the server's (the server is that much behind).

// The Redis host's clock 50 ms behind the clients', and a holder that
// releases (or refreshes) 20 ms after its lease ended by its own clock: the
// Java seed that took over legitimately in between keeps its lock — the
// late release is refused with ErrNotHeld and leaves the successor's bytes,
// the late refresh does not overwrite them, and nobody else gets in while
// the successor holds. Exclusion is counted by a guard (a Redis counter
// that every party believing it holds enters), over 20 rounds each.
// Judging the owner window by the server's clock, as before, let the late
// holder delete or overwrite the successor's value in every round.
func TestFaultOwnerWindowServerBehind(t *testing.T) {
	tg := locktest.Single(t)[0]
	s := locktest.LateHolder{
		ClientsAhead: 50 * time.Millisecond, Late: 20 * time.Millisecond,
		Lease: 10 * time.Second, SuccLease: time.Second, Rounds: 20,
		Take: func(t *testing.T, ctx context.Context, key string, now func() time.Time) (lockbridge.Lock, int64) {
			l, err := legacy.New(tg.Client, legacy.WithClock(now)).TryLock(ctx, key, 10*time.Second)
			require.NoError(t, err)
			return l, legacy.ExpiryOf(l.(*legacy.Lock))
		},
	}
	for _, op := range []string{"unlock", "refresh"} {
		t.Run(op, func(t *testing.T) { s.Run(t, locktest.Ctx(t), tg.Client, op) })
	}
}

// The Redis host's clock 2 s ahead of the clients': a release or refresh
// sent with most of the lease left succeeds (no false loss) under the
// default server-clock margin, and the refresh writes its new value. Before,
// the server's clock decided, and both failed with ErrNotHeld.
func TestFaultOwnerWindowServerAhead(t *testing.T) {
	tg := locktest.Single(t)[0]
	const serverAhead = 2 * time.Second
	for _, op := range []string{"unlock", "refresh"} {
		t.Run(op, func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			lk := legacy.New(tg.Client, legacy.WithClock(locktest.Skewed(-serverAhead)))
			l, err := lk.TryLock(ctx, key, time.Second)
			require.NoError(t, err)
			if op == "unlock" {
				require.NoError(t, l.Unlock(ctx))
				_, ok := locktest.Get(t, tg.Client, key)
				assert.False(t, ok, "released")
				return
			}
			require.NoError(t, l.Refresh(ctx, time.Second))
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, l.(*legacy.Lock).Value(), stored, "the new expiry is written")
			assert.NoError(t, l.Err())
			require.NoError(t, l.Unlock(ctx))
		})
	}

	// Beyond the margin the server's clock refuses (the second guard).
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "margin0")
	lk := legacy.New(tg.Client, legacy.WithClock(locktest.Skewed(-serverAhead)), legacy.WithServerClockMargin(0))
	l, err := lk.TryLock(ctx, key, time.Second)
	require.NoError(t, err)
	err = l.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.Contains(t, err.Error(), "by the server's clock")
}

// A release that reaches Redis long after it was decided (a pause between
// reading the clock and the script running, modelled by a clock that stood
// still): the caller's clock said the lease had not ended, the server's
// says it ended more than the margin ago, so the server refuses, and the
// successor's bytes stay.
func TestFaultOwnerWindowLateScript(t *testing.T) {
	tg := locktest.Single(t)[0]
	for _, op := range []string{"unlock", "refresh"} {
		t.Run(op, func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			clock := &locktest.OffsetClock{}
			clock.Set(-23 * time.Second)
			l, err := legacy.New(tg.Client, legacy.WithClock(clock.Now)).TryLock(ctx, key, 20*time.Second)
			require.NoError(t, err)
			// W is 3 s ago by the true clock (more than the default margin
			// of 2 s); the holder's clock still reads before W when it
			// decides (it stood still in the pause). The successor's value
			// falls inside the holder's window.
			successor, err := legacy.New(tg.Client).TryLock(ctx, key, time.Second)
			require.NoError(t, err)
			theirs, _ := locktest.Get(t, tg.Client, key)
			if op == "unlock" {
				err = l.Unlock(ctx)
			} else {
				err = l.Refresh(ctx, 20*time.Second)
			}
			require.ErrorIs(t, err, lockbridge.ErrNotHeld)
			assert.Contains(t, err.Error(), "by the server's clock")
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, theirs, stored)
			require.NoError(t, successor.Unlock(ctx))
		})
	}
}

// After the lease ended by our own clock, the key may hold exactly our
// bytes and still be another holder's: a contender of the same lease whose
// clock read what ours read (a same-millisecond contender, or one whose
// clock is behind) wrote them after our value vanished (a safety TTL, an
// operator's unlock). A late release must leave them: the old "delete our
// own expired bytes for hygiene" freed that holder's lock, and a third
// locker got in beside it.
func TestFaultLateReleaseLeavesBytesEqualToOurs(t *testing.T) {
	tg := locktest.Single(t)[0]
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			then := time.Now().Add(-10 * time.Second)
			clock := &locktest.PinClock{}
			clock.Pin(then)
			l, err := legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithClock(clock.Now)).TryLock(ctx, key,
				time.Second)
			require.NoError(t, err)
			_, err = tg.Client.Del(ctx, key) // our value vanished
			require.NoError(t, err)
			// A contender whose clock reads what ours read writes our bytes.
			other, err := legacy.New(tg.Client, legacy.WithClock(locktest.At(then))).TryLock(ctx, key, time.Second)
			require.NoError(t, err)
			require.Equal(t, l.(*legacy.Lock).Value(), other.(*legacy.Lock).Value())
			clock.Pin(time.Time{})
			require.ErrorIs(t, l.Unlock(ctx), lockbridge.ErrNotHeld)
			stored, ok := locktest.Get(t, tg.Client, key)
			require.True(t, ok, "the other holder's key is left")
			assert.Equal(t, other.(*legacy.Lock).Value(), stored)
			_, err = legacy.New(tg.Client, legacy.WithClock(locktest.At(then))).TryLock(ctx, key, time.Second)
			assert.ErrorIs(t, err, lockbridge.ErrNotObtained, "nobody else gets in beside it")
		})
	}
}

// WithSkewMargin(d): an expired value is taken over only when it is below
// now − d, in atomic and classic mode alike; a waiter is told to wait that
// much longer. A value expired by less than d is left alone.
func TestFaultSkewMarginRefusesTakeoverInsideIt(t *testing.T) {
	tg := locktest.Single(t)[0]
	now := time.Now().Truncate(time.Millisecond)
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			// A Java holder's expiry, 100 ms ago by our clock.
			held := now.Add(-100 * time.Millisecond).UnixMilli()
			locktest.Set(t, tg.Client, key, strconv.FormatInt(held, 10))

			lk := legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithClock(locktest.At(now)),
				legacy.WithSkewMargin(500*time.Millisecond))
			l, left, err := attempt(ctx, lk, key, time.Second)
			require.ErrorIs(t, err, lockbridge.ErrNotObtained)
			assert.Nil(t, l)
			assert.Equal(t, 401*time.Millisecond, left, "wait until the value is below now − d")
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, strconv.FormatInt(held, 10), stored, "the value is left alone")

			// Outside the margin: taken over.
			lk = legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithClock(locktest.At(now)),
				legacy.WithSkewMargin(50*time.Millisecond))
			got, err := lk.TryLock(ctx, key, time.Second)
			require.NoError(t, err)
			stored, _ = locktest.Get(t, tg.Client, key)
			assert.Equal(t, got.(*legacy.Lock).Value(), stored)
		})
	}
}
