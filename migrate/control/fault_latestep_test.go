package control

import (
	"context"
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

// heldStep starts an Advance through a proxy that holds its phase_set.lua
// for hold, past the call's end (a timeout of 200 ms), with a step window
// of window: the caller gives
// up, the client adapter abandons the command, and it reaches the server
// later. It returns when the Advance has returned, with a channel closed
// once the held step has reached the server (if it was sent).
func heldStep(t *testing.T, srv *redistest.Server, ns string, hold, window time.Duration) <-chan struct{} {
	t.Helper()
	ctx := context.Background()
	direct := locktest.GoRedis(t, srv)
	// Loaded, so that the held EVALSHA runs when it lands.
	_, err := direct.Do(ctx, "SCRIPT", "LOAD", migrateproto.PhaseSetScript.Source())
	require.NoError(t, err)
	px := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: px.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	ctl, err := New(goredis.New(rc), ns, WithQuietPeriod(time.Minute))
	require.NoError(t, err)
	ctl.window = window
	px.Hold(faultproxy.Script(migrateproto.PhaseSetScript), hold)
	sent := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = ctl.Advance(cctx, false)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, "the step's reply never came")
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Until(sent.Add(hold + 300*time.Millisecond))) // forwarded and run by then
	}()
	return done
}

// twoHolders shows what a fleet at dual-read while a legacy locker runs
// lets happen: a dual-read holder (the modern key only), and the legacy
// locker taking the same lock on its legacy key.
func twoHolders(t *testing.T, c driver.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	name := locktest.Key(t, "orders")
	dr := migrate.New(c, migrate.WithPhaseFrom(ns))
	defer func() { _ = dr.Close(ctx) }()
	lk, err := dr.TryLock(ctx, name, 10*time.Second)
	require.NoError(t, err)
	defer func() { _ = lk.Unlock(ctx) }()
	java, err := legacy.New(c).TryLock(ctx, name, 10*time.Second)
	if err == nil {
		defer func() { _ = java.Unlock(ctx) }()
	}
	assert.Error(t, err, "a dual-read holder and a legacy locker hold %q at once", name)
}

// stillAtDualWrite checks, once the held command has landed, that the
// namespace is still at dual-write; if not, it shows the two holders that
// allows.
func stillAtDualWrite(t *testing.T, ctl *Controller, c driver.Client, ns string, landed <-chan struct{}, why string) {
	t.Helper()
	<-landed
	p, err := ctl.Phase(context.Background())
	require.NoError(t, err)
	if !assert.Equal(t, migrate.PhaseDualWrite, p, why) {
		twoHolders(t, c, ns)
	}
}

// A step is judged on one reading of the fleet and must set the phase only
// on the state it was judged on. An Advance whose caller gave up (its
// context ended with phase_set.lua on its way) may still reach the server
// later: here after the operator stepped to dual-read themselves, met a
// legacy locker there (its sighting) and rolled back to dual-write. The
// phase key holds "dual-write" again, which is all the script checked, so
// the late step moved the fleet to dual-read past the sighting that made
// the rollback: a dual-read holder and the legacy locker then hold one
// lock.
func TestFaultLateStepLandsAfterARollback(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, c, ns, WithQuietPeriod(time.Minute))
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour) // dual-write has run past the quiet period

	// Held for less than the step window: the generation refuses it.
	landed := heldStep(t, srv, ns, 3*time.Second, stepWindow)
	p, err := ctl.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualWrite, p, "the given-up step has not landed (yet)")
	_, err = ctl.Advance(ctx, false)
	require.NoError(t, err, "the operator steps again")
	sight(t, ctl.s, 0) // a legacy locker is met at dual-read
	_, err = ctl.Rollback(ctx, false)
	require.NoError(t, err, "and rolls back")

	stillAtDualWrite(t, ctl, c, ns, landed, "the late step was judged before the rollback: it sets nothing")
}

// The same without a second step: the given-up Advance lands after a
// legacy locker was sighted, which its reading had not seen. The operator,
// told the outcome is unknown, reads the fleet again, finds it still at
// dual-write and the step now refused — and the late step moves it all the
// same.
func TestFaultLateStepLandsAfterASighting(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, c, ns, WithQuietPeriod(time.Minute))
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour)

	// Held for longer than the step window (1 s here): its lateness
	// refuses it.
	landed := heldStep(t, srv, ns, 2500*time.Millisecond, time.Second)
	sight(t, ctl.s, 0)
	_, err := ctl.Advance(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep, "the sighting blocks the step")

	stillAtDualWrite(t, ctl, c, ns, landed, "the late step was judged on a reading older than the sighting: it sets nothing")
}
