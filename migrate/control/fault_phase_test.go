package control

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
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// phaseErr asserts err is a *PhaseUnknownError of reason why (never
// ErrNotObtained) and returns it.
func phaseErr(t *testing.T, err error, why migrate.PhaseReason) *migrate.PhaseUnknownError {
	t.Helper()
	var pe *migrate.PhaseUnknownError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, migrate.ErrPhaseUnknown)
	require.NotErrorIs(t, err, lockbridge.ErrNotObtained)
	require.Equal(t, why, pe.Reason, "%v", err)
	return pe
}

// initNS initialises ns and returns its controller.
func initNS(t *testing.T, c driver.Client, ns string, opts ...Option) *Controller {
	t.Helper()
	ctl, err := New(c, ns, append([]Option{WithInitSilence(time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	// A test's cluster is new: nothing can have run there. (In a cluster
	// init refuses a namespace without a mark unless forced.)
	_, err = ctl.Init(context.Background(), c.Cluster())
	require.NoError(t, err)
	return ctl
}

// walk moves the namespace to p with forced steps, the phase-since
// backdated so no quiet period holds it up.
func walk(t *testing.T, ctl *Controller, p migrate.Phase) {
	t.Helper()
	ctx := context.Background()
	for {
		cur, err := ctl.Phase(ctx)
		require.NoError(t, err)
		if cur == p {
			return
		}
		to := cur + 1
		if p < cur {
			to = cur - 1
		}
		backdate(t, ctl.s, time.Hour)
		_, err = ctl.Step(ctx, cur, to, true)
		require.NoError(t, err)
	}
}

// A locker that can reach its lock keys but not the namespace's keys (on
// another cluster node, paused) stops locking once its phase lease lapses —
// with a typed error, not ErrNotObtained — refuses to refresh a held lock,
// and locks again without a restart once the namespace is back.
func TestFaultPhaseLeaseCutOffFromNamespace(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := locktest.GoRedisCluster(t, cl)
	ctx := context.Background()
	const ns = "cut"
	nsNode := keyslot.Of("lockbridge:{"+ns+"}:phase") * 3 / 16384
	var names []string
	for i := 0; len(names) < 2; i++ { // a lock name served by another node
		if k := "orders:" + strconv.Itoa(i); keyslot.Of(k)*3/16384 != nsNode &&
			keyslot.Of("{"+k+"}:modern")*3/16384 != nsNode {
			names = append(names, k)
		}
	}
	name, other := names[0], names[1]
	initNS(t, c, ns)
	l := migrate.New(c, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(50*time.Millisecond),
		migrate.WithPhaseLease(200*time.Millisecond))
	defer l.Close(ctx)
	p, err := l.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseLegacy, p)
	held, err := l.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)

	node := cl.Nodes()[nsNode]
	node.Pause()
	resumed := false
	defer func() {
		if !resumed {
			node.Resume()
		}
	}()
	require.Eventually(t, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		lk, err := l.TryLock(cctx, other, time.Second)
		if err == nil {
			_ = lk.Unlock(ctx)
			return false
		}
		return errors.Is(err, migrate.ErrPhaseUnknown)
	}, 20*time.Second, 20*time.Millisecond, "a locker cut off from the namespace stops locking")
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = l.TryLock(cctx, other, time.Second)
	cancel()
	pe := phaseErr(t, err, migrate.ReasonLeaseLapsed)
	assert.Equal(t, migrate.PhaseLegacy, pe.Last)
	assert.Error(t, pe.Cause, "the follower's error is kept and reported")
	cctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	err = held.Refresh(cctx, time.Minute)
	cancel()
	phaseErr(t, err, migrate.ReasonLeaseLapsed)

	node.Resume() // within the cluster's node timeout: only this locker noticed
	resumed = true
	require.Eventually(t, func() bool {
		lk, err := l.TryLock(ctx, other, time.Second)
		if err != nil {
			return false
		}
		return lk.Unlock(ctx) == nil
	}, 20*time.Second, 20*time.Millisecond, "it locks again once it reads the phase, without a restart")
	require.NoError(t, held.Refresh(ctx, time.Minute))
	require.NoError(t, held.Unlock(ctx))
}

// The registry's liveness is the server's clock: an entry's expiry is the
// server's TIME plus the client's hold, and the controller ages it with the
// server's TIME — no host's wall clock is read, so a controller host 5 s or
// 6.5 s ahead (which hid a live legacy client before) cannot hide it.
func TestFaultRegistryJudgedByServerClock(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseDualWrite)
	l := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseLegacy), migrate.WithNamespace(ns),
		migrate.WithPhaseInterval(time.Second))
	defer l.Close(ctx)
	_, err := l.Phase(ctx)
	require.NoError(t, err)
	backdate(t, ctl.s, time.Hour)

	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	cl := st.Members[0]
	assert.True(t, cl.Live)
	server := time.UnixMilli(serverNow(t, tg.Client))
	assert.WithinDuration(t, server, st.Now, 2*time.Second, "Status is read at the server's time")
	hold := migrate.DefaultPhaseLeaseIntervals * time.Second
	assert.WithinDuration(t, cl.Seen.Add(hold), cl.Expires, 10*time.Millisecond,
		"expiry = the server's heartbeat time + the hold")
	_, err = ctl.Advance(ctx, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, []BlockerKind{BlockClientPhase}, kinds(ue.Blockers))
	assert.Equal(t, migrate.PhaseLegacy, ue.Blockers[0].Phase)
}

// A legacy sighting is stamped by the server's clock: a sighting client
// whose clock is 20 minutes slow records a fresh sighting, which blocks the
// step beyond dual-write for the quiet period.
func TestFaultSightingStampedByServerClock(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseDualWrite)
	slow := func() time.Time { return time.Now().Add(-20 * time.Minute) }
	l := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseDualWrite), migrate.WithNamespace(ns),
		migrate.WithLegacy(legacy.WithClock(slow)))
	defer l.Close(ctx)
	name := locktest.Key(t, "k")
	exp, ok, err := javareplay.Lock(ctx, tg.Client, name, 30*time.Second, nil)
	require.NoError(t, err)
	require.True(t, ok)
	defer func() { _ = javareplay.Unlock(ctx, tg.Client, name, exp, nil) }()
	_, err = l.TryLock(ctx, name, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	require.NoError(t, l.Close(ctx))

	backdate(t, ctl.s, time.Hour) // dual-write ran long enough
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, name, st.Sighting.Key)
	assert.Less(t, st.Now.Sub(st.Sighting.At), time.Minute, "the sighting is fresh by the server's clock")
	_, err = ctl.Advance(ctx, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, []BlockerKind{blockSighting}, kinds(ue.Blockers))
}

// phase-since is the server's time of the step, not the operator's.
func TestFaultPhaseSinceStampedByServerClock(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl := initNS(t, tg.Client, t.Name())
	_, err := ctl.Advance(ctx, false)
	require.NoError(t, err)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.WithinDuration(t, time.UnixMilli(serverNow(t, tg.Client)), st.Since, 2*time.Second)
	_, err = ctl.Advance(ctx, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, []BlockerKind{BlockQuietPeriod}, kinds(ue.Blockers))
}

// modernFleet starts n lockers following ns, at modern.
func modernFleet(t *testing.T, c driver.Client, ns string, n int) ([]*migrate.Locker, *Controller) {
	t.Helper()
	ctl := initNS(t, c, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)
	var ls []*migrate.Locker
	for i := 0; i < n; i++ {
		l := migrate.New(c, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		p, err := l.Phase(context.Background())
		require.NoError(t, err)
		require.Equal(t, migrate.PhaseModern, p)
		ls = append(ls, l)
	}
	return ls, ctl
}

// refusesWith waits until every locker's TryLock refuses with why, and
// checks none ever took a lock in a phase below modern meanwhile.
func refusesWith(t *testing.T, ls []*migrate.Locker, name string, why migrate.PhaseReason) {
	t.Helper()
	ctx := context.Background()
	for _, l := range ls {
		require.Eventually(t, func() bool {
			lk, err := l.TryLock(ctx, name, time.Second)
			if err == nil {
				require.Equal(t, migrate.PhaseModern, lk.(interface{ Phase() migrate.Phase }).Phase(), "never a lower phase")
				require.NoError(t, lk.Unlock(ctx))
				return false
			}
			return errors.Is(err, migrate.ErrPhaseUnknown)
		}, 10*time.Second, 5*time.Millisecond)
		_, err := l.TryLock(ctx, name, time.Second)
		pe := phaseErr(t, err, why)
		assert.Contains(t, pe.Error(), "lockbridge phase repair")
		p, err := l.Phase(ctx)
		phaseErr(t, err, why)
		assert.Zero(t, p)
	}
}

// A deleted phase key never decays to legacy: lockers that ran modern
// refuse (typed, naming the repair), a fresh locker too, and the repair
// restores them.
func TestFaultPhaseKeyDeleted(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ls, ctl := modernFleet(t, tg.Client, ns, 2)
	name := locktest.Key(t, "k")
	_, err := tg.Client.Del(ctx, ctl.s.k.Phase)
	require.NoError(t, err)
	refusesWith(t, ls, name, migrate.ReasonLost)
	fresh := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
	defer fresh.Close(ctx)
	_, err = fresh.TryLock(ctx, name, time.Second)
	phaseErr(t, err, migrate.ReasonLost) // the namespace hash remembers

	_, err = ctl.Repair(ctx, migrate.PhaseLegacy, false)
	require.ErrorIs(t, err, ErrUnsafeStep, "not below what the evidence shows")
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseModern, st.Evidence)
	_, err = ctl.Repair(ctx, migrate.PhaseModern, false)
	require.NoError(t, err)
	for _, l := range append(ls, fresh) {
		require.Eventually(t, func() bool {
			lk, err := l.TryLock(ctx, name, time.Second)
			if err != nil {
				return false
			}
			defer func() { _ = lk.Unlock(ctx) }()
			return lk.(interface{ Phase() migrate.Phase }).Phase() == migrate.PhaseModern
		}, 10*time.Second, 5*time.Millisecond, "the repair lets them lock again, in modern")
	}
	st, err = ctl.Status(ctx)
	require.NoError(t, err)
	assert.WithinDuration(t, st.Now, st.Since, 2*time.Second, "the repair restarts the quiet period")
}

// A FLUSHDB loses the namespace entirely: lockers refuse from their own
// memory, re-register their phase (the evidence), init is refused, and the
// repair restores the fleet at the phase the evidence shows.
func TestFaultNamespaceFlushed(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ls, ctl := modernFleet(t, tg.Client, ns, 2)
	name := locktest.Key(t, "k")
	_, err := tg.Client.Do(ctx, "FLUSHDB")
	require.NoError(t, err)
	refusesWith(t, ls, name, migrate.ReasonLost)

	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && st.Evidence == migrate.PhaseModern && len(st.Members) == 2
	}, 10*time.Second, 5*time.Millisecond, "the lockers' heartbeats say where they were")
	_, err = ctl.Init(ctx, false)
	phaseErr(t, err, migrate.ReasonLost)
	_, err = ctl.Repair(ctx, migrate.PhaseDualRead, false)
	require.ErrorIs(t, err, ErrUnsafeStep)
	_, err = ctl.Repair(ctx, migrate.PhaseModern, false)
	require.NoError(t, err)
	for _, l := range ls {
		require.Eventually(t, func() bool {
			lk, err := l.TryLock(ctx, name, time.Second)
			if err != nil {
				return false
			}
			defer func() { _ = lk.Unlock(ctx) }()
			return lk.(interface{ Phase() migrate.Phase }).Phase() == migrate.PhaseModern
		}, 10*time.Second, 5*time.Millisecond)
	}
}

// A namespace that never had a phase is not legacy by inference: a
// following locker refuses, naming `lockbridge phase init`, until it is
// initialised — then it locks in legacy without a restart.
func TestFaultNamespaceNeverInitialised(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	l := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer l.Close(ctx)
	name := locktest.Key(t, "k")
	_, err := l.TryLock(ctx, name, time.Second)
	pe := phaseErr(t, err, migrate.ReasonUninitialized)
	assert.Contains(t, pe.Error(), "lockbridge phase init --namespace "+ns)
	_, ok := locktest.Get(t, tg.Client, name)
	assert.False(t, ok, "nothing was written")

	initNS(t, tg.Client, ns)
	lk, err := l.TryLock(ctx, name, time.Second)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseLegacy, lk.(interface{ Phase() migrate.Phase }).Phase())
	require.NoError(t, lk.Unlock(ctx))
}

// A namespace whose state went back (an old backup restored over it) is
// refused by the lockers that read a newer state, until it is repaired.
func TestFaultNamespaceStateWentBack(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ls, ctl := modernFleet(t, tg.Client, ns, 1)
	_, err := tg.Client.Do(ctx, "HSET", ctl.s.k.Meta, "gen", "1")
	require.NoError(t, err)
	_, err = tg.Client.Do(ctx, "SET", ctl.s.k.Phase, "dual-read")
	require.NoError(t, err)
	refusesWith(t, ls, locktest.Key(t, "k"), migrate.ReasonWentBack)
	_, err = ctl.Repair(ctx, migrate.PhaseModern, false)
	require.NoError(t, err)
	require.Eventually(t, func() bool { p, err := ls[0].Phase(ctx); return err == nil && p == migrate.PhaseModern },
		10*time.Second, 5*time.Millisecond)
}

// Registry entries written the way common Java serializers write them
// (epoch-millis times, pid as a string, a zone-less local time) are
// blockers named by their field, never skipped.
func TestFaultUnparseableRegistryEntriesBlock(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour)
	now := time.Now()
	bad := map[string]string{
		"millis": `{"id":"millis","phase":"legacy","host":"h","pid":1,"seen":` + strconv.FormatInt(now.UnixMilli(),
			10) + `,"expires":` + strconv.FormatInt(now.Add(time.Hour).UnixMilli(), 10) + `}`,
		"pidstr": `{"id":"pidstr","phase":"legacy","host":"h","pid":"1234","seen":"` + now.Format(
			time.RFC3339) + `","expires":"` + now.Add(time.Hour).Format(time.RFC3339) + `"}`,
		"zoneless": `{"id":"zoneless","phase":"legacy","host":"h","pid":1,"seen":"` + now.Format(
			"2006-01-02T15:04:05") + `","expires":"` + now.Add(time.Hour).Format("2006-01-02T15:04:05") + `"}`,
	}
	for id, v := range bad {
		_, err := tg.Client.Do(ctx, "HSET", ctl.s.k.Fleet, id, v)
		require.NoError(t, err)
	}
	_, err := tg.Client.Do(ctx, "HSET", ctl.s.k.Clients, "v2bad",
		`{"v":2,"id":"v2bad","phase":"legacy","host":"h","pid":"7","ns_init":1,"gen":1}`)
	require.NoError(t, err)

	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.False(t, st.Safe())
	fields := map[string]string{}
	for _, b := range st.Blockers {
		require.Equal(t, blockInvalidEntry, b.Kind, "%v", b)
		fields[b.Member] = b.Field
	}
	assert.Equal(t, map[string]string{"millis": "expires", "pidstr": "pid", "zoneless": "expires", "v2bad": "pid"}, fields)
	_, err = ctl.Advance(ctx, false)
	assert.ErrorIs(t, err, ErrUnsafeStep)
	_, err = ctl.Rollback(ctx, false)
	assert.ErrorIs(t, err, ErrUnsafeStep, "a rollback does not step past clients it cannot read either")
}

// An entry of the first release's registry format (protocol 1) blocks
// every step: its liveness is its own clock's word.
func TestFaultOldFormatEntryBlocks(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl := initNS(t, tg.Client, t.Name())
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour)
	now := time.Now()
	_, err := tg.Client.Do(ctx, "HSET", ctl.s.k.Fleet, "old",
		`{"id":"old","phase":"dual-write","host":"h","pid":3,"seen":"`+now.Format(time.RFC3339Nano)+`","expires":"`+now.Add(
			6*time.Second).Format(time.RFC3339Nano)+`"}`)
	require.NoError(t, err)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, []BlockerKind{blockOldProtocol}, kinds(st.Blockers))
	assert.Equal(t, 1, st.Members[0].Protocol)
	_, err = ctl.Advance(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep)
	ok, err := ctl.Forget(ctx, "old", false)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = ctl.Advance(ctx, false)
	require.NoError(t, err)
}

// held returns a lock's phase.
func heldPhase(lk lockbridge.Lock) migrate.Phase {
	return lk.(interface{ Phase() migrate.Phase }).Phase()
}

// A lock held across phase steps: the registry reports its phase, the
// controller refuses the step that would put a locker beside it that does
// not see it, and when the step is forced the lock ends (Done, ErrLost)
// instead of living on invisible.
func TestFaultLockHeldAcrossAdvance(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	l := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer l.Close(ctx)
	name := locktest.Key(t, "k")
	lk, err := l.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseLegacy, heldPhase(lk))

	_, err = ctl.Advance(ctx, false)
	require.NoError(t, err)
	backdate(t, ctl.s, time.Hour)
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && st.Members[0].Phase == migrate.PhaseDualWrite
	}, 10*time.Second, 5*time.Millisecond)
	_, err = ctl.Advance(ctx, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue, "a legacy lock still held blocks dual-read")
	require.Equal(t, []BlockerKind{blockHeldLock}, kinds(ue.Blockers))
	assert.Equal(t, migrate.PhaseLegacy, ue.Blockers[0].Phase)
	select {
	case <-lk.Done():
		t.Fatal("a lock one step behind its locker stays held")
	default:
	}

	_, err = ctl.Advance(ctx, true)
	require.NoError(t, err)
	select {
	case <-lk.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the legacy lock did not end when its locker reached dual-read")
	}
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	var pe *migrate.PhaseEndedError
	require.ErrorAs(t, lk.Err(), &pe)
	assert.Equal(t, migrate.PhaseLegacy, pe.Taken)
	assert.Equal(t, migrate.PhaseDualRead, pe.LockerAt)
	require.ErrorIs(t, lk.Refresh(ctx, time.Minute), lockbridge.ErrNotHeld)
	require.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
	_, ok := locktest.Get(t, tg.Client, name)
	assert.False(t, ok, "Unlock still frees the key of an ended lock")
}

func TestFaultLockHeldAcrossRollback(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)
	l := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer l.Close(ctx)
	lk, err := l.TryLock(ctx, locktest.Key(t, "k"), time.Minute)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseModern, heldPhase(lk))

	at := func(p migrate.Phase) {
		t.Helper()
		require.Eventually(t, func() bool {
			st, err := ctl.Status(ctx)
			return err == nil && len(st.Members) == 1 && st.Members[0].Phase == p
		}, 10*time.Second, 5*time.Millisecond)
	}
	for _, p := range []migrate.Phase{migrate.PhaseDualRead, migrate.PhaseDualWrite} {
		_, err = ctl.Rollback(ctx, false)
		require.NoError(t, err, "a modern lock beside %v is seen", p)
		at(p)
	}
	_, err = ctl.Rollback(ctx, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue, "a modern lock still held blocks legacy")
	require.Equal(t, []BlockerKind{blockIncompatible}, kinds(ue.Blockers))
	assert.Equal(t, migrate.PhaseModern, ue.Blockers[0].Phase)
	select {
	case <-lk.Done():
		t.Fatal("the modern lock stays held beside dual-write")
	default:
	}
	_, err = ctl.Rollback(ctx, true)
	require.NoError(t, err)
	select {
	case <-lk.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the modern lock did not end when its locker reached legacy")
	}
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	require.ErrorIs(t, lk.Refresh(ctx, time.Minute), lockbridge.ErrNotHeld)
}

// Nil and zero inputs are errors wrapping ErrInvalid, never panics.
func TestFaultNilInputs(t *testing.T) {
	tg := locktest.Single(t)[0]
	var nilCtx context.Context
	var nilLocker *migrate.Locker
	assert.ErrorIs(t, nilLocker.Close(context.Background()), lockbridge.ErrInvalid)
	_, err := New(nil, "ns")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	var nilCtl *Controller
	_, err = nilCtl.Status(context.Background())
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	var zeroCtl Controller
	_, err = zeroCtl.Status(context.Background())
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)

	l := migrate.New(tg.Client, migrate.WithPhaseFrom(t.Name()))
	ctl, err := New(tg.Client, t.Name())
	require.NoError(t, err)
	for name, f := range map[string]func() error{
		"TryLock":  func() error { _, err := l.TryLock(nilCtx, "k", time.Second); return err },
		"Lock":     func() error { _, err := l.Lock(nilCtx, "k", time.Second); return err },
		"Phase":    func() error { _, err := l.Phase(nilCtx); return err },
		"Close":    func() error { return l.Close(nilCtx) },
		"Status":   func() error { _, err := ctl.Status(nilCtx); return err },
		"Advance":  func() error { _, err := ctl.Advance(nilCtx, false); return err },
		"Rollback": func() error { _, err := ctl.Rollback(nilCtx, false); return err },
		"Init":     func() error { _, err := ctl.Init(nilCtx, false); return err },
		"Repair":   func() error { _, err := ctl.Repair(nilCtx, migrate.PhaseLegacy, false); return err },
		"Forget":   func() error { _, err := ctl.Forget(nilCtx, "x", false); return err },
		"Step": func() error {
			_, err := ctl.Step(nilCtx, migrate.PhaseLegacy, migrate.PhaseDualWrite, false)
			return err
		},
	} {
		assert.NotPanics(t, func() { err = f() }, name)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, name)
	}
	require.NoError(t, l.Close(context.Background()))
}

// The namespace scripts reject every argument outside its exact form with
// an error reply, and change nothing.
func TestFaultNamespaceScriptsRejectBadArguments(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	k, err := migrateproto.NewKeys(t.Name())
	require.NoError(t, err)
	good := `{"v":3,"seq":1,"id":"a","phase":"legacy","host":"h","pid":1,"ns_init":0,"gen":0}`
	hb := []string{k.Phase, k.Meta, k.Clients, k.Expiry, k.Seen}
	ps := []string{k.Phase, k.Channel, k.Since, k.Meta, k.Mark, k.Pending, k.Clients, k.Sighting, k.Fleet}
	for name, tc := range map[string]struct {
		s    *driver.Script
		keys []string
		args []any
	}{
		"heartbeat hold with a space": {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1000 ", good, ""}},
		"heartbeat hold quoted":       {migrateproto.HeartbeatScript, hb, []any{"a", "1", `"1000"`, good, ""}},
		"heartbeat hold zero":         {migrateproto.HeartbeatScript, hb, []any{"a", "1", "0", good, ""}},
		"heartbeat empty id":          {migrateproto.HeartbeatScript, hb, []any{"", "1", "1000", good, ""}},
		"heartbeat seq zero":          {migrateproto.HeartbeatScript, hb, []any{"a", "0", "1000", good, ""}},
		"heartbeat seq differs":       {migrateproto.HeartbeatScript, hb, []any{"a", "2", "1000", good, ""}},
		"heartbeat protocol 2 entry": {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1000",
			`{"v":2,"seq":1,"id":"a","phase":"legacy"}`, ""}},
		"heartbeat v as a string": {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1000",
			`{"v":"3","seq":1,"id":"a","phase":"legacy"}`, ""}},
		"heartbeat not JSON":            {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1000", "v=3", ""}},
		"heartbeat entry missing":       {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1000"}},
		"heartbeat renews missing":      {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1000", good}},
		"heartbeat entry with renews":   {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1000", good, "1"}},
		"heartbeat touch, no renews":    {migrateproto.HeartbeatScript, hb, []any{"a", "2", "1000", "", ""}},
		"heartbeat touch renews zero":   {migrateproto.HeartbeatScript, hb, []any{"a", "2", "1000", "", "0"}},
		"heartbeat touch renews itself": {migrateproto.HeartbeatScript, hb, []any{"a", "2", "1000", "", "2"}},
		"heartbeat touch of seq 1":      {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1000", "", "1"}},
		"heartbeat touch renews quoted": {migrateproto.HeartbeatScript, hb, []any{"a", "3", "1000", "", `"1"`}},
		"phase_set unknown phase": {migrateproto.PhaseSetScript, ps, []any{"", "Legacy", "PUBLISH", "0", "init", "0",
			"0"}},
		"phase_set bad mode": {migrateproto.PhaseSetScript, ps, []any{"", "legacy", "PUBLISH", "0", "INIT", "0",
			"0"}},
		"phase_set bad publish": {migrateproto.PhaseSetScript, ps, []any{"", "legacy", "publish", "0", "init", "0",
			"0"}},
		"phase_set step from absent": {migrateproto.PhaseSetScript, ps, []any{"", "dual-write", "PUBLISH", "0", "step",
			"0", "0"}},
		"phase_set init from a phase": {migrateproto.PhaseSetScript, ps, []any{"legacy", "legacy", "PUBLISH", "0", "init",
			"0", "0"}},
		"phase_set gen with a sign": {migrateproto.PhaseSetScript, ps, []any{"", "legacy", "PUBLISH", "+1", "init", "0",
			"0"}},
		"phase_set silence negative": {migrateproto.PhaseSetScript, ps, []any{"", "legacy", "PUBLISH", "0", "init", "0",
			"-1"}},
		"phase_set silence missing": {migrateproto.PhaseSetScript, ps, []any{"", "legacy", "PUBLISH", "0", "init", "0"}},
		"forget flag true": {migrateproto.ForgetScript, []string{k.Clients, k.Expiry, k.Seen, k.Fleet},
			[]any{"a", "true", "0"}},
		"forget flag quoted": {migrateproto.ForgetScript, []string{k.Clients, k.Expiry, k.Seen, k.Fleet},
			[]any{"a", `"1"`, "0"}},
		"forget margin negative": {migrateproto.ForgetScript, []string{k.Clients, k.Expiry, k.Seen, k.Fleet},
			[]any{"a", "0", "-1"}},
		"prune grace negative": {migrateproto.PruneScript, []string{k.Clients, k.Expiry, k.Seen}, []any{"-1", "10"}},
		"prune limit zero":     {migrateproto.PruneScript, []string{k.Clients, k.Expiry, k.Seen}, []any{"0", "0"}},
		"registry_read bad mode": {migrateproto.RegistryReadScript, []string{k.Clients, k.Expiry, k.Seen}, []any{"all",
			"0", "10"}},
		"registry_read bad cursor": {migrateproto.RegistryReadScript, []string{k.Clients, k.Expiry, k.Seen},
			[]any{"entries", "-1", "10"}},
		"sighting empty key":            {migrateproto.SightingScript, []string{k.Sighting}, []any{""}},
		"phase_set missing arguments":   {migrateproto.PhaseSetScript, ps, []any{"", "legacy"}},
		"heartbeat hold beyond 2^40 ms": {migrateproto.HeartbeatScript, hb, []any{"a", "1", "1099511627777", good, ""}},
	} {
		_, err := tg.Client.Eval(ctx, tc.s, tc.keys, tc.args...)
		assert.ErrorContains(t, err, "lockbridge: bad argument", name)
	}
	n, err := tg.Client.Do(ctx, "DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, int64(0), n, "nothing was written")
}
