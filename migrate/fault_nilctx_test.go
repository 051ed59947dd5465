package migrate

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
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
	for _, p := range []Phase{PhaseLegacy, PhaseDualWrite, PhaseDualRead, PhaseModern} {
		for _, follow := range []bool{false, true} {
			opts := []Option{WithPhase(p)}
			name := p.String()
			if follow {
				walk(t, ctl, p)
				opts = []Option{WithPhaseFrom(ns)}
				name += " following"
			}
			l := New(tg.Client, opts...)
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
