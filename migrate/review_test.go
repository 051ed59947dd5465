package migrate

import (
	"context"
	"testing"
	"time"

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
func TestReviewInitRestoresDualReadAndTheLostSightingPermitsModern(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns) // default quiet period (15 min)
	walk(t, ctl, PhaseDualRead)

	name := locktest.Key(t, "orders")
	java := legacy.New(tg.Client) // a forgotten legacy-only locker
	jl, err := java.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	defer func() { _ = jl.Unlock(ctx) }()

	f := New(tg.Client, WithPhaseFrom(ns))
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
	require.Equal(t, PhaseDualRead, step.To)

	_, err = ctl.Advance(ctx, false)
	if err == nil {
		fresh := New(tg.Client, WithPhaseFrom(ns))
		defer func() { _ = fresh.Close(ctx) }()
		lk, err := fresh.TryLock(ctx, name, time.Second)
		if err == nil {
			p := heldPhase(lk)
			_ = lk.Unlock(ctx)
			t.Fatalf("two holders: after the flush and init, an unforced dual-read → modern went through with the sighting lost; a locker took %q in %v while the legacy locker holds it", name, p)
		}
		t.Fatalf("unforced dual-read → modern went through although the sighting that blocked it was lost in the flush (no lock taken: %v)", err)
	}
	require.ErrorIs(t, err, ErrUnsafeStep)
}
