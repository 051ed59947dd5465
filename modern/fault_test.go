package modern_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// fenceOf takes the lock on key with fencing and returns its fence, the lock
// left held.
func fenceOf(t *testing.T, c driver.Client, key string) (int64, *modern.Lock) {
	t.Helper()
	lk, err := modern.New(c, modern.WithFencing()).TryLock(locktest.Ctx(t), key, time.Minute)
	require.NoError(t, err)
	ml := asModern(t, lk)
	return ml.Fence(), ml
}

// A server without persistence restarts empty: the fence counter is gone.
// The fence of the first holder after the restart must still be above the
// fences of the holders before it (the counter alone restarted at 1).
func TestFaultFenceRestartWithoutPersistence(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	key := locktest.Key(t, "k")
	var before int64
	for i := 0; i < 3; i++ {
		f, lk := fenceOf(t, c, key)
		require.Greater(t, f, before)
		before = f
		if i < 2 {
			require.NoError(t, lk.Unlock(locktest.Ctx(t)))
		}
	}
	// The last holder still believes it holds the lock (a pause, say) when
	// the server restarts and loses everything.
	srv.Restart()
	_, ok := locktest.Get(t, c, "{"+key+"}:fence")
	require.False(t, ok, "the restart lost the counter")
	after, _ := fenceOf(t, c, key)
	assert.Greater(t, after, before, "a fence after the restart must be above every fence before it")
}

// After a failover to a replica that lags behind, the counter exists but is
// behind the last fence the old primary handed out. The next fence must
// still be above it.
func TestFaultFenceFailoverToLaggingReplica(t *testing.T) {
	r := redistest.StartReplicated(t)
	primary := locktest.GoRedis(t, r.Primary)
	key := locktest.Key(t, "k")
	for i := 0; i < 3; i++ {
		_, lk := fenceOf(t, primary, key)
		require.NoError(t, lk.Unlock(locktest.Ctx(t)))
	}
	r.Sync(t)
	// The replica is cut off; the primary goes on handing out fences.
	r.Detach(t)
	var last int64
	for i := 0; i < 3; i++ {
		f, lk := fenceOf(t, primary, key)
		last = f
		if i < 2 {
			require.NoError(t, lk.Unlock(locktest.Ctx(t)))
		}
	}
	// The last holder still holds it on the old primary when it fails.
	r.Failover(t)
	replica := locktest.GoRedis(t, r.Replica)
	stale, ok := locktest.Get(t, replica, "{"+key+"}:fence")
	require.True(t, ok, "the replica has a counter")
	require.NotEqual(t, strconv.FormatInt(last, 10), stale, "and it is behind")

	next, _ := fenceOf(t, replica, key)
	assert.Greater(t, next, last, "the first fence on the new primary must be above the old primary's last")
}

// After a failover that lost nothing, fences go on from where they were.
func TestFenceFailoverInSync(t *testing.T) {
	r := redistest.StartReplicated(t)
	primary := locktest.GoRedis(t, r.Primary)
	key := locktest.Key(t, "k")
	last, lk := fenceOf(t, primary, key)
	require.NoError(t, lk.Unlock(locktest.Ctx(t)))
	r.Sync(t)
	r.Failover(t)
	next, _ := fenceOf(t, locktest.GoRedis(t, r.Replica), key)
	assert.Greater(t, next, last)
}

// An unusable fence counter refuses the acquire, typed, and leaves nothing
// behind: no lock key, the counter as it was. (The acquire used to SET the
// lock first and fail at INCR: a raw error and a lock nobody held for its
// whole ttl.)
func TestFaultFenceCounterUnusable(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		l := modern.New(tg.Client, modern.WithFencing(), modern.WithBackoff(lockbridge.ExponentialBackoff(time.Millisecond,
			time.Millisecond)))
		for _, c := range []struct {
			name string
			set  []any // writes the counter
		}{
			{"not an integer", []any{"SET", "c", "abc"}},
			{"a decimal fraction", []any{"SET", "c", "1.5"}},
			{"an integer with spaces", []any{"SET", "c", " 12"}},
			{"the largest int64", []any{"SET", "c", "9223372036854775807"}},
			{"2^53 - 1", []any{"SET", "c", "9007199254740991"}},
			{"beyond int64", []any{"SET", "c", "99999999999999999999"}},
			{"a hash", []any{"HSET", "c", "f", "v"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				key := locktest.Key(t, "k")
				counter := "{" + key + "}:fence"
				args := append([]any(nil), c.set...)
				args[1] = counter
				locktest.Do(t, tg.Client, args...)
				dump := locktest.Do(t, tg.Client, "DUMP", counter)

				_, err := l.TryLock(ctx, key, time.Minute)
				var fe *modern.FenceError
				require.ErrorAs(t, err, &fe, "TryLock: %v", err)
				assert.Equal(t, key, fe.Key)
				assert.Equal(t, counter, fe.Counter)
				assert.True(t, driver.HasPrefix(err, "FENCE"), "%v", err)
				assert.False(t, errors.Is(err, lockbridge.ErrNotObtained))
				_, ok := locktest.Get(t, tg.Client, key)
				assert.False(t, ok, "no lock key is left behind")
				assert.Equal(t, dump, locktest.Do(t, tg.Client, "DUMP", counter), "the counter is unchanged")

				// Lock does not wait on it.
				_, err = l.Lock(ctx, key, time.Minute)
				require.ErrorAs(t, err, &fe, "Lock: %v", err)
				assert.NoError(t, ctx.Err())
				_, ok = locktest.Get(t, tg.Client, key)
				assert.False(t, ok)
			})
		}
	})
}

// The fence is max(counter + 1, the server's TIME in µs): a counter left by
// an older version (small) gives way to the clock; one ahead of the clock is
// incremented, exactly, up to 2^53 - 1.
func TestFenceCounterRules(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	counter := "{" + key + "}:fence"
	l := modern.New(tg.Client, modern.WithFencing())
	take := func() int64 {
		t.Helper()
		lk, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		require.NoError(t, lk.Unlock(ctx))
		f := asModern(t, lk).Fence()
		v, _ := locktest.Get(t, tg.Client, counter)
		assert.Equal(t, strconv.FormatInt(f, 10), v, "the counter holds the last fence")
		return f
	}

	locktest.Do(t, tg.Client, "SET", counter, "41")
	t0 := time.Now().UnixMicro()
	f := take()
	assert.Greater(t, f, int64(41))
	assert.InDelta(t, t0, f, float64(time.Minute.Microseconds()), "the clock wins over a small counter")

	locktest.Do(t, tg.Client, "SET", counter, "9000000000000000") // ahead of the clock
	assert.Equal(t, int64(9000000000000001), take())
	locktest.Do(t, tg.Client, "SET", counter, "9007199254740989")
	assert.Equal(t, int64(9007199254740990), take())
	assert.Equal(t, int64(9007199254740991), take())
	_, err := l.TryLock(ctx, key, time.Minute)
	var fe *modern.FenceError
	require.ErrorAs(t, err, &fe, "the counter cannot go higher")
}

// A key of another type than string is no lock: TryLock and Lock return a
// *WrongTypeError wrapping the WRONGTYPE reply at once (it used to read as
// "held, with no expiry", and Lock waited forever); so do Unlock, Refresh
// and TTL of a lock whose key was replaced.
func TestFaultModernWrongType(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		locktest.Do(t, tg.Client, "HSET", key, "f", "v")
		for _, opts := range [][]modern.Option{nil, {modern.WithFencing()}} {
			l := modern.New(tg.Client, opts...)
			_, err := l.TryLock(ctx, key, time.Second)
			var wt *modern.WrongTypeError
			require.ErrorAs(t, err, &wt, "TryLock: %v", err)
			assert.True(t, driver.HasPrefix(err, "WRONGTYPE"))
			assert.False(t, errors.Is(err, lockbridge.ErrNotObtained))

			lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err = l.Lock(lctx, key, time.Second)
			require.ErrorAs(t, err, &wt, "Lock: %v", err)
			assert.NoError(t, lctx.Err(), "Lock returned before its context ended")
			cancel()
		}
		_, ok := locktest.Get(t, tg.Client, key+":fence")
		assert.False(t, ok)

		key2 := locktest.Key(t, "k2")
		lk, err := modern.New(tg.Client).TryLock(ctx, key2, time.Minute)
		require.NoError(t, err)
		locktest.Do(t, tg.Client, "DEL", key2)
		locktest.Do(t, tg.Client, "RPUSH", key2, "x")
		var wt *modern.WrongTypeError
		_, err = asModern(t, lk).TTL(ctx)
		assert.ErrorAs(t, err, &wt, "TTL")
		assert.ErrorAs(t, lk.Refresh(ctx, time.Minute), &wt, "Refresh")
		assert.ErrorAs(t, lk.Unlock(ctx), &wt, "Unlock")
	})
}

// No nil or zero input panics: each is an error wrapping ErrInvalid (Unlock
// of a nil Lock: ErrNotHeld, as before). A nil context used to panic in
// every call.
func TestFaultNilInputs(t *testing.T) {
	tg := locktest.Single(t)[0]
	l := modern.New(tg.Client)
	ctx := locktest.Ctx(t)
	held, err := l.TryLock(ctx, locktest.Key(t, "held"), time.Minute)
	require.NoError(t, err)
	lk := asModern(t, held)
	var nilCtx context.Context
	var nilLock *modern.Lock
	locktest.NilInputs(t, l, held, locktest.Nils{
		Locker: (*modern.Locker)(nil), ZeroLocker: new(modern.Locker), Lock: nilLock, ZeroLock: new(modern.Lock),
	},
		locktest.Call{Name: "TTL nil ctx", Do: func() error { _, err := lk.TTL(nilCtx); return err }},
		locktest.Call{Name: "nil Lock TTL", Do: func() error { _, err := nilLock.TTL(ctx); return err }},
		locktest.Call{Name: "zero Lock TTL", Do: func() error { _, err := new(modern.Lock).TTL(ctx); return err }},
	)
}

// WithWait: an acquire is reported held only once enough replicas have
// acknowledged it; on a shortfall the lock is released and the error says
// how many did.
func TestFaultWaitShortfall(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx := locktest.Ctx(t)
	for _, c := range []struct {
		name   string
		client driver.Client
	}{
		{"goredis", locktest.GoRedis(t, r.Primary)},
		{"redigo", locktest.Redigo(t, r.Primary)},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := locktest.Key(t, "k")
			l := modern.New(c.client, modern.WithFencing(), modern.WithWait(1, 5*time.Second))
			lk, err := l.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			replica := locktest.GoRedis(t, r.Replica)
			v, ok := locktest.Get(t, replica, key)
			require.True(t, ok, "the replica has the lock once TryLock returns")
			assert.Equal(t, lk.Token(), v)
			f, _ := locktest.Get(t, replica, "{"+key+"}:fence")
			assert.Equal(t, strconv.FormatInt(asModern(t, lk).Fence(), 10), f)
			require.NoError(t, lk.Unlock(ctx))

			// Two replicas asked for, one exists: a shortfall.
			l2 := modern.New(c.client, modern.WithFencing(), modern.WithWait(2, 50*time.Millisecond))
			_, err = l2.TryLock(ctx, key, time.Minute)
			var re *modern.ReplicationError
			require.ErrorAs(t, err, &re)
			assert.Contains(t, re.Error(), "1 of 2 replicas acknowledged")
			assert.EqualValues(t, 1, re.Acked)
			assert.True(t, re.Released)
			assert.False(t, errors.Is(err, lockbridge.ErrNotObtained))
			_, ok = locktest.Get(t, c.client, key)
			assert.False(t, ok, "the lock is not left behind")
			_, err = l2.Lock(ctx, key, time.Minute)
			require.ErrorAs(t, err, &re, "Lock returns it at once")
		})
	}

	// A client that cannot pin a connection: ErrInvalid, nothing sent.
	type plain struct{ driver.Client }
	_, err := modern.New(plain{locktest.GoRedis(t, r.Primary)}, modern.WithWait(1, time.Second)).TryLock(ctx, "k",
		time.Second)
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
	for _, bad := range []modern.Option{modern.WithWait(0, time.Second), modern.WithWait(1, 0)} {
		_, err := modern.New(locktest.GoRedis(t, r.Primary), bad).TryLock(ctx, "k", time.Second)
		require.ErrorIs(t, err, lockbridge.ErrInvalid)
	}

	// The replica cut off: no acknowledgement within the timeout.
	r.Detach(t)
	l := modern.New(locktest.GoRedis(t, r.Primary), modern.WithFencing(), modern.WithWait(1, 100*time.Millisecond))
	key := locktest.Key(t, "cut")
	_, err = l.TryLock(ctx, key, time.Minute)
	var re *modern.ReplicationError
	require.ErrorAs(t, err, &re)
	assert.EqualValues(t, 0, re.Acked)
	_, ok := locktest.Get(t, locktest.GoRedis(t, r.Primary), key)
	assert.False(t, ok)
}

// WithWait promises that a failover to a replica that acknowledged keeps the
// lock; the acquire is acknowledged, but a Refresh extends the local lease
// on the primary's answer alone. When the replica (which acknowledged the
// acquire) missed the refresh and is promoted, the key expires there at the
// acquire's PX while the holder's lease, extended by the refresh, still
// runs: a second holder gets in before the first one's Done closes. With
// WithWait a refresh must be acknowledged as an acquire is before it counts.
func TestFaultWaitRefreshNotAcknowledged(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := modern.New(locktest.GoRedis(t, r.Primary), modern.WithWait(1, time.Second))
	lk, err := l.TryLock(ctx, key, 2*time.Second)
	require.NoError(t, err, "acknowledged by the replica")
	require.NoError(t, lk.Refresh(ctx, 2*time.Second), "acknowledged by the replica: counted")
	r.Detach(t) // the replica misses everything from here on
	err = lk.Refresh(ctx, time.Minute)
	if err != nil {
		// Refused, or not counted: the lease must not have been extended.
		var re *modern.ReplicationError
		assert.ErrorAs(t, err, &re)
		assert.True(t, lk.ExpiresAt().Before(time.Now().Add(2*time.Second)),
			"a refresh no replica acknowledged does not extend the lease: %v", err)
		assert.NoError(t, lk.Err(), "the lock is still held until its lease ends")
	}
	r.Failover(t)
	promoted := locktest.GoRedis(t, r.Replica)
	var next lockbridge.Lock
	require.Eventually(t, func() bool {
		next, err = modern.New(promoted).TryLock(ctx, key, time.Minute)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the key expires on the promoted replica at the acquire's PX")
	defer func() { _ = next.Unlock(ctx) }()
	select {
	case <-lk.Done():
	default:
		assert.Fail(t, "two holders", "a second holder got %q while the first one's lease runs until %v (%v from now)",
			key, lk.ExpiresAt().Format(time.RFC3339Nano), time.Until(lk.ExpiresAt()).Round(time.Millisecond))
	}
}
