package lockbridge_test

// No resends: a command that changes lock state is never sent twice after
// it may have reached Redis, and a reply that never came is an unknown
// outcome — an acquire's settled by reading a unique token back where there
// is one (modern, migrate's dual phases), left alone where there is not
// (legacy's timestamps); a release's or refresh's never settled by sending
// it again. The faults are real: a loopback proxy forwards the command
// and drops its reply.

import (
	"context"
	"strconv"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

// A go-redis client with its default options resends a command whose
// reply was lost; the adapter refuses it, naming the setting.
func TestFaultGoRedisClientThatResendsIsRefused(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		client  goredislib.UniversalClient
		setting string
	}{
		{"client", goredislib.NewClient(&goredislib.Options{Addr: srv.Addr()}), "MaxRetries"},
		{"ring", goredislib.NewRing(&goredislib.RingOptions{Addrs: map[string]string{"a": srv.Addr()}}), "MaxRetries"},
		{"cluster, MaxRetries -1 only", goredislib.NewClusterClient(&goredislib.ClusterOptions{Addrs: []string{srv.Addr()},
			MaxRetries: -1}), "MaxRedirects"},
		{"cluster", goredislib.NewClusterClient(&goredislib.ClusterOptions{Addrs: []string{srv.Addr()}, MaxRetries: 2,
			MaxRedirects: -1}), "MaxRetries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.client.Close()
			err := goredis.Check(tc.client)
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			assert.Contains(t, err.Error(), tc.setting)
			c := goredis.New(tc.client)
			for name, l := range map[string]lockbridge.Locker{
				"legacy": legacy.New(c), "modern": modern.New(c), "migrate": migrate.New(c,
					migrate.WithPhase(migrate.PhaseDualWrite)),
			} {
				_, err := l.TryLock(ctx, "refused:"+name, time.Second)
				require.ErrorIs(t, err, lockbridge.ErrInvalid, name)
				assert.Contains(t, err.Error(), tc.setting, name)
			}
		})
	}
	ok := goredislib.NewClient(&goredislib.Options{Addr: srv.Addr(), MaxRetries: -1})
	defer ok.Close()
	assert.NoError(t, goredis.Check(ok))
}

// A legacy release whose reply is lost while a Java successor takes the
// lock: the release is not resent, the successor's value stays, and the
// holder learns the outcome is unknown (its lock ends). A client that would
// resend (go-redis's defaults) is refused before it can hold anything.
func TestFaultLostLegacyReleaseReply(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	for _, mode := range []legacyproto.Mode{legacyproto.ModeAtomic, legacyproto.ModeClassic} {
		for _, retries := range []int{0, -1} { // 0: go-redis's default, 3 resends
			t.Run(mode.String()+"/MaxRetries="+strconv.Itoa(retries), func(t *testing.T) {
				p := faultproxy.Start(t, srv.Addr())
				rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: retries,
					ReadTimeout: 300 * time.Millisecond})
				defer rdb.Close()
				key := locktest.Key(t, "lock")
				holder := legacy.New(goredis.New(rdb), legacyproto.WithMode(mode))
				lk, err := holder.TryLock(ctx, key, 4*time.Second)
				if retries == 0 {
					require.ErrorIs(t, err, lockbridge.ErrInvalid, "a client that resends is refused")
					return
				}
				require.NoError(t, err)
				warmUp(t, holder)
				release := faultproxy.Command("EVALSHA")
				if mode == legacyproto.ModeClassic {
					release = faultproxy.Command("DEL")
				}
				p.DropReply(release, 1, faultproxy.Hang)
				done := make(chan error, 1)
				go func() { done <- lk.Unlock(ctx) }()
				// The release ran (its reply is held back): a Java service
				// takes the free lock, writing an expiry inside our window.
				var exp int64
				require.Eventually(t, func() bool {
					var ok bool
					exp, ok, err = javareplay.Lock(ctx, direct, key, 4*time.Second, nil)
					require.NoError(t, err)
					return ok
				}, 5*time.Second, 5*time.Millisecond)
				err = <-done
				require.Error(t, err)
				assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
				assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
				<-lk.Done()
				assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
				time.Sleep(100 * time.Millisecond) // a resend would land now
				v, ok, err := direct.Get(ctx, key)
				require.NoError(t, err)
				require.True(t, ok, "the successor's lock was deleted")
				assert.Equal(t, strconv.FormatInt(exp, 10), v)
				assert.Equal(t, 1, p.Dropped())
			})
		}
	}
}

// A legacy acquire whose reply is lost is neither adopted nor undone: its
// value stays until its expiry, and the caller is told the outcome is
// unknown, never "held by another".
func TestFaultLostLegacyAcquireReply(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rdb.Close()
	ctx := context.Background()
	for _, mode := range []legacyproto.Mode{legacyproto.ModeAtomic, legacyproto.ModeClassic} {
		l := legacy.New(goredis.New(rdb), legacyproto.WithMode(mode))
		warmUp(t, l) // the scripts are loaded: EVALSHA runs them
		key := "lost-acquire:" + mode.String()
		// Both modes acquire a free key with SETNX.
		p.DropReply(faultproxy.Command("SETNX"), 1, faultproxy.Close)
		_, err := l.TryLock(ctx, key, 2*time.Second)
		require.Error(t, err, mode)
		assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, mode)
		assert.NotErrorIs(t, err, lockbridge.ErrNotObtained, mode)
		_, ok, err := direct.Get(ctx, key)
		require.NoError(t, err)
		assert.True(t, ok, "%v: the value stays until it expires", mode)
	}
}

// Modern and migrate's dual phases settle a lost acquire reply by their
// unique token: the lock is held (its token is in the key). A lost release
// or refresh reply is never sent again: it is an unknown outcome (a release
// ends the lock; a refresh leaves it to its timer, except in dual-write,
// whose rewritten legacy value is not unique) — never "held by another" or
// "expired".
func TestFaultLostModernReplies(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rdb.Close()
	c := goredis.New(rdb)
	ctx := context.Background()
	lockers := map[string]struct {
		l         lockbridge.Locker
		stored    func(key string) string // the key holding the token
		fenceable bool
		acquire   string // the acquire's command: a script, or SET NX PX without fencing
	}{
		"modern":          {modern.New(c, modern.WithFencing()), func(k string) string { return k }, true, "EVALSHA"},
		"modern-unfenced": {modern.New(c), func(k string) string { return k }, false, "SET"},
		"migrate-dual-write": {migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite),
			migrate.WithModern(modern.WithFencing())), modernKey, true, "EVALSHA"},
		"migrate-dual-read": {migrate.New(c, migrate.WithPhase(migrate.PhaseDualRead)), modernKey, false, "EVALSHA"},
		"migrate-modern":    {migrate.New(c, migrate.WithPhase(migrate.PhaseModern)), modernKey, false, "SET"},
	}
	for name, tc := range lockers {
		t.Run(name, func(t *testing.T) {
			warmUp(t, tc.l) // the scripts are loaded: EVALSHA runs them
			key := "lost:" + name
			before := p.Dropped()
			p.DropReply(faultproxy.Command(tc.acquire), 1, faultproxy.Close)
			lk, err := tc.l.TryLock(ctx, key, 5*time.Second)
			require.NoError(t, err, "the acquire ran: reading the token back finds it")
			require.Equal(t, before+1, p.Dropped(), "the acquire's reply was dropped")
			v, ok, err := direct.Get(ctx, tc.stored(key))
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, lk.Token(), v)
			if f, ok := lk.(interface{ Fence() int64 }); ok && tc.fenceable {
				assert.Positive(t, f.Fence(), "the fence handed out is read back too")
			}

			releases := p.Count(faultproxy.Command("EVALSHA"))
			p.DropReply(faultproxy.Command("EVALSHA"), 1, faultproxy.Close)
			err = lk.Unlock(ctx)
			require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, "the release ran, unanswered: never sent again")
			assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
			assert.Equal(t, 1, releases(), "sent once")
			assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
			_, ok, err = direct.Get(ctx, tc.stored(key))
			require.NoError(t, err)
			assert.False(t, ok)

			lk, err = tc.l.TryLock(ctx, key, 5*time.Second)
			require.NoError(t, err)
			defer lk.Unlock(ctx)
			refreshes := p.Count(faultproxy.Command("EVALSHA"))
			p.DropReply(faultproxy.Command("EVALSHA"), 1, faultproxy.Close)
			err = lk.Refresh(ctx, 5*time.Second)
			require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome, "a lost refresh reply is never sent again")
			assert.Equal(t, 1, refreshes(), "sent once")
			if name == "migrate-dual-write" {
				// The refresh rewrote the legacy expiry, or did not: a value
				// that is not unique cannot be read back, so the lock ends.
				<-lk.Done()
				assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
				return
			}
			select {
			case <-lk.Done():
				t.Fatalf("the lock ended: %v", lk.Err())
			default:
			}
			require.NoError(t, lk.Unlock(ctx))
			_, ok, err = direct.Get(ctx, tc.stored(key))
			require.NoError(t, err)
			assert.False(t, ok)
		})
	}
}

// warmUp takes and releases a lock on a key of its own, so the locker's
// scripts are loaded on the server and a dropped EVALSHA reply is that of a
// script that ran (not a NOSCRIPT).
func warmUp(t *testing.T, l lockbridge.Locker) {
	t.Helper()
	ctx := context.Background()
	lk, err := l.TryLock(ctx, locktest.Key(t, "warm-up"), time.Second)
	require.NoError(t, err)
	require.NoError(t, lk.Refresh(ctx, time.Second))
	require.NoError(t, lk.Unlock(ctx))
}
