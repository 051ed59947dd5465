package control

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// A locker cut off while the fleet rolled back from modern to legacy, its
// registry entry long expired, comes back: it must start afresh at the
// phase it reads, as a new locker does. Stepping one phase from where it
// was (modern → dual-read) made it lock on the modern key alone while the
// Java fleet, back at legacy, took the legacy key: two holders.
func TestFaultReturningLockerStartsAtTheStoredPhase(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, direct, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)

	p := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rc.Close()
	l := migrate.New(goredis.New(rc), migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(50*time.Millisecond),
		migrate.WithPhaseLease(200*time.Millisecond))
	defer l.Close(ctx)
	ph, err := l.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseModern, ph)

	p.Down(true) // cut off: its lease lapses, its entry expires
	require.Eventually(t, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := l.Phase(cctx)
		return errors.Is(err, migrate.ErrPhaseUnknown)
	}, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && !st.Members[0].Live
	}, 10*time.Second, 20*time.Millisecond, "the cut-off locker's entry expires")
	walk(t, ctl, migrate.PhaseLegacy) // the fleet rolls back without it

	p.Down(false)
	name := locktest.Key(t, "orders")
	var lk lockbridge.Lock
	require.Eventually(t, func() bool {
		lk, err = l.TryLock(ctx, name, time.Minute)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "it locks again once it reads the phase")
	defer lk.Unlock(ctx)
	assert.Equal(t, migrate.PhaseLegacy, heldPhase(lk),
		"it took the lock in the fleet's phase, not one step from its old one")

	java := legacy.New(direct)
	_, err = java.TryLock(ctx, name, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "a legacy locker must not get in beside it")
}

// pauseOnce holds the first script call that match picks before it is
// sent, until release is closed: the calling goroutine descheduled (a GC
// pause, a busy host) between deciding and sending.
type pauseOnce struct {
	driver.Client
	match   func(s *driver.Script, args []any) bool
	once    sync.Once
	held    chan struct{} // closed when the call is held
	release chan struct{}
}

func newPauseOnce(c driver.Client, match func(s *driver.Script, args []any) bool) *pauseOnce {
	return &pauseOnce{Client: c, match: match, held: make(chan struct{}), release: make(chan struct{})}
}

func (p *pauseOnce) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	if p.match(s, args) {
		hold := false
		p.once.Do(func() { hold = true })
		if hold {
			close(p.held)
			select {
			case <-p.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return p.Client.Eval(ctx, s, keys, args...)
}

// waitHeld waits until p holds its call.
func (p *pauseOnce) waitHeld(t *testing.T, what string) {
	t.Helper()
	select {
	case <-p.held:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// reportOf matches the heartbeat that reports phase p with no next: a
// follower's report after it moved to p.
func reportOf(p migrate.Phase) func(s *driver.Script, args []any) bool {
	return func(s *driver.Script, args []any) bool {
		if s != migrateproto.HeartbeatScript || len(args) < 4 {
			return false
		}
		e, _ := args[3].(string)
		return strings.Contains(e, `"phase":"`+p.String()+`"`) && !strings.Contains(e, `"next"`)
	}
}

// A follower that moved to dual-read and locks there before its registry
// entry says so: two rollbacks (dual-read → dual-write → legacy) must not
// pass it. Before, its entry still read dual-write, both rollbacks were
// allowed, and a legacy locker took the lock its dual-read lock (modern key
// only) held: two holders. Now the follower announces the phase it moves to
// (the entry's next) before it runs it, and the controller counts it there.
func TestFaultMoveShownBeforeItRuns(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualWrite)

	pr := newPauseOnce(tg.Client, reportOf(migrate.PhaseDualRead))
	var release sync.Once
	defer release.Do(func() { close(pr.release) })
	// A long interval: it moves on the phase-change notice, and the held
	// report does not time out during the test.
	l := migrate.New(pr, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(30*time.Second))
	defer l.Close(ctx)
	ph, err := l.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualWrite, ph)
	// A first lock registers the lease it takes (the hold it heartbeats).
	warm, err := l.TryLock(ctx, locktest.Key(t, "warm"), time.Minute)
	require.NoError(t, err)
	require.NoError(t, warm.Unlock(ctx))

	backdate(t, ctl.s, time.Hour)
	_, err = ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseDualRead, false)
	require.NoError(t, err)
	pr.waitHeld(t, "the follower did not move to dual-read")
	name := locktest.Key(t, "orders")
	lk, err := l.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	defer lk.Unlock(ctx)
	require.Equal(t, migrate.PhaseDualRead, heldPhase(lk))

	_, err = ctl.Step(ctx, migrate.PhaseDualRead, migrate.PhaseDualWrite, false)
	require.NoError(t, err, "dual-write excludes dual-read: one rollback is safe")
	_, err = ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseLegacy, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue, "a client that may run dual-read blocks the rollback to legacy")
	require.Len(t, ue.Blockers, 1)
	assert.Equal(t, blockIncompatible, ue.Blockers[0].Kind)
	assert.Equal(t, migrate.PhaseDualRead, ue.Blockers[0].Phase)

	release.Do(func() { close(pr.release) })

	// Another locker of the fleet, in the phase the controller left it at.
	other := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
	defer other.Close(ctx)
	_, err = other.TryLock(ctx, name, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder")
}

// An acquire sent just before its follower moves lands after the move: the
// heartbeat that reports the new phase must report it too. Before, an
// acquire in flight was invisible to the registry until it landed, so a
// dual-read acquire held on its way let the controller roll back from
// dual-write (where the follower now was, holding "nothing") to legacy, and
// a legacy locker took the lock the dual-read acquire then took: two
// holders.
func TestFaultAcquireInFlightIsReported(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualRead)

	pa := newPauseOnce(tg.Client, func(s *driver.Script, _ []any) bool { return s == migrateproto.AcquireScript })
	var release sync.Once
	defer release.Do(func() { close(pa.release) })
	l := migrate.New(pa, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(30*time.Second))
	defer l.Close(ctx)
	ph, err := l.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualRead, ph)

	name := locktest.Key(t, "orders")
	type result struct {
		lk  lockbridge.Lock
		err error
	}
	got := make(chan result, 1)
	go func() {
		lk, err := l.TryLock(ctx, name, time.Minute)
		got <- result{lk, err}
	}()
	pa.waitHeld(t, "the dual-read acquire was not sent")

	_, err = ctl.Step(ctx, migrate.PhaseDualRead, migrate.PhaseDualWrite, false)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && st.Members[0].Phase == migrate.PhaseDualWrite && st.Members[0].Next == 0
	}, 10*time.Second, 5*time.Millisecond, "the follower moves to dual-write and reports it")
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseDualRead, st.Members[0].HeldOldest, "the acquire in flight is reported in its phase")

	_, err = ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseLegacy, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue, "the dual-read acquire in flight blocks the rollback to legacy")

	release.Do(func() { close(pa.release) })
	r := <-got
	require.NoError(t, r.err)
	defer r.lk.Unlock(ctx)
	assert.Equal(t, migrate.PhaseDualRead, heldPhase(r.lk))

	other := migrate.New(tg.Client, migrate.WithPhaseFrom(ns))
	defer other.Close(ctx)
	_, err = other.TryLock(ctx, name, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder")
}

// An acquire whose reply never came may have taken the lock: its locker
// keeps reporting it, in its phase, until its ttl has passed — so the
// controller cannot roll back past a lock nobody knows is gone.
func TestFaultUnknownAcquireStaysReported(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, direct, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualRead)

	p := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rc.Close()
	l := migrate.New(goredis.New(rc), migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer l.Close(ctx)
	_, err := l.Phase(ctx)
	require.NoError(t, err)
	name := locktest.Key(t, "orders")
	// The dual-read acquire's reply is lost, and so is the token read-back
	// that would settle it: the outcome stays unknown.
	p.DropReply(faultproxy.Script(migrateproto.AcquireScript), 1, faultproxy.Close)
	p.DropReply(faultproxy.Command("MGET"), 1, faultproxy.Close)
	_, err = l.TryLock(ctx, name, 3*time.Second)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)

	_, err = ctl.Step(ctx, migrate.PhaseDualRead, migrate.PhaseDualWrite, false)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && st.Members[0].Phase == migrate.PhaseDualWrite && st.Members[0].Next == 0
	}, 5*time.Second, 5*time.Millisecond)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseDualRead, st.Members[0].HeldOldest,
		"the acquire of unknown outcome is reported as held in dual-read")
	_, err = ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseLegacy, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, []BlockerKind{blockIncompatible}, kinds(ue.Blockers))

	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && st.Members[0].HeldOldest == 0
	}, 10*time.Second, 20*time.Millisecond, "and no longer once its ttl has passed")
	_, err = ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseLegacy, false)
	require.NoError(t, err)
}

// As TestFaultReturningLockerStartsAtTheStoredPhase, but the locker still
// has a lock it never unlocked, whose lease ran out while it was cut off.
// That lock holds nothing any more and must not stop it starting afresh:
// before, it stepped one phase from modern (to dual-read) beside the Java
// fleet, back at legacy, and a legacy locker took the lock it then took.
func TestFaultReturningLockerWithAnExpiredLockStartsAtTheStoredPhase(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, direct, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)

	p := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rc.Close()
	l := migrate.New(goredis.New(rc), migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(50*time.Millisecond),
		migrate.WithPhaseLease(200*time.Millisecond))
	defer l.Close(ctx)
	old, err := l.TryLock(ctx, locktest.Key(t, "forgotten"), 300*time.Millisecond) // never unlocked
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseModern, heldPhase(old))

	p.Down(true) // cut off: its lease lapses, its lock's lease runs out, its entry expires
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && !st.Members[0].Live
	}, 10*time.Second, 20*time.Millisecond, "the cut-off locker's entry expires")
	require.True(t, time.Now().After(old.ExpiresAt()))
	walk(t, ctl, migrate.PhaseLegacy) // the fleet rolls back without it

	p.Down(false)
	name := locktest.Key(t, "orders")
	var lk lockbridge.Lock
	require.Eventually(t, func() bool {
		lk, err = l.TryLock(ctx, name, time.Minute)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "it locks again once it reads the phase")
	defer lk.Unlock(ctx)
	assert.Equal(t, migrate.PhaseLegacy, heldPhase(lk),
		"it took the lock in the fleet's phase, not one step from its old one")

	java := legacy.New(direct)
	_, err = java.TryLock(ctx, name, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "a legacy locker must not get in beside it")
}
