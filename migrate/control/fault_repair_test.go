package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// A phase lost after a rollback is repaired, unforced, to the phase the
// evidence shows. A dead registry entry left from before the rollback (a
// client that crashed at modern; entries go only when a step prunes them)
// must not count as evidence above the live fleet: before, the evidence
// read modern, the unforced repair jumped the fleet from legacy to modern
// in one go, the Go lockers walked there while the Java fleet still locked
// at legacy: two holders.
func TestFaultRepairIgnoresDeadEntries(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)
	beat(t, ctl.s, "crashed-at-modern", migrate.PhaseModern, time.Millisecond) // its last heartbeat
	time.Sleep(10 * time.Millisecond)
	for p := migrate.PhaseModern; p > migrate.PhaseLegacy; p-- { // the rollback, unforced
		_, err := ctl.Rollback(ctx, false)
		require.NoError(t, err)
	}

	b := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer b.Close(ctx)
	ph, err := b.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseLegacy, ph)

	// The phase key evicted, or lost in a failover.
	repairLost(t, ctl, migrate.PhaseModern, "the live fleet and the namespace hash say legacy", ctl.s.k.Phase)
	javaExcluded(t, tg.Client, b) // the Java fleet, still at legacy
}

// repairLost deletes keys (the phase key lost, or the namespace flushed)
// and repairs as an operator does: an unforced repair to refused is refused
// (why), one to the evidence `lockbridge fleet` shows goes through; then
// the followers have a moment to follow, a step per reading.
func repairLost(t *testing.T, ctl *Controller, refused migrate.Phase, why string, keys ...string) {
	t.Helper()
	ctx := context.Background()
	locktest.Do(t, ctl.s.c, append([]any{"DEL"}, anys(keys)...)...)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.NotNil(t, st.PhaseProblem)
	_, err = ctl.Repair(ctx, refused, false)
	assert.ErrorIs(t, err, ErrUnsafeStep, why)
	_, err = ctl.Repair(ctx, st.Evidence, false)
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond)
}

// javaExcluded checks that once b, following the repaired phase, holds a
// lock, a Java service locking at legacy does not get it.
func javaExcluded(t *testing.T, c driver.Client, b *migrate.Locker) {
	t.Helper()
	ctx := context.Background()
	name := locktest.Key(t, "orders")
	var lk lockbridge.Lock
	var err error
	require.Eventually(t, func() bool {
		lk, err = b.TryLock(ctx, name, time.Minute)
		return err == nil
	}, 5*time.Second, 20*time.Millisecond)
	defer lk.Unlock(ctx)
	_, err = legacy.New(c).TryLock(ctx, name, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder: b took it in %v", heldPhase(lk))
}

func anys(ss []string) []any {
	a := make([]any, len(ss))
	for i, s := range ss {
		a[i] = s
	}
	return a
}

// An unforced `fleet forget` removes only an entry the controller no
// longer counts: dead by the server's clock beyond the liveness margin.
// Before, it judged the expiry alone, so an entry the controller still
// counted as live (within the margin, which covers clock-rate drift and an
// NTP step of the server's clock) was removed, and the step it blocked
// went ahead.
func TestFaultForgetHonoursTheLivenessMargin(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl := initNS(t, tg.Client, t.Name(), WithLivenessMargin(time.Minute))
	beat(t, ctl.s, "paused", migrate.PhaseLegacy, time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	require.True(t, st.Members[0].Live, "within the margin: still counted")

	_, err = ctl.Forget(ctx, "paused", false)
	require.ErrorIs(t, err, ErrUnsafeStep)
	st, err = ctl.Status(ctx)
	require.NoError(t, err)
	assert.Len(t, st.Members, 1, "the entry stays")

	ok, err := ctl.Forget(ctx, "paused", true)
	require.NoError(t, err)
	assert.True(t, ok, "forced, it goes")
}

// The phase key is lost after a rollback from dual-read to dual-write (the
// Java fleet may lock again at dual-write), while a client cut off before
// the rollback still has a live entry at dual-read. The namespace hash
// still says dual-write: an unforced repair must not go past it on the
// word of an entry that never read the rollback. Before, the evidence read
// dual-read, the repair moved the fleet forward past the quiet period and
// the sightings, and a dual-read lock (modern key only) stood beside a Java
// legacy lock: two holders.
func TestFaultRepairDoesNotOutrunTheNamespaceHash(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualRead)
	b := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer b.Close(ctx)
	_, err := b.Phase(ctx)
	require.NoError(t, err)
	// Its last heartbeat, of a namespace generation before the rollback;
	// its hold runs on.
	beat(t, ctl.s, "cut-off-at-dual-read", migrate.PhaseDualRead, time.Minute)

	_, err = ctl.Rollback(ctx, false)
	require.NoError(t, err, "dual-read excludes dual-write: the rollback is safe")
	require.Eventually(t, func() bool {
		p, err := b.Phase(ctx)
		return err == nil && p == migrate.PhaseDualWrite
	}, 5*time.Second, 10*time.Millisecond)

	// The phase key evicted, or lost in a failover.
	repairLost(t, ctl, migrate.PhaseDualRead, "the namespace hash says dual-write", ctl.s.k.Phase)
	javaExcluded(t, tg.Client, b) // a Java service, back since the rollback
}

// As TestFaultRepairDoesNotOutrunTheNamespaceHash, with the namespace hash
// flushed along with the phase key: the registry is all that is left, and
// the entry that never read the rollback (an older generation of the same
// instance) must not outvote the clients that did.
func TestFaultRepairAfterFlushFollowsTheNewestGeneration(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualRead)
	b := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer b.Close(ctx)
	_, err := b.Phase(ctx)
	require.NoError(t, err)
	// A client cut off at dual-read: its last heartbeat read the current
	// instance and generation; its hold runs on.
	inst := locktest.Do(t, tg.Client, "HGET", ctl.s.k.Meta, "init").(string)
	gen := locktest.Do(t, tg.Client, "HGET", ctl.s.k.Meta, "gen").(string)
	e := migrateproto.Entry{V: migrateproto.Version, Seq: 1, ID: "cut-off-at-dual-read",
		Phase: migrate.PhaseDualRead.String(), Host: "h", PID: 7,
		Instance: migrateproto.Decimal(inst), Gen: migrateproto.Decimal(gen)}
	_, err = ctl.s.heartbeat(ctx, e, time.Minute, 0)
	require.NoError(t, err)

	_, err = ctl.Rollback(ctx, false)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, err := b.Phase(ctx)
		return err == nil && p == migrate.PhaseDualWrite
	}, 5*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // b heartbeats the new generation

	// The namespace flushed; the registry survived.
	repairLost(t, ctl, migrate.PhaseDualRead, "the clients that read the newest generation run dual-write", ctl.s.k.Phase,
		ctl.s.k.Meta)
	javaExcluded(t, tg.Client, b)
}
