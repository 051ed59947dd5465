package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
)

// A live legacy locker's registry entry whose expiry is gone (the expiry
// set deleted: by hand, a partial restore) is live as Status counts it — an
// entry without an expiry is not known dead — and it blocks the step past
// dual-write. Forget without force must refuse it as Status counts it.
// Before, forget.lua refused only an expiry it found in the future: a
// missing one was read as dead, the entry went, nothing blocked the step,
// and a dual-read holder and the legacy locker held one lock at once.
func TestFaultForgetRefusesAnEntryWithoutExpiry(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, c, ns)

	// A legacy locker that heartbeats into the registry (as a Java service
	// does with lockbridge-java's namespace option).
	old := migrate.New(c, migrate.WithPhase(migrate.PhaseLegacy), migrate.WithNamespace(ns),
		migrate.WithPhaseInterval(30*time.Second))
	defer old.Close(ctx)
	_, err := old.Phase(ctx)
	require.NoError(t, err)
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour)

	locktest.Do(t, c, "DEL", ctl.s.k.Expiry) // the fault: the entries' expiries are lost
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	id := st.Members[0].ID
	require.True(t, st.Members[0].Live, "an entry without an expiry is not known dead")
	require.NotEmpty(t, st.Blockers, "the legacy locker blocks the step past dual-write")

	ok, err := ctl.Forget(ctx, id, false)
	if assert.ErrorIs(t, err, ErrUnsafeStep, "forget without force refuses an entry Status counts live") {
		assert.False(t, ok)
		st, err = ctl.Status(ctx)
		require.NoError(t, err)
		assert.Len(t, st.Members, 1, "the entry stays")
		return
	}
	// What the removal let through: the step, and two holders of one lock.
	_, err = ctl.Advance(ctx, false)
	require.NoError(t, err, "nothing blocks the step once the entry is gone")
	dr := migrate.New(c, migrate.WithPhaseFrom(ns))
	defer dr.Close(ctx)
	name := locktest.Key(t, "orders")
	lk, err := dr.TryLock(ctx, name, 10*time.Second)
	require.NoError(t, err)
	defer lk.Unlock(ctx)
	lg, err := old.TryLock(ctx, name, 10*time.Second)
	require.NoError(t, err, "the legacy locker does not see the dual-read holder's modern key")
	defer lg.Unlock(ctx)
	t.Errorf("two holders of %q: a dual-read lock and the legacy locker's, after forget removed a live entry", name)
}
