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

// A step whose reply is lost is an unknown outcome, never sent again: the
// error says so, the next reading shows whether it ran, and asking for the
// same step again is refused as a phase changed meanwhile (it ran) — never
// a second step past the one asked for.
func TestFaultStepReplyLost(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	initNS(t, direct, ns)
	p := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rc.Close()
	ctl, err := New(goredis.New(rc), ns)
	require.NoError(t, err)
	_, err = ctl.Status(ctx) // the scripts are loaded: a dropped EVALSHA reply is a script that ran
	require.NoError(t, err)
	sets := p.Count(faultproxy.Script(migrateproto.PhaseSetScript))

	p.DropReply(faultproxy.Script(migrateproto.PhaseSetScript), 1, faultproxy.Close)
	_, err = ctl.Step(ctx, migrate.PhaseLegacy, migrate.PhaseDualWrite, false)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
	assert.Equal(t, 1, sets(), "sent once, never again")
	got, err := ctl.Phase(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseDualWrite, got, "the step ran; the reading says so")

	_, err = ctl.Step(ctx, migrate.PhaseLegacy, migrate.PhaseDualWrite, false)
	require.ErrorIs(t, err, errPhaseChanged, "asking for the same step again takes no second one")
	got, err = ctl.Phase(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseDualWrite, got)
}

// A restart with persistence keeps the namespace as it keeps the locks:
// the phase, the registry and the mark come back, a follower goes on in
// its phase, and a step is judged as before.
func TestFaultControllerRestartWithPersistence(t *testing.T) {
	srv := redistest.StartPersistent(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, c, ns)
	walk(t, ctl, migrate.PhaseDualWrite)
	f := migrate.New(c, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond))
	defer func() { _ = f.Close(ctx) }()
	_, err := f.Phase(ctx)
	require.NoError(t, err)
	before, err := ctl.Status(ctx)
	require.NoError(t, err)

	srv.Restart()
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && st.Phase == migrate.PhaseDualWrite && len(st.Members) == 1
	}, 10*time.Second, 20*time.Millisecond, "the namespace came back with the restart")
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, before.mark, st.mark, "the mark came back")
	assert.Equal(t, before.Since, st.Since)
	lk, err := f.TryLock(ctx, locktest.Key(t, "k"), time.Second)
	require.NoError(t, err, "the follower goes on in its phase")
	assert.Equal(t, migrate.PhaseDualWrite, lk.(interface{ Phase() migrate.Phase }).Phase())
	require.NoError(t, lk.Unlock(ctx))
}
