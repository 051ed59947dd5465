package migrate

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
)

// A heartbeat whose caller gave up (its context ended) may still be on
// its way to the server. Close must not leave the registry before it
// lands: before the fix, the client adapter abandoned the heartbeat on the
// cancellation, Close's leave ran first, and the heartbeat landed after it
// and registered the closed locker again, at its phase, for its whole hold
// — a member that no longer exists, which blocks the controller's steps
// and counts as evidence of its phase (an init after a flush refused with
// "phase lost").
func TestFaultHeartbeatGivenUpOnLandsAfterClose(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	// Loaded, so that the held EVALSHA runs when it lands.
	_, err := direct.Do(ctx, "SCRIPT", "LOAD", migrateproto.HeartbeatScript.Source())
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		cancel func(ctx context.Context) (context.Context, context.CancelFunc) // the lock call's context
	}{
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 100*time.Millisecond)
		}},
		{"cancelled", func(ctx context.Context) (context.Context, context.CancelFunc) {
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
			return cctx, cancel
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := locktest.Key(t, "ns")
			k, err := migrateproto.NewKeys(ns)
			require.NoError(t, err)
			px := faultproxy.Start(t, srv.Addr())
			rc := goredislib.NewClient(&goredislib.Options{Addr: px.Addr(), MaxRetries: -1})
			t.Cleanup(func() { _ = rc.Close() })
			l := New(goredis.New(rc), WithPhase(PhaseDualWrite), WithNamespace(ns))

			// The first heartbeat (the lock call's) is held in the network
			// past the lock call's end.
			const held = 600 * time.Millisecond
			px.Hold(faultproxy.Script(migrateproto.HeartbeatScript), held)
			cctx, cancel := tc.cancel(ctx)
			defer cancel()
			_, err = l.TryLock(cctx, locktest.Key(t, "k"), time.Second)
			require.Error(t, err, "the lock call gave up on its heartbeat")

			require.NoError(t, l.Close(ctx))
			time.Sleep(held) // the held heartbeat has landed by now, if it is to
			n, err := direct.Do(ctx, "HLEN", k.Clients)
			require.NoError(t, err)
			assert.Equal(t, int64(0), n, "the closed locker left the registry, and nothing registered it again")
		})
	}
}

// The heartbeat awaited so is given up all the same when the client's own
// read timeout ends it first (here 300 ms; go-redis's default is 3 s), or
// after a phase lease: the adapter reports an unknown outcome, the await
// ends, and the heartbeat, still on its way, lands after Close's leave and
// registers the closed locker again for its whole hold.
func TestFaultHeartbeatTimedOutLandsAfterClose(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	_, err := direct.Do(ctx, "SCRIPT", "LOAD", migrateproto.HeartbeatScript.Source())
	require.NoError(t, err)
	ns := locktest.Key(t, "ns")
	k, err := migrateproto.NewKeys(ns)
	require.NoError(t, err)
	px := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: px.Addr(), MaxRetries: -1, ReadTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { _ = rc.Close() })
	l := New(goredis.New(rc), WithPhase(PhaseDualWrite), WithNamespace(ns))

	const held = 1500 * time.Millisecond
	px.Hold(faultproxy.Script(migrateproto.HeartbeatScript), held)
	_, err = l.TryLock(ctx, locktest.Key(t, "k"), time.Second)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, "the heartbeat timed out")
	require.NoError(t, l.Close(ctx))
	time.Sleep(held) // the held heartbeat has landed by now, if it is to
	alive, err := direct.Do(ctx, "EVAL", "local e = redis.call('ZSCORE', KEYS[1], ARGV[1]) "+
		"if not e then return 0 end local t = redis.call('TIME') "+
		"if tonumber(e) > tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then return 1 end return 0",
		1, k.Expiry, l.follow.id)
	require.NoError(t, err)
	assert.Equal(t, int64(0), alive, "the closed locker is not counted (no entry, or a dead one): nothing registered "+
		"it again")
}
