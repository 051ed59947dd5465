package migrate

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
)

// fixedClock returns a clock stuck at t, for golden bytes.
func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// TestPhasesWriteWhatTheyShould pins the bytes each phase writes, on every
// target (the cluster included: the dual scripts touch two keys in one slot).
func TestPhasesWriteWhatTheyShould(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		// The clock is far in the future so the fixed value stays live.
		now := time.UnixMilli(4_000_000_000_000)
		for _, p := range []Phase{PhaseLegacy, PhaseDualWrite, PhaseDualRead, PhaseModern} {
			t.Run(p.String(), func(t *testing.T) {
				name := locktest.Key(t, "order")
				l := New(tg.Client, WithPhase(p), WithLegacy(legacy.WithClock(fixedClock(now))), WithModern(modern.WithFencing()))
				lk, err := l.TryLock(ctx, name, 5*time.Second)
				require.NoError(t, err)
				assert.Equal(t, name, lk.Key())
				legacyKey, modernKey, err := l.Keys(name)
				require.NoError(t, err)
				assert.Equal(t, name, legacyKey)
				assert.Equal(t, "{"+name+"}:modern", modernKey)

				lv, lok := locktest.Get(t, tg.Client, legacyKey)
				mv, mok := locktest.Get(t, tg.Client, modernKey)
				assert.Equal(t, p.writesLegacy(), lok, "legacy key written")
				assert.Equal(t, p.writesModern(), mok, "modern key written")
				if lok {
					assert.Equal(t, strconv.FormatInt(now.UnixMilli()+5000+1, 10), lv, "the Java seed's bytes")
					assert.Equal(t, int64(-1), locktest.PTTL(t, tg.Client, legacyKey), "no TTL on the legacy key, as Java")
				}
				if mok {
					assert.Equal(t, lk.Token(), mv)
					assert.Len(t, mv, 22, "16 random bytes, base64url")
					assert.InDelta(t, 5000, locktest.PTTL(t, tg.Client, modernKey), 200)
					f, ok := lk.(interface{ Fence() int64 })
					require.True(t, ok)
					assert.Greater(t, f.Fence(), int64(0))
					fence, _ := locktest.Get(t, tg.Client, "{"+name+"}:modern:fence")
					assert.Equal(t, strconv.FormatInt(f.Fence(), 10), fence)
				}

				_, err = l.TryLock(ctx, name, time.Second)
				assert.ErrorIs(t, err, lockbridge.ErrNotObtained)

				require.NoError(t, lk.Refresh(ctx, 10*time.Second))
				if mok {
					assert.InDelta(t, 10000, locktest.PTTL(t, tg.Client, modernKey), 200)
				}
				if lok && p == PhaseDualWrite {
					lv, _ := locktest.Get(t, tg.Client, legacyKey)
					assert.Equal(t, strconv.FormatInt(now.UnixMilli()+10000+1, 10), lv)
				}
				require.NoError(t, lk.Unlock(ctx))
				_, lok = locktest.Get(t, tg.Client, legacyKey)
				_, mok = locktest.Get(t, tg.Client, modernKey)
				assert.False(t, lok)
				assert.False(t, mok)
				select {
				case <-lk.Done():
				default:
					t.Fatal("Done is closed after Unlock")
				}
				assert.NoError(t, lk.Err())
				assert.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
			})
		}
	})
}

// TestDualPhasesRespectBothKeys: dual-write and dual-read acquire only when
// the legacy key is free or expired AND the modern key is absent, and record
// a legacy sighting for a live legacy lock without a modern key.
func TestDualPhasesRespectBothKeys(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		for _, p := range []Phase{PhaseDualWrite, PhaseDualRead} {
			t.Run(p.String(), func(t *testing.T) {
				ns := t.Name()
				name := locktest.Key(t, "k")
				l := New(tg.Client, WithPhase(p), WithNamespace(ns))
				defer l.Close(ctx)
				n := testNS{c: tg.Client}
				var err error
				n.k, err = migrateproto.NewKeys(ns)
				require.NoError(t, err)

				// A Java holder: live legacy value, no modern key.
				exp, ok, err := javareplay.Lock(ctx, tg.Client, name, 2*time.Second, nil)
				require.NoError(t, err)
				require.True(t, ok)
				_, err = l.TryLock(ctx, name, time.Second)
				require.ErrorIs(t, err, lockbridge.ErrNotObtained)
				key, count := n.sighting(t)
				assert.Equal(t, name, key, "a legacy-only holder is sighted")
				assert.Equal(t, int64(1), count)
				require.NoError(t, javareplay.Unlock(ctx, tg.Client, name, exp, nil))

				// An expired Java value is taken over.
				_, err = tg.Client.Do(ctx, "SET", name, strconv.FormatInt(time.Now().Add(-time.Second).UnixMilli(), 10))
				require.NoError(t, err)
				lk, err := l.TryLock(ctx, name, time.Second)
				require.NoError(t, err)
				v, _ := locktest.Get(t, tg.Client, name)
				if p == PhaseDualWrite {
					assert.NotEqual(t, strconv.FormatInt(time.Now().Add(-time.Second).UnixMilli(), 10), v)
				}
				// The Java seed now sees our lock (dual-write) or the stale
				// value (dual-read: the one unsafe direction, by design).
				_, ok, err = javareplay.Lock(ctx, tg.Client, name, time.Second, nil)
				require.NoError(t, err)
				if p == PhaseDualWrite {
					assert.False(t, ok, "a Java locker must not get in beside dual-write")
				}
				require.NoError(t, lk.Unlock(ctx))
				_, _ = tg.Client.Del(ctx, name)

				// A modern holder blocks, and the failed attempt learns its PTTL.
				m := modern.New(tg.Client)
				_, modernKey, err := l.Keys(name)
				require.NoError(t, err)
				mlk, err := m.TryLock(ctx, modernKey, 3*time.Second)
				require.NoError(t, err)
				_, left, err := l.attempt(ctx, mustPrepare(t, l, name))
				require.ErrorIs(t, err, lockbridge.ErrNotObtained)
				assert.InDelta(t, 3*time.Second, left, float64(300*time.Millisecond))
				_, ok = locktest.Get(t, tg.Client, name)
				assert.False(t, ok, "a refused attempt writes nothing")
				require.NoError(t, mlk.Unlock(ctx))

				_, count = n.sighting(t)
				assert.Equal(t, int64(1), count, "a modern holder is no legacy sighting")
			})
		}
	})
}

func mustPrepare(t *testing.T, l *Locker, name string) args {
	t.Helper()
	a, err := l.prepare(context.Background(), name, time.Second)
	require.NoError(t, err)
	return a
}

// A Java contender that loses a takeover race overwrites our legacy value
// with a nearby one: the dual-write release still frees both keys.
func TestDualWriteReleaseAfterLoserOverwrite(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	name := locktest.Key(t, "k")
	l := New(tg.Client, WithPhase(PhaseDualWrite))
	lk, err := l.TryLock(ctx, name, 2*time.Second)
	require.NoError(t, err)
	v, _ := locktest.Get(t, tg.Client, name)
	w, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err)
	_, _, err = tg.Client.GetSet(ctx, name, strconv.FormatInt(w+30, 10)) // the loser's GETSET
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))
	_, ok := locktest.Get(t, tg.Client, name)
	assert.False(t, ok, "the legacy key is freed, not stuck until the loser's expiry")
}

// A dual-write holder paused past its lease: the successor's keys are
// untouched by its late Unlock, which reports ErrNotHeld.
func TestDualWriteLateReleaseLeavesSuccessorAlone(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	name := locktest.Key(t, "k")
	l := New(tg.Client, WithPhase(PhaseDualWrite))
	lk, err := l.TryLock(ctx, name, 50*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(80 * time.Millisecond)
	next, err := l.TryLock(ctx, name, 5*time.Second)
	require.NoError(t, err, "the lease has ended")
	lv, _ := locktest.Get(t, tg.Client, name)
	_, modernKey, _ := l.Keys(name)
	mv, _ := locktest.Get(t, tg.Client, modernKey)

	err = lk.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrNotHeld)
	var nh *lockbridge.NotHeldError
	require.ErrorAs(t, err, &nh)
	assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	lv2, _ := locktest.Get(t, tg.Client, name)
	mv2, _ := locktest.Get(t, tg.Client, modernKey)
	assert.Equal(t, lv, lv2)
	assert.Equal(t, mv, mv2)
	require.NoError(t, next.Unlock(ctx))
}

// Auto-refresh in dual-write keeps both keys alive well past the ttl.
func TestDualWriteAutoRefresh(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	name := locktest.Key(t, "k")
	l := New(tg.Client, WithPhase(PhaseDualWrite), WithModern(modern.WithAutoRefresh()))
	lk, err := l.TryLock(ctx, name, 150*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, lk.Err())
	_, ok, err := javareplay.Lock(ctx, tg.Client, name, time.Second, nil)
	require.NoError(t, err)
	assert.False(t, ok, "the legacy value was refreshed too")
	require.NoError(t, lk.Unlock(ctx))

	// An outside DEL of the modern key is noticed as a loss.
	lk, err = l.TryLock(ctx, name, 150*time.Millisecond)
	require.NoError(t, err)
	_, modernKey, _ := l.Keys(name)
	_, err = tg.Client.Del(ctx, modernKey)
	require.NoError(t, err)
	select {
	case <-lk.Done():
		assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	case <-time.After(2 * time.Second):
		t.Fatal("a lost dual-write lock was not noticed")
	}
	_ = lk.Unlock(ctx)
}

// A lock is released under the rules of the phase it was taken in, even
// after the Locker moved on.
func TestLockKeepsItsPhase(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	name := locktest.Key(t, "k")
	n := initNS(t, tg.Client, ns)
	walk(t, n, PhaseDualWrite)
	l := New(tg.Client, WithPhaseFrom(ns), WithPhaseInterval(10*time.Millisecond))
	defer l.Close(ctx)
	p, err := l.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, PhaseDualWrite, p)
	lk, err := l.TryLock(ctx, name, 5*time.Second)
	require.NoError(t, err)

	time.Sleep(5 * time.Millisecond)
	walk(t, n, PhaseDualRead)
	require.Eventually(t, func() bool { p, _ := l.Phase(ctx); return p == PhaseDualRead }, 5*time.Second,
		5*time.Millisecond)

	require.NoError(t, lk.Unlock(ctx))
	_, ok := locktest.Get(t, tg.Client, name)
	assert.False(t, ok, "the dual-write lock freed its legacy key too")
}

func TestBadInput(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	for name, tc := range map[string]struct {
		opts []Option
		key  string
		ttl  time.Duration
	}{
		"empty key":           {nil, "", time.Second},
		"zero ttl":            {nil, "k", 0},
		"sub-ms ttl":          {nil, "k", time.Microsecond},
		"no phase":            {[]Option{WithPhase(0)}, "k", time.Second},
		"both phase sources":  {[]Option{WithPhase(PhaseModern), WithPhaseFrom("ns")}, "k", time.Second},
		"bad namespace":       {[]Option{WithPhaseFrom("a{b")}, "k", time.Second},
		"other slot":          {[]Option{WithModernKey(func(string) string { return "elsewhere" })}, "k", time.Second},
		"nil mapping":         {[]Option{WithModernKey(nil)}, "k", time.Second},
		"nil backoff":         {[]Option{WithBackoff(nil)}, "k", time.Second},
		"negative pollers":    {[]Option{WithPollers(-time.Millisecond)}, "k", time.Second},
		"bad legacy option":   {[]Option{WithLegacy(legacy.WithUnit(time.Minute))}, "k", time.Second},
		"bad modern option":   {[]Option{WithModern(modern.WithTokenFunc(nil))}, "k", time.Second},
		"tiny phase interval": {[]Option{WithPhaseInterval(time.Microsecond)}, "k", time.Second},
		"nil option":          {[]Option{nil}, "k", time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			l := New(tg.Client, tc.opts...)
			_, err := l.TryLock(ctx, tc.key, tc.ttl)
			assert.ErrorIs(t, err, lockbridge.ErrInvalid)
			_, err = l.Lock(ctx, tc.key, tc.ttl)
			assert.ErrorIs(t, err, lockbridge.ErrInvalid)
		})
	}
	_, err := New(nil).TryLock(ctx, "k", time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)

	// A custom mapping into the same slot is fine.
	l := New(tg.Client, WithPhase(PhaseModern), WithModernKey(func(k string) string { return "{" + k + "}:new" }))
	lk, err := l.TryLock(ctx, "custom", time.Second)
	require.NoError(t, err)
	v, _ := locktest.Get(t, tg.Client, "{custom}:new")
	assert.Equal(t, lk.Token(), v)
	require.NoError(t, lk.Unlock(ctx))
}

func TestWrongTypeIsAnError(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	// (PhaseModern is left out: SET NX does not look at the type of the key
	// it finds, so modern reports a list with no TTL as a holder without
	// expiry.)
	for _, p := range []Phase{PhaseLegacy, PhaseDualWrite, PhaseDualRead} {
		name := locktest.Key(t, p.String())
		l := New(tg.Client, WithPhase(p))
		legacyKey, modernKey, _ := l.Keys(name)
		_, err := tg.Client.Do(ctx, "RPUSH", legacyKey, "x")
		require.NoError(t, err)
		_, err = tg.Client.Do(ctx, "RPUSH", modernKey, "x")
		require.NoError(t, err)
		_, err = l.TryLock(ctx, name, time.Second)
		require.Error(t, err, p.String())
		assert.False(t, errors.Is(err, lockbridge.ErrNotObtained), "%v: a WRONGTYPE is not 'held': %v", p, err)
		assert.True(t, driver.HasPrefix(err, "WRONGTYPE"), "%v: %v", p, err)
	}
}

func TestLockWaitsForARelease(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		for _, p := range []Phase{PhaseLegacy, PhaseDualWrite, PhaseDualRead, PhaseModern} {
			t.Run(p.String(), func(t *testing.T) {
				name := locktest.Key(t, "k")
				l := New(tg.Client, WithPhase(p))
				defer l.Close(ctx)
				lk, err := l.TryLock(ctx, name, 5*time.Second)
				require.NoError(t, err)
				got := make(chan error, 1)
				go func() {
					lk2, err := l.Lock(ctx, name, time.Second)
					if err == nil {
						err = lk2.Unlock(ctx)
					}
					got <- err
				}()
				time.Sleep(30 * time.Millisecond)
				require.NoError(t, lk.Unlock(ctx))
				select {
				case err := <-got:
					require.NoError(t, err)
				case <-time.After(5 * time.Second):
					t.Fatal("the waiter did not get the lock after the release")
				}

				// A deadline while held: the error wraps both.
				lk, err = l.TryLock(ctx, name, 5*time.Second)
				require.NoError(t, err)
				dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
				_, err = l.Lock(dctx, name, time.Second)
				// Not obtained — or an unknown outcome when the deadline fell
				// on a legacy attempt on the wire (its value is not unique:
				// nothing can settle it).
				assert.True(t, errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, lockbridge.ErrUnknownOutcome), "%v", err)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				require.NoError(t, lk.Unlock(ctx))
			})
		}
	})
}

func TestZeroLockersAreInvalid(t *testing.T) {
	ctx := context.Background()
	for name, l := range map[string]lockbridge.Locker{
		"migrate": &Locker{}, "legacy": &legacy.Locker{}, "modern": &modern.Locker{},
	} {
		_, err := l.TryLock(ctx, "k", time.Second)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, name)
		_, err = l.Lock(ctx, "k", time.Second)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, name)
	}
	_, err := (&Locker{}).Phase(ctx)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}
