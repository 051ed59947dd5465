package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// Review (issue 25, round 2): the fleet at modern; follower F holds a lock
// taken in modern. A forgotten legacy-only locker J shows up, so the
// operator rolls back modern → dual-read (unforced: F's modern lock
// excludes dual-read); F follows, its entry says dual-read, the rollback's
// generation, and "holds a lock taken in modern". J takes a lock (dual-read
// lockers read the legacy key: they would exclude it). The namespace's keys
// are flushed. F heartbeats its entry again. Without the namespace hash,
// judge counts every phase of a live entry of the newest generation as
// evidence — its held lock's phase included — so the evidence reads modern
// although the mark (and F) say the fleet is at dual-read: init refuses
// ("the evidence shows the fleet reached modern"), and the unforced repair
// to that evidence moves the fleet from dual-read to modern past J. A lock
// still held from before a rollback shows where the fleet was, not where
// it is.
func TestFaultRepairAfterFlushFollowsAHeldLockPastARollback(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseModern)

	f := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(50*time.Millisecond))
	defer func() { _ = f.Close(ctx) }()
	held, err := f.TryLock(ctx, locktest.Key(t, "batch"), time.Minute)
	require.NoError(t, err)
	defer func() { _ = held.Unlock(ctx) }()
	require.Equal(t, migrate.PhaseModern, heldPhase(held))

	_, err = ctl.Rollback(ctx, false)
	require.NoError(t, err, "modern → dual-read: F's modern lock excludes dual-read")
	require.Eventually(t, func() bool {
		p, err := f.Phase(ctx)
		return err == nil && p == migrate.PhaseDualRead
	}, 5*time.Second, 10*time.Millisecond)

	name := locktest.Key(t, "orders")
	java := legacy.New(tg.Client) // the legacy-only locker the rollback was for
	jl, err := java.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	defer func() { _ = jl.Unlock(ctx) }()
	_, err = f.TryLock(ctx, name, time.Second)
	require.Error(t, err, "at dual-read the legacy holder excludes F")

	flushNamespace(t, tg.Client, ns)
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && st.Members[0].Live && st.Members[0].Phase == migrate.PhaseDualRead
	}, 5*time.Second, 10*time.Millisecond, "F heartbeats its entry again")

	// The operator's controller (a minute's silence), following what it says.
	ctl, err = New(tg.Client, ns, WithInitSilence(time.Minute))
	require.NoError(t, err)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualRead, st.mark.phase, "the mark recorded the rollback")
	if _, ierr := ctl.Init(ctx, false); ierr != nil {
		t.Logf("init refused: %v", ierr)
		st, err = ctl.Status(ctx)
		require.NoError(t, err)
		t.Logf("status: evidence %v; %v", st.Evidence, st.PhaseProblem)
		if _, err = ctl.Repair(ctx, st.Evidence, false); err != nil {
			t.Logf("repair --to %v refused: %v", st.Evidence, err)
			return
		}
	}
	p, err := ctl.Phase(ctx)
	require.NoError(t, err)
	fresh := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
	defer func() { _ = fresh.Close(ctx) }()
	lk, err := fresh.TryLock(ctx, name, time.Second)
	if err == nil {
		hp := heldPhase(lk)
		_ = lk.Unlock(ctx)
		t.Fatalf("two holders: an unforced init/repair after the flush set %v (the mark says %v); a locker took %q in %v "+
			"beside the legacy holder", p, st.mark.phase, name, hp)
	}
	require.Equal(t, migrate.PhaseDualRead, p, "only the phase the mark recorded")
}
