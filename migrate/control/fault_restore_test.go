package control

import (
	"errors"
	"sync/atomic"

	"context"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/migrate"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// Review (issue 25): the fleet at dual-read, a forgotten legacy-only locker
// holds a lock, a dual-read follower meets it and records a sighting, which
// blocks the step to modern. The namespace's keys are flushed (the sighting
// and its copy in the namespace hash go with them). `phase init` restores
// dual-read from the mark ("the quiet period restarted"), but the step
// dual-read → modern checks only the sighting's age, never phase-since:
// the lost sighting is read as "no legacy locker", the unforced step goes
// through at once, and a modern locker takes the lock the legacy locker
// holds.
func TestFaultInitRestoresDualReadAndTheLostSightingPermitsModern(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns) // default quiet period (15 min)
	walk(t, ctl, migrate.PhaseDualRead)

	name := locktest.Key(t, "orders")
	java := legacy.New(tg.Client) // a forgotten legacy-only locker
	jl, err := java.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	defer func() { _ = jl.Unlock(ctx) }()

	f := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
	defer func() { _ = f.Close(ctx) }()
	_, err = f.TryLock(ctx, name, time.Second)
	require.Error(t, err, "dual-read reads the legacy key: refused")
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.False(t, st.Sighting.At.IsZero(), "the dual-read follower recorded a sighting")
	_, err = ctl.Advance(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep, "the sighting blocks dual-read → modern")

	flushNamespace(t, tg.Client, ns)
	step, err := ctl.Init(ctx, false)
	require.NoError(t, err, "init restores the mark's phase")
	require.Equal(t, migrate.PhaseDualRead, step.To)

	_, err = ctl.Advance(ctx, false)
	if err == nil {
		fresh := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
		defer func() { _ = fresh.Close(ctx) }()
		lk, err := fresh.TryLock(ctx, name, time.Second)
		if err == nil {
			p := heldPhase(lk)
			_ = lk.Unlock(ctx)
			t.Fatalf("two holders: after the flush and init, an unforced dual-read → modern went through with the sighting "+
				"lost; a locker took %q in %v while the legacy locker holds it", name, p)
		}
		t.Fatalf("unforced dual-read → modern went through although the sighting that blocked it was lost in the flush (no "+
			"lock taken: %v)", err)
	}
	require.ErrorIs(t, err, ErrUnsafeStep)
}

// cutClient is a client cut off from Redis while cut is set: every call
// fails at once, as a refused connection does.
type cutClient struct {
	driver.Client
	cut atomic.Bool
}

var errCut = errors.New("review: connection refused")

func (c *cutClient) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.Client.Eval(ctx, s, keys, args...)
}

func (c *cutClient) Do(ctx context.Context, args ...any) (any, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.Client.Do(ctx, args...)
}

// Review (issue 25): the fleet at modern rolls back to dual-write (two
// unforced steps; a follower cut off from Redis meanwhile still runs modern,
// which excludes dual-write) and a legacy-only locker, safe beside
// dual-write, takes a lock. The namespace's keys are flushed; the cut-off
// follower comes back and heartbeats its old entry (modern, the generation
// before the rollback). The mark says dual-write with the rollback's
// generation, but with the namespace hash gone judge takes the newest
// generation among the registry's entries only — the stale follower's —
// so the evidence reads modern: init refuses ("the evidence shows the
// fleet reached modern"), and the unforced repair to that evidence jumps
// the fleet from dual-write to modern past the legacy holder. docs say an
// entry above the hash "may not have read a rollback yet" and must not
// count: the mark's generation proves it has not.
func TestFaultRepairAfterFlushUndoesARollbackTheMarkRecorded(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseModern)

	cc := &cutClient{Client: tg.Client}
	f := migrate.New(cc, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(100*time.Millisecond))
	defer func() { _ = f.Close(ctx) }()
	p, err := f.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseModern, p)

	cc.cut.Store(true) // partitioned: it reads no rollback
	for _, to := range []migrate.Phase{migrate.PhaseDualRead, migrate.PhaseDualWrite} {
		_, err := ctl.Step(ctx, to+1, to, false)
		require.NoError(t, err, "rollback to %v", to)
	}
	name := locktest.Key(t, "orders")
	java := legacy.New(tg.Client) // a legacy-only locker, back beside dual-write
	jl, err := java.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	defer func() { _ = jl.Unlock(ctx) }()

	flushNamespace(t, tg.Client, ns)
	cc.cut.Store(false) // it comes back and heartbeats its old entry
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1
	}, 10*time.Second, 10*time.Millisecond)

	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualWrite, st.mark.phase, "the mark recorded the rollback")
	_, ierr := ctl.Init(ctx, false)
	// The operator follows what the controller says: init restores the
	// mark, or, refused, repair to the evidence.
	if ierr != nil {
		t.Logf("init refused: %v", ierr)
		st, err = ctl.Status(ctx)
		require.NoError(t, err)
		_, err = ctl.Repair(ctx, st.Evidence, false)
		if err != nil {
			t.Logf("repair --to %v refused: %v", st.Evidence, err)
			return
		}
	}
	p, err = ctl.Phase(ctx)
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
	require.Equal(t, migrate.PhaseDualWrite, p, "only the phase the mark recorded")
}

// Review (issue 25): a follower holds a dual-read lock (the modern key
// only) and is cut off from Redis; the controller rolls back dual-read →
// dual-write (allowed: they exclude each other). Its registry entry, live
// for its hold, refuses the next rollback to legacy, which does not
// exclude dual-read. The namespace's keys are flushed and `phase init`
// restores dual-write from the mark — then the unforced rollback to legacy
// goes through at once: the entry that refused it went with the flush and
// nothing waits for the registry to refill (the silence init demands of a
// namespace without a mark is not asked of a restored one). A locker then
// takes the legacy key of the lock the cut-off follower still holds.
func TestFaultRollbackRightAfterInitRestoreIgnoresTheLostRegistry(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseDualRead)

	cc := &cutClient{Client: tg.Client}
	f := migrate.New(cc, migrate.WithPhaseFrom(ns))
	defer func() { _ = f.Close(ctx) }()
	name := locktest.Key(t, "orders")
	lk, err := f.TryLock(ctx, name, 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualRead, heldPhase(lk))
	cc.cut.Store(true)

	_, err = ctl.Rollback(ctx, false)
	require.NoError(t, err, "dual-read → dual-write: the holder's phase excludes it")
	_, err = ctl.Rollback(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep, "dual-write → legacy refused: the entry holds a dual-read lock")

	flushNamespace(t, tg.Client, ns)
	// The operator's silence covers the fleet (phase lease + longest
	// lease + margin), as WithInitSilence asks; initNS's is 1 ms.
	ctl, err = New(tg.Client, ns, WithInitSilence(time.Minute))
	require.NoError(t, err)
	step, err := ctl.Init(ctx, false)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualWrite, step.To)
	_, err = ctl.Rollback(ctx, false)
	if err != nil {
		require.ErrorIs(t, err, ErrUnsafeStep)
		return
	}
	fresh := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
	defer func() { _ = fresh.Close(ctx) }()
	other, err := fresh.TryLock(ctx, name, time.Second)
	if err == nil {
		defer func() { _ = other.Unlock(ctx) }()
		select {
		case <-lk.Done():
			t.Fatalf("the first lock ended before (%v): not two holders", lk.Err())
		default:
		}
		t.Fatalf("two holders: after init restored dual-write, an unforced rollback to legacy went through; a locker took "+
			"%q in %v while the cut-off follower holds it in %v", name, heldPhase(other), heldPhase(lk))
	}
	t.Fatalf("unforced rollback dual-write → legacy went through right after the restore, past a live dual-read holder "+
		"(no lock taken: %v)", err)
}
