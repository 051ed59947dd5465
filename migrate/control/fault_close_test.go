package control

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// A Locker closed while it still holds a lock must stay counted by the
// controller, in the lock's phase, until that lock's lease has ended.
// Before, Close removed its registry entry at once: the lock (taken in
// modern, so on the modern key only) lived on invisible, the controller
// rolled the fleet back to legacy without a blocker, and a locker of the
// fleet took the legacy key beside it: two holders.
func TestFaultCloseWhileHoldingStaysCounted(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)

	a := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	name := locktest.Key(t, "orders")
	lk, err := a.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseModern, heldPhase(lk))
	defer lk.Unlock(ctx)
	require.NoError(t, a.Close(ctx)) // the lock stays valid to the end of its lease

	b := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer b.Close(ctx)
	_, err = b.Phase(ctx)
	require.NoError(t, err)

	// The operator rolls back, unforced, as far as the controller lets it,
	// waiting for the fleet (b) to follow each step.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		cur, err := ctl.Phase(ctx)
		require.NoError(t, err)
		if cur == migrate.PhaseLegacy {
			break
		}
		_, err = ctl.Rollback(ctx, false)
		if err != nil && !errors.Is(err, ErrUnsafeStep) {
			require.NoError(t, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		if err != nil {
			return false
		}
		for _, m := range st.Members {
			if m.HeldNewest == 0 { // b: a's entry reports the lock it holds
				return m.Phase == st.Phase && m.Next == 0
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "b follows the fleet's phase")

	_, err = b.TryLock(ctx, name, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder while the closed locker's lock lives")
	require.NoError(t, lk.Err())
}
