package migrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

// The dual phases validate tokens as modern does (one validation for
// all), and refuse modern.WithWait, which their own acquire script cannot
// honour, instead of reporting locks no replica acknowledged.
func TestFaultDualPhasesValidateAsModern(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	for _, p := range []migrate.Phase{migrate.PhaseDualWrite, migrate.PhaseDualRead, migrate.PhaseModern} {
		for name, tok := range map[string]string{"empty": "", "too long": string(make([]byte, 1025))} {
			l := migrate.New(tg.Client, migrate.WithPhase(p),
				migrate.WithModern(modern.WithTokenFunc(func() (string, error) { return tok, nil })))
			_, err := l.TryLock(ctx, locktest.Key(t, name), time.Second)
			require.ErrorIs(t, err, lockbridge.ErrInvalid, "%v, %s token", p, name)
			_, ok, err := tg.Client.Get(ctx, locktest.Key(t, name))
			require.NoError(t, err)
			assert.False(t, ok, "%v: nothing written", p)
		}
	}
	for _, p := range []migrate.Phase{migrate.PhaseDualWrite, migrate.PhaseDualRead} {
		l := migrate.New(tg.Client, migrate.WithPhase(p), migrate.WithModern(modern.WithWait(1, 100*time.Millisecond)))
		_, err := l.TryLock(ctx, locktest.Key(t, "wait"), time.Second)
		require.ErrorIs(t, err, lockbridge.ErrInvalid, "%v", p)
		assert.Contains(t, err.Error(), "WithWait")
	}
}
