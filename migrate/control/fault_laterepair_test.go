package control

import (
	"context"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
)

// heldRepair starts an unforced Repair to `to` through a proxy that holds
// its phase_set.lua for hold, past the call's end (a timeout of 200 ms),
// as heldStep does for an Advance: the caller gives up, and the repair
// reaches the server later. The returned channel is closed once it has.
func heldRepair(t *testing.T, srv *redistest.Server, ns string, to migrate.Phase, hold time.Duration) <-chan struct{} {
	t.Helper()
	ctx := context.Background()
	direct := locktest.GoRedis(t, srv)
	_, err := direct.Do(ctx, "SCRIPT", "LOAD", migrateproto.PhaseSetScript.Source())
	require.NoError(t, err)
	px := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: px.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	ctl, err := New(goredis.New(rc), ns, WithQuietPeriod(time.Minute), WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	px.Hold(faultproxy.Script(migrateproto.PhaseSetScript), hold)
	sent := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = ctl.Repair(cctx, to, false)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, "the repair's reply never came")
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Until(sent.Add(hold + 300*time.Millisecond)))
	}()
	return done
}

// A repair is judged on one reading, as a step is, but phase_set.lua
// checked it only against the phase key's bytes. Here the phase key was
// put back from an old backup (dual-write, the namespace hash says
// dual-read): the operator's repair to dual-read gives up with the script
// on its way; they repair again, meet a legacy locker at dual-read and
// roll back to dual-write — the bytes the given-up repair saw. Landing
// then, it moved the fleet to dual-read past the sighting: a dual-read
// holder and the legacy locker hold one lock.
func TestFaultLateRepairLandsAfterARollback(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, c, ns, WithQuietPeriod(time.Minute))
	walk(t, ctl, migrate.PhaseDualRead)
	_, err := c.Do(ctx, "SET", ctl.s.k.Phase, migrate.PhaseDualWrite.String()) // an old backup's phase key
	require.NoError(t, err)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualRead, st.Evidence)

	landed := heldRepair(t, srv, ns, migrate.PhaseDualRead, 3*time.Second) // inside the 5 s window
	_, err = ctl.Repair(ctx, migrate.PhaseDualRead, false)
	require.NoError(t, err, "the operator repairs again")
	sight(t, ctl.s, 0) // a legacy locker is met at dual-read
	_, err = ctl.Rollback(ctx, false)
	require.NoError(t, err, "and rolls back")

	stillAtDualWrite(t, ctl, c, ns, landed, "the late repair was judged before the rollback: it sets nothing")
}

// The same after a flush of the namespace's keys, and a second one: the
// given-up repair read no phase key and no namespace hash; the operator
// restores the namespace with init (from its mark), meets a legacy locker,
// rolls back to dual-write, and the namespace's keys are flushed again.
// The phase key is absent and the hash gone once more — all the given-up
// repair saw — so only the mark, written by every set and left by a
// flush, tells its reading from now.
func TestFaultLateRepairLandsAfterAReflush(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, c, ns, WithQuietPeriod(time.Minute))
	walk(t, ctl, migrate.PhaseDualRead)
	flushNamespace(t, c, ns)

	landed := heldRepair(t, srv, ns, migrate.PhaseDualRead, 3*time.Second)
	_, err := ctl.Init(ctx, false)
	require.NoError(t, err, "init restores the mark's phase")
	p, err := ctl.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualRead, p)
	sight(t, ctl.s, 0)
	_, err = ctl.Rollback(ctx, false)
	require.NoError(t, err)
	flushNamespace(t, c, ns)

	<-landed
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	if !assert.NotNil(t, st.PhaseProblem, "the late repair was judged on the first flush: it sets nothing (phase %v)",
		st.Phase) {
		twoHolders(t, c, ns)
	}
}
