package control

import (
	"context"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
)

// A heartbeat the network held up lands after newer ones of the same
// client (its reading had timed out and the follower moved on). It must
// not overwrite the newer entry: before, it put back the client's older
// state — dual-write, holding nothing — while the client held a dual-read
// lock, and the controller rolled back to legacy past that lock.
func TestFaultLateHeartbeatDoesNotOverwriteANewerOne(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, direct, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualWrite)

	p := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rc.Close()
	// A long interval: it moves on phase-change notices, and heartbeats
	// only when a lock call or a notice asks for a reading.
	c := migrate.New(goredis.New(rc), migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(30*time.Second))
	defer c.Close(ctx)
	ph, err := c.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualWrite, ph)
	require.Eventually(t, func() bool { // its follower listens for phase changes
		return listeners(t, direct, ctl.s.k) == 1
	}, 5*time.Second, 5*time.Millisecond)
	time.Sleep(50 * time.Millisecond) // and has made the reading that follows subscribing

	// One reading's heartbeat is held up 2 s in the network; the lock call
	// that sent it gives up after 200 ms.
	sent := p.Count(faultproxy.Script(migrateproto.HeartbeatScript))
	p.Delay(2 * time.Second)
	held := time.Now()
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = c.TryLock(tctx, locktest.Key(t, "warm"), time.Minute)
	cancel()
	require.Error(t, err)
	require.Equal(t, 1, sent())
	p.Delay(0)

	// The fleet steps to dual-read, the client follows and locks there;
	// the fleet steps back to dual-write, the client follows, holding the
	// dual-read lock, and says so.
	backdate(t, ctl.s, time.Hour)
	_, err = ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseDualRead, false)
	require.NoError(t, err)
	require.Eventually(t, func() bool { p, err := c.Phase(ctx); return err == nil && p == migrate.PhaseDualRead },
		5*time.Second, 5*time.Millisecond)
	lk, err := c.TryLock(ctx, locktest.Key(t, "orders"), time.Minute)
	require.NoError(t, err)
	defer lk.Unlock(ctx)
	require.Equal(t, migrate.PhaseDualRead, heldPhase(lk))
	_, err = ctl.Step(ctx, migrate.PhaseDualRead, migrate.PhaseDualWrite, false)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && st.Members[0].Phase == migrate.PhaseDualWrite &&
			st.Members[0].Next == 0 &&
			st.Members[0].HeldOldest == migrate.PhaseDualRead
	}, 5*time.Second, 5*time.Millisecond)
	require.Less(t, time.Since(held), 2*time.Second, "the held-up heartbeat has not landed yet")

	time.Sleep(time.Until(held.Add(2500 * time.Millisecond))) // it lands
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	assert.Equal(t, migrate.PhaseDualRead, st.Members[0].HeldOldest, "the newer entry stands")
	_, err = ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseLegacy, false)
	require.ErrorIs(t, err, ErrUnsafeStep, "the dual-read lock blocks the rollback to legacy")
}
