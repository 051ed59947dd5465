package migrate

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
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// noResendCase is a phase's lock and the scripts its release and refresh
// run.
type noResendCase struct {
	phase            Phase
	release, refresh *driver.Script
}

var noResendCases = []noResendCase{
	{PhaseDualWrite, migrateproto.ReleaseScript, migrateproto.RefreshScript},
	{PhaseDualRead, migrateproto.ReleaseScript, migrateproto.RefreshScript},
	{PhaseModern, modernproto.ReleaseScript, modernproto.RefreshScript},
}

// noResendLocker is a Locker fixed in phase p whose connections go through
// a fault proxy, its scripts loaded on the server (so a dropped EVALSHA
// reply is that of a script that ran, not a NOSCRIPT).
func noResendLocker(t *testing.T, srv *redistest.Server, p Phase) (*Locker, *faultproxy.Proxy) {
	t.Helper()
	ctx := context.Background()
	px := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: px.Addr(), MaxRetries: -1, ReadTimeout: time.Second})
	t.Cleanup(func() { _ = rc.Close() })
	l := New(goredis.New(rc), WithPhase(p))
	t.Cleanup(func() { _ = l.Close(ctx) })
	lk, err := l.TryLock(ctx, locktest.Key(t, "warm-up"), time.Second)
	require.NoError(t, err)
	require.NoError(t, lk.Refresh(ctx, time.Second))
	require.NoError(t, lk.Unlock(ctx))
	return l, px
}

// A release whose reply never comes is sent once: Unlock returns the typed
// unknown outcome (never "released", never ErrNotHeld) and the lock ends
// as lost. Before the fix, the dual phases and modern sent the release a
// second time and, finding no key, reported a clean release.
func TestFaultLostReleaseReplyIsNotResent(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	for _, tc := range noResendCases {
		t.Run(tc.phase.String(), func(t *testing.T) {
			l, px := noResendLocker(t, srv, tc.phase)
			name := locktest.Key(t, "k")
			_, modernKey, err := l.Keys(name)
			require.NoError(t, err)
			lk, err := l.TryLock(ctx, name, 5*time.Second)
			require.NoError(t, err)

			sends := px.Count(faultproxy.Script(tc.release))
			px.DropReply(faultproxy.Script(tc.release), 1, faultproxy.Close)
			err = lk.Unlock(ctx)
			require.Error(t, err)
			assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
			assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
			assert.ErrorAs(t, err, new(*lease.UnknownReleaseError))
			<-lk.Done()
			assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
			time.Sleep(100 * time.Millisecond) // a resend would have come by now
			assert.Equal(t, 1, sends(), "the release was sent once")
			assert.Equal(t, 1, px.Dropped())
			_, held := locktest.Get(t, direct, modernKey)
			assert.False(t, held, "the one release ran")

			err = lk.Unlock(ctx)
			require.ErrorIs(t, err, lockbridge.ErrNotHeld, "a second Unlock sends nothing")
			assert.Equal(t, 1, sends())
		})
	}
}

// A refresh whose reply never comes is sent once and returns the typed
// unknown outcome. In dual-read and modern the lock stays held until its
// timer (the refresh's lease counts as unsure); in dual-write it ends, the
// legacy value it may have rewritten not being unique. Before the fix,
// dual-read and modern sent the refresh a second time.
func TestFaultLostRefreshReplyIsNotResent(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	for _, tc := range noResendCases {
		t.Run(tc.phase.String(), func(t *testing.T) {
			l, px := noResendLocker(t, srv, tc.phase)
			name := locktest.Key(t, "k")
			_, modernKey, err := l.Keys(name)
			require.NoError(t, err)
			lk, err := l.TryLock(ctx, name, 5*time.Second)
			require.NoError(t, err)
			expires := lk.ExpiresAt()

			sends := px.Count(faultproxy.Script(tc.refresh))
			px.DropReply(faultproxy.Script(tc.refresh), 1, faultproxy.Close)
			err = lk.Refresh(ctx, 5*time.Second)
			require.Error(t, err)
			assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
			assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
			time.Sleep(100 * time.Millisecond) // a resend would have come by now
			assert.Equal(t, 1, sends(), "the refresh was sent once")
			assert.Equal(t, 1, px.Dropped())
			v, ok := locktest.Get(t, direct, modernKey)
			require.True(t, ok)
			assert.Equal(t, lk.Token(), v)

			if tc.phase == PhaseDualWrite {
				<-lk.Done()
				assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
				return
			}
			select {
			case <-lk.Done():
				t.Fatalf("the lock ended at once: %v", lk.Err())
			default:
			}
			assert.False(t, lk.ExpiresAt().After(expires), "an unconfirmed refresh extends nothing")
			require.NoError(t, lk.Refresh(ctx, 5*time.Second), "a later round is a new refresh")
			require.NoError(t, lk.Unlock(ctx))
			assert.Equal(t, 2, sends())
		})
	}
}
