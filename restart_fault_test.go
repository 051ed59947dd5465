package lockbridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redisson"
)

// The fault matrix of docs/safety.md: what a restart of the server (with and
// without persistence) and a failover to a lagging replica do to a lock of
// each kind on one primary. Redlock (independent masters) is in
// redlock/failures_test.go.

// restartKind is a lock kind on one server; fence returns a fenced lock's
// token (0 for the others).
type restartKind struct {
	name   string
	locker func(c driver.Client) lockbridge.Locker
	fence  func(lockbridge.Lock) int64
}

func restartKinds() []restartKind {
	none := func(lockbridge.Lock) int64 { return 0 }
	return []restartKind{
		{name: "legacy", locker: func(c driver.Client) lockbridge.Locker { return legacy.New(c) }, fence: none},
		{name: "modern", locker: func(c driver.Client) lockbridge.Locker { return modern.New(c) }, fence: none},
		{name: "modern-fenced", locker: func(c driver.Client) lockbridge.Locker {
			return modern.New(c,
				modern.WithFencing())
		},
			fence: func(lk lockbridge.Lock) int64 { return lk.(*modern.Lock).Fence() }},
		{name: "migrate-dual-write", locker: func(c driver.Client) lockbridge.Locker {
			return migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite))
		}, fence: none},
		{name: "migrate-dual-read", locker: func(c driver.Client) lockbridge.Locker {
			return migrate.New(c, migrate.WithPhase(migrate.PhaseDualRead))
		}, fence: none},
		{name: "redisson", locker: func(c driver.Client) lockbridge.Locker { return redisson.New(c) }, fence: none},
		{name: "redisson-fair", locker: func(c driver.Client) lockbridge.Locker {
			return redisson.New(c,
				redisson.WithFair(time.Second))
		}, fence: none},
		{name: "redisson-fenced", locker: func(c driver.Client) lockbridge.Locker {
			return redisson.New(c,
				redisson.WithFencing())
		},
			fence: func(lk lockbridge.Lock) int64 { return lk.(*redisson.Lock).Fence() }},
	}
}

// A restart of a server with appendonly yes and appendfsync always keeps
// every lock: another client is refused after it, and the holder refreshes
// and releases as before.
func TestFaultRestartWithPersistenceKeepsTheLock(t *testing.T) {
	ctx := context.Background()
	for _, k := range restartKinds() {
		k := k
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.StartPersistent(t)
			a, b := k.locker(locktest.GoRedis(t, srv)), k.locker(locktest.GoRedis(t, srv))
			key := locktest.Key(t, "k")
			lk, err := a.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			f := k.fence(lk)

			srv.Restart()
			_, err = b.TryLock(ctx, key, time.Minute)
			require.ErrorIs(t, err, lockbridge.ErrNotObtained, "the restart lost the lock")
			require.NoError(t, lk.Refresh(ctx, time.Minute))
			require.NoError(t, lk.Unlock(ctx))
			next, err := b.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			if f > 0 {
				assert.Greater(t, k.fence(next), f, "fences go on increasing")
			}
			require.NoError(t, next.Unlock(ctx))
		})
	}
}

// loseAndTakeOver checks what follows a lost key (a restart without
// persistence, a failover to a replica that lacked the acquire): the
// successor gets in — the residual of every lock on one primary — and the
// holder, on the same server, can neither refresh nor release the
// successor's lock. It returns the successor's lock.
func loseAndTakeOver(t *testing.T, lk lockbridge.Lock, b lockbridge.Locker, key string,
	holderHasServer bool) lockbridge.Lock {
	t.Helper()
	ctx := context.Background()
	// A lease far from the holder's: outside legacy's owner window (see
	// TestFaultLegacyLostKeySuccessorInsideTheWindow for one inside it).
	next, err := b.TryLock(ctx, key, 10*time.Minute)
	require.NoError(t, err, "the residual: the successor gets in while the holder believes it holds")
	if holderHasServer {
		assert.Error(t, lk.Refresh(ctx, time.Minute), "the holder's refresh must not extend the successor's lock")
		err = lk.Unlock(ctx)
		require.Error(t, err, "the holder's release must not report a release")
		assert.NotErrorIs(t, err, lockbridge.ErrUnknownOutcome)
		_, err = b.TryLock(ctx, key, time.Minute)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained, "the successor still holds after the holder's release")
	}
	return next
}

// A restart without persistence forgets every lock: the successor gets in
// (the residual; detect it with fencing), the holder's refresh and release
// fail and leave the successor's lock alone. modern's fences stay
// increasing (from the server's clock), and so do the tokens the Go side
// of Redisson's fenced lock hands out: it floors the counter at the
// server's clock too (Java's INCR alone would start again at 1).
func TestFaultRestartWithoutPersistenceLosesTheLock(t *testing.T) {
	ctx := context.Background()
	for _, k := range restartKinds() {
		k := k
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			a, b := k.locker(locktest.GoRedis(t, srv)), k.locker(locktest.GoRedis(t, srv))
			key := locktest.Key(t, "k")
			for i := 0; i < 2; i++ { // a few fences handed out before
				lk, err := b.TryLock(ctx, key, time.Minute)
				require.NoError(t, err)
				require.NoError(t, lk.Unlock(ctx))
			}
			lk, err := a.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			f := k.fence(lk)

			srv.Restart()
			next := loseAndTakeOver(t, lk, b, key, true)
			switch k.name {
			case "modern-fenced":
				assert.Greater(t, k.fence(next), f, "modern's fences stay increasing across the restart")
			case "redisson-fenced":
				assert.Greater(t, k.fence(next), f, "Go's Redisson tokens stay increasing across the restart")
			}
			require.NoError(t, next.Unlock(ctx))
		})
	}
}

// A failover to a replica that never received the acquire: on the
// promoted replica the successor gets in (the residual). modern's fences
// stay increasing, and so do the Go side's Redisson fenced tokens (floored
// at the server's clock): two holders never share a token, where the
// replica's counter alone would hand out the holder's again.
func TestFaultFailoverToLaggingReplicaLosesTheLock(t *testing.T) {
	ctx := context.Background()
	for _, k := range restartKinds() {
		k := k
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			r := redistest.StartReplicated(t)
			primary := locktest.GoRedis(t, r.Primary)
			a, b0 := k.locker(primary), k.locker(primary)
			key := locktest.Key(t, "k")
			for i := 0; i < 2; i++ { // fences the replica receives
				lk, err := b0.TryLock(ctx, key, time.Minute)
				require.NoError(t, err)
				require.NoError(t, lk.Unlock(ctx))
			}
			r.Sync(t)
			r.Detach(t) // the replica lags from here on
			lk, err := a.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			f := k.fence(lk)

			r.Failover(t)
			promoted := locktest.GoRedis(t, r.Replica)
			next := loseAndTakeOver(t, lk, k.locker(promoted), key, false)
			switch k.name {
			case "modern-fenced":
				assert.Greater(t, k.fence(next), f, "modern's fences stay increasing across the failover")
			case "redisson-fenced":
				assert.Greater(t, k.fence(next), f, "Go's Redisson tokens stay increasing across the failover")
			}
			require.NoError(t, next.Unlock(ctx))
		})
	}
}

// The residual of legacy values, which carry no owner: after the holder's
// key was lost (a restart without persistence, a failover, an eviction
// under allkeys-*), a successor whose value falls within the holder's
// owner window (W ± lease/2; here the same lease, taken at once) is taken
// for the holder's, and the holder's release, sent before its W, frees it.
// migrate's dual-write does not have it: its release touches the legacy
// key only while the modern key holds the holder's token.
func TestFaultLegacyLostKeySuccessorInsideTheWindow(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	key := locktest.Key(t, "k")

	t.Run("legacy", func(t *testing.T) {
		a, b := legacy.New(c), legacy.New(c)
		lk, err := a.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		locktest.Do(t, c, "DEL", key) // lost
		_, err = b.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		require.NoError(t, lk.Unlock(ctx), "the residual: the holder's release is taken for its own")
		_, ok := locktest.Get(t, c, key)
		assert.False(t, ok, "the residual: the successor's lock was freed by the old holder")
	})

	t.Run("migrate-dual-write", func(t *testing.T) {
		a := migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite))
		b := migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite))
		lk, err := a.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		lkey, mkey, err := a.Keys(key)
		require.NoError(t, err)
		locktest.Do(t, c, "DEL", lkey, mkey) // lost
		next, err := b.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		require.Error(t, lk.Unlock(ctx), "the holder's release finds another token")
		_, ok := locktest.Get(t, c, lkey)
		assert.True(t, ok, "the successor's legacy key stays")
		require.NoError(t, next.Unlock(ctx))
	})
}

// Under maxmemory-policy noeviction nothing is evicted: a server out of
// memory refuses the write, and the lock says so with a typed error, never
// "held by another" (the other lockers: TestFaultRedisErrorsClassified) —
// except the fair acquire, which Redis lets through (below).
func TestFaultRedissonOutOfMemoryIsTyped(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	locktest.Do(t, c, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	locktest.Do(t, c, "CONFIG", "SET", "maxmemory", "1")
	defer locktest.Do(t, c, "CONFIG", "SET", "maxmemory", "0")
	for _, k := range restartKinds() {
		if !strings.HasPrefix(k.name, "redisson") {
			continue
		}
		key := "oom:" + k.name
		lk, err := k.locker(c).TryLock(ctx, key, time.Second)
		if k.name == "redisson-fair" {
			// Redis checks a script's memory only before its first write
			// command: the fair acquire's first is an LPOP of the queue,
			// which out of memory is not refused, and the acquire goes
			// through. It still excludes; its release is refused, typed,
			// and the lock ends with its lease.
			require.NoError(t, err)
			_, err = k.locker(c).TryLock(ctx, key, time.Second)
			assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
			assert.ErrorIs(t, lk.Unlock(ctx), driver.ErrOOM)
			continue
		}
		checkClassified(t, k.name, err, driver.ErrOOM, key)
	}
}
