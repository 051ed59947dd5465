package control

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// A lock of every phase, with and without a namespace, refuses a nil
// context on Refresh and Unlock with an error wrapping ErrInvalid — never
// a panic — and stays held (a later Unlock releases it). Before, a lock
// taken in dual-write or dual-read passed the nil context to the driver
// and panicked.
func TestFaultLockNilContext(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	var nilCtx context.Context
	for _, p := range []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
		migrate.PhaseModern} {
		for _, follow := range []bool{false, true} {
			opts := []migrate.Option{migrate.WithPhase(p)}
			name := p.String()
			if follow {
				walk(t, ctl, p)
				opts = []migrate.Option{migrate.WithPhaseFrom(ns)}
				name += " following"
			}
			l := migrate.New(tg.Client, opts...)
			lk, err := l.TryLock(ctx, locktest.Key(t, name), time.Minute)
			require.NoError(t, err, name)
			require.Equal(t, p, heldPhase(lk), name)
			assert.NotPanics(t, func() { err = lk.Refresh(nilCtx, time.Minute) }, name+": Refresh")
			assert.ErrorIs(t, err, lockbridge.ErrInvalid, name+": Refresh")
			assert.NotPanics(t, func() { err = lk.Unlock(nilCtx) }, name+": Unlock")
			assert.ErrorIs(t, err, lockbridge.ErrInvalid, name+": Unlock")
			assert.NoError(t, lk.Err(), name+": still held")
			assert.NoError(t, lk.Unlock(ctx), name+": released")
			require.NoError(t, l.Close(ctx))
		}
	}
}

// A ttl too long for the registry to count a following locker for (its
// hold is at most 2^40 ms, about 34 years, phase lease included) is an
// error wrapping ErrInvalid, on TryLock and on Refresh. Before, a ttl of
// math.MaxInt64 overflowed the hold to 1 ms: the lock was taken and the
// client's entry expired at once, so the controller could step past it.
func TestFaultHugeTTLWithNamespace(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseDualRead)
	l := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
	defer l.Close(ctx)
	for _, ttl := range []time.Duration{time.Duration(math.MaxInt64), 200 * 365 * 24 * time.Hour} {
		lk, err := l.TryLock(ctx, locktest.Key(t, ttl.String()), ttl)
		if !assert.ErrorIs(t, err, lockbridge.ErrInvalid, "ttl %v", ttl) && err == nil {
			_ = lk.Unlock(ctx)
		}
	}
	lk, err := l.TryLock(ctx, locktest.Key(t, "k"), time.Minute)
	require.NoError(t, err)
	assert.ErrorIs(t, lk.Refresh(ctx, time.Duration(math.MaxInt64)), lockbridge.ErrInvalid)
	assert.NoError(t, lk.Err())
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	assert.True(t, st.Members[0].Live)
	assert.Greater(t, st.Members[0].Expires.Sub(st.Now), 50*time.Second, "the entry covers the lock")
	require.NoError(t, lk.Unlock(ctx))

	// Nor may the phase lease (or the interval it defaults from) overflow it.
	for name, opt := range map[string]migrate.Option{
		"lease":    migrate.WithPhaseLease(time.Duration(math.MaxInt64)),
		"interval": migrate.WithPhaseInterval(time.Duration(math.MaxInt64 / 2)),
	} {
		_, err := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), opt).TryLock(ctx, locktest.Key(t, name), time.Minute)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, name)
	}
}
