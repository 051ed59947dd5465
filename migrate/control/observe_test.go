package control

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/logtest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
)

// The follower logs its phase moves, and a failed heartbeat (the server
// stopped) at warn level, naming the namespace and the client: before,
// the loop threw the error away.
func TestLogsPhaseMoveAndHeartbeatFailure(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	initNS(t, c, ns)
	rec, log := logtest.New()
	l := migrate.New(c, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond),
		migrate.WithTelemetry(lockbridge.Telemetry{Logger: log}))
	p, err := l.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseLegacy, p)

	moved := rec.Records("phase moved")
	require.Len(t, moved, 1)
	assert.Equal(t, slog.LevelInfo, moved[0].Level)
	assert.Equal(t, "none", moved[0].Attrs["lockbridge.migrate.phase.from"])
	assert.Equal(t, "legacy", moved[0].Attrs["lockbridge.migrate.phase"])
	assert.Equal(t, ns, moved[0].Attrs["lockbridge.migrate.namespace"])
	assert.Equal(t, "migrate", moved[0].Attrs["lockbridge.lock.system"])
	id := moved[0].Attrs["lockbridge.migrate.client.id"]
	assert.NotEmpty(t, id)
	assert.Empty(t, rec.Records("heartbeat failed"), "no failure while the server runs")

	srv.Stop()
	r, ok := rec.Wait("phase reading and heartbeat failed", 5*time.Second)
	require.True(t, ok, "the failed heartbeat is logged")
	assert.Equal(t, slog.LevelWarn, r.Level)
	assert.Equal(t, ns, r.Attrs["lockbridge.migrate.namespace"])
	assert.Equal(t, id, r.Attrs["lockbridge.migrate.client.id"])
	assert.NotEmpty(t, r.Attrs["error"])

	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = l.Close(cctx) // the server is gone: leaving the registry fails
}

// The controller logs the steps it takes (info) and the ones it refuses
// (warn), with the phases and the namespace.
func TestControllerLogsStepsAndRefusals(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	rec, log := logtest.New()
	ctl := initNS(t, tg.Client, ns, WithTelemetry(lockbridge.Telemetry{Logger: log}))
	_, err := ctl.Advance(ctx, false)
	require.NoError(t, err)
	_, err = ctl.Advance(ctx, false) // the quiet period holds dual-read back
	require.ErrorIs(t, err, ErrUnsafeStep)

	steps := rec.Records("controller changed the phase")
	require.Len(t, steps, 1)
	assert.Equal(t, slog.LevelInfo, steps[0].Level)
	assert.Equal(t, "legacy", steps[0].Attrs["lockbridge.migrate.phase.from"])
	assert.Equal(t, "dual-write", steps[0].Attrs["lockbridge.migrate.phase"])
	assert.Equal(t, ns, steps[0].Attrs["lockbridge.migrate.namespace"])
	refused := rec.Records("controller refused")
	require.Len(t, refused, 1)
	assert.Equal(t, slog.LevelWarn, refused[0].Level)
	assert.Equal(t, "dual-read", refused[0].Attrs["lockbridge.migrate.phase"])
	assert.Contains(t, refused[0].Attrs["first"], "has run dual-write")
}

// A lock that a phase move ends, in the background, is logged as lost,
// once its Done closed (after: a logger that blocks must not hold it).
func TestPhaseEndedLockLogged(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	rec, log := logtest.New()
	l := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(20*time.Millisecond),
		migrate.WithTelemetry(lockbridge.Telemetry{Logger: log}))
	defer l.Close(ctx)
	name := locktest.Key(t, "orders")
	lk, err := l.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	defer lk.Unlock(ctx)
	walk(t, ctl, migrate.PhaseDualRead) // forced past the held lock
	require.True(t, locktest.WaitDone(lk, 10*time.Second), "the legacy lock ends at dual-read")
	_, ok := rec.Wait("lock lost", 5*time.Second)
	require.True(t, ok, "the loss is logged")
	lost := rec.Records("lock lost")
	require.Len(t, lost, 1)
	assert.Equal(t, slog.LevelError, lost[0].Level)
	assert.Equal(t, name, lost[0].Attrs["lockbridge.lock.key"])
	assert.Contains(t, lost[0].Attrs["error"], "ended")
}
