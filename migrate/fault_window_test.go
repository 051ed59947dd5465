package migrate

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
)

func faultCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The Redis host's clock 50 ms behind the clients', and a dual-write holder
// that releases (or refreshes) 20 ms after its lease ended by its own clock,
// its modern key still alive: the Java seed that took the legacy key over
// legitimately keeps its lock. The late release is refused (NotHeldError,
// legacy code -2) and leaves the seed's bytes; the late refresh neither
// overwrites them nor extends the modern key; a third locker does not get
// in. Exclusion is counted by a guard that every party believing it holds
// enters. With the owner window judged by the server's clock, as before,
// the holder deleted or overwrote the seed's value in every round.
func TestFaultDualWriteOwnerWindowServerBehind(t *testing.T) {
	tg := locktest.Single(t)[0]
	s := locktest.LateHolder{
		ClientsAhead: 50 * time.Millisecond, Late: 20 * time.Millisecond,
		Lease: 10 * time.Second, SuccLease: time.Second, Rounds: 10,
		Take: func(t *testing.T, ctx context.Context, name string, now func() time.Time) (lockbridge.Lock, int64) {
			l := New(tg.Client, WithPhase(PhaseDualWrite), WithLegacy(legacy.WithClock(now)))
			lk, err := l.TryLock(ctx, name, 10*time.Second)
			require.NoError(t, err)
			return lk, lk.(*Lock).impl.(*dualLock).w
		},
		Check: func(t *testing.T, err error) {
			var nh *lockbridge.NotHeldError
			if assert.ErrorAs(t, err, &nh) {
				assert.Equal(t, lockbridge.ReasonExpired, nh.Reason, "W passed by the holder's own clock")
				assert.Contains(t, nh.Detail, "by our clock")
			}
		},
		Also: func(name string) []string {
			m, _ := DeriveModernKey(name)
			return []string{m}
		},
	}
	for _, op := range []string{"unlock", "refresh"} {
		t.Run(op, func(t *testing.T) { s.Run(t, faultCtx(t), tg.Client, op) })
	}
}

// The Redis host's clock 2 s ahead of the clients': a dual-write lock's
// release, refresh and auto-refresh succeed with most of the lease left (no
// false loss) under the default server-clock margin. Before, the server's
// clock decided: the release and refresh failed with ErrNotHeld and
// auto-refresh gave the lock up (ErrLost) at its first tick.
func TestFaultDualWriteServerAhead(t *testing.T) {
	tg := locktest.Single(t)[0]
	const serverAhead = 2 * time.Second
	for _, op := range []string{"unlock", "refresh"} {
		t.Run(op, func(t *testing.T) {
			ctx := faultCtx(t)
			name := locktest.Key(t, "k")
			l := New(tg.Client, WithPhase(PhaseDualWrite), WithLegacy(legacy.WithClock(locktest.Skewed(-serverAhead))))
			lk, err := l.TryLock(ctx, name, time.Second)
			require.NoError(t, err)
			if op == "refresh" {
				require.NoError(t, lk.Refresh(ctx, time.Second))
				stored, _ := locktest.Get(t, tg.Client, name)
				assert.Equal(t, lk.(*Lock).impl.(*dualLock).value, stored, "the new legacy expiry is written")
			}
			require.NoError(t, lk.Unlock(ctx))
			_, ok := locktest.Get(t, tg.Client, name)
			assert.False(t, ok, "the legacy key is released")
		})
	}

	t.Run("auto-refresh", func(t *testing.T) {
		ctx := faultCtx(t)
		name := locktest.Key(t, "k")
		l := New(tg.Client, WithPhase(PhaseDualWrite), WithLegacy(legacy.WithClock(locktest.Skewed(-serverAhead))),
			WithModern(modern.WithAutoRefresh()))
		const ttl = 1500 * time.Millisecond // refreshed every 500 ms, 1 s left at each tick
		lk, err := l.TryLock(ctx, name, ttl)
		require.NoError(t, err)
		first, _ := locktest.Get(t, tg.Client, name)
		// Wait for two refreshes (the legacy value changes each time), or
		// the loss the server-clock judgement caused.
		seen, last := 0, first
		for seen < 2 {
			select {
			case <-lk.Done():
				t.Fatalf("auto-refresh gave the lock up: %v", lk.Err())
			case <-ctx.Done():
				t.Fatal("no refresh happened")
			case <-time.After(20 * time.Millisecond):
			}
			if v, _ := locktest.Get(t, tg.Client, name); v != last {
				seen, last = seen+1, v
			}
		}
		assert.NoError(t, lk.Err())
		require.NoError(t, lk.Unlock(ctx))
	})
}

// After the lease ended by our own clock the legacy key may hold exactly
// our bytes and be another holder's (a contender whose clock read what ours
// read wrote them after our value vanished). A late dual-write release must
// leave them: it used to delete "our own expired bytes" for hygiene.
func TestFaultDualWriteLateReleaseLeavesBytesEqualToOurs(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := faultCtx(t)
	name := locktest.Key(t, "k")
	then := time.Now().Add(-10 * time.Second)
	clock := &locktest.PinClock{}
	clock.Pin(then)
	l := New(tg.Client, WithPhase(PhaseDualWrite), WithLegacy(legacy.WithClock(clock.Now)))
	lk, err := l.TryLock(ctx, name, 5*time.Second) // the modern key lives 5 s
	require.NoError(t, err)
	_, err = tg.Client.Del(ctx, name) // the legacy value vanished
	require.NoError(t, err)
	other, err := legacy.New(tg.Client, legacy.WithClock(func() time.Time { return then })).TryLock(ctx, name,
		5*time.Second)
	require.NoError(t, err)
	require.Equal(t, lk.(*Lock).impl.(*dualLock).value, other.(*legacy.Lock).Value())
	clock.Pin(time.Time{})
	err = lk.Unlock(ctx)
	var nh *lockbridge.NotHeldError
	require.ErrorAs(t, err, &nh)
	assert.Equal(t, lockbridge.ReasonExpired, nh.Reason)
	assert.Contains(t, nh.Detail, "by our clock")
	stored, ok := locktest.Get(t, tg.Client, name)
	require.True(t, ok, "the other holder's key is left")
	assert.Equal(t, other.(*legacy.Lock).Value(), stored)
}

// legacy.WithSkewMargin, passed through WithLegacy: the dual phases take
// over an expired legacy value only when it is below now − d.
func TestFaultDualSkewMarginRefusesTakeoverInsideIt(t *testing.T) {
	tg := locktest.Single(t)[0]
	now := time.Now().Truncate(time.Millisecond)
	at := func() time.Time { return now }
	for _, p := range []Phase{PhaseDualWrite, PhaseDualRead} {
		t.Run(p.String(), func(t *testing.T) {
			ctx := faultCtx(t)
			name := locktest.Key(t, "k")
			held := strconv.FormatInt(now.Add(-100*time.Millisecond).UnixMilli(), 10)
			_, err := tg.Client.Do(ctx, "SET", name, held)
			require.NoError(t, err)

			l := New(tg.Client, WithPhase(p), WithLegacy(legacy.WithClock(at), legacy.WithSkewMargin(500*time.Millisecond)))
			_, err = l.TryLock(ctx, name, time.Second)
			require.ErrorIs(t, err, lockbridge.ErrNotObtained)
			stored, _ := locktest.Get(t, tg.Client, name)
			assert.Equal(t, held, stored, "the value is left alone")

			l = New(tg.Client, WithPhase(p), WithLegacy(legacy.WithClock(at), legacy.WithSkewMargin(50*time.Millisecond)))
			lk, err := l.TryLock(ctx, name, time.Second)
			require.NoError(t, err)
			require.NoError(t, lk.Unlock(ctx))
		})
	}
}
