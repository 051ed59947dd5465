package modern_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/modern"
)

func TestTryLockUnlock(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		l := modern.New(tg.Client)

		lk, err := l.TryLock(ctx, key, 10*time.Second)
		require.NoError(t, err)
		ml := asModern(t, lk)
		assert.Equal(t, key, lk.Key())
		raw, err := base64.RawURLEncoding.DecodeString(lk.Token())
		require.NoError(t, err, "the token is base64url")
		assert.Len(t, raw, 16)
		assert.Equal(t, int64(0), ml.Fence(), "no fencing, no fence")
		assert.NoError(t, lk.Err())
		assert.WithinDuration(t, time.Now().Add(10*time.Second), lk.ExpiresAt(), time.Second)

		v, ok := locktest.Get(t, tg.Client, key)
		require.True(t, ok)
		assert.Equal(t, lk.Token(), v, "the key holds the token, nothing else")
		p := locktest.PTTL(t, tg.Client, key)
		assert.Greater(t, p, int64(9000))
		assert.LessOrEqual(t, p, int64(10000))
		left, err := ml.TTL(ctx)
		require.NoError(t, err)
		assert.InDelta(t, float64(10*time.Second), float64(left), float64(time.Second))

		// Held: another attempt fails with the holder's remaining lease.
		other, err := modern.New(tg.Client).TryLock(ctx, key, time.Second)
		assert.Nil(t, other)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		var no *lockbridge.NotObtainedError
		require.ErrorAs(t, err, &no)
		assert.Equal(t, key, no.Key)
		assert.Greater(t, no.HolderTTL, 9*time.Second)
		assert.LessOrEqual(t, no.HolderTTL, 10*time.Second)
		v, _ = locktest.Get(t, tg.Client, key)
		assert.Equal(t, lk.Token(), v, "a failed attempt leaves the holder alone")

		require.NoError(t, lk.Unlock(ctx))
		_, ok = locktest.Get(t, tg.Client, key)
		assert.False(t, ok, "unlock deletes the key")
		assert.True(t, waitDone(t, lk, 0), "Done is closed after Unlock")
		assert.NoError(t, lk.Err(), "a clean Unlock leaves Err nil")

		err = lk.Unlock(ctx)
		assert.ErrorIs(t, err, lockbridge.ErrNotHeld, "a second Unlock")
		assert.ErrorIs(t, lk.Refresh(ctx, time.Second), lockbridge.ErrNotHeld, "Refresh after Unlock")
		_, err = ml.TTL(ctx)
		assert.ErrorIs(t, err, lockbridge.ErrNotHeld, "TTL after Unlock")
		assert.NoError(t, lk.Err(), "still a clean Unlock")

		again, err := l.TryLock(ctx, key, time.Second)
		require.NoError(t, err, "free again")
		assert.NotEqual(t, lk.Token(), again.Token(), "every acquire has its own token")
		require.NoError(t, again.Unlock(ctx))
	})
}

// Unlock, Refresh and TTL tell an expired lock from a taken one.
func TestNotHeldReasons(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		l := modern.New(tg.Client)
		notHeld := func(t *testing.T, err error, want lockbridge.Reason) {
			t.Helper()
			require.ErrorIs(t, err, lockbridge.ErrNotHeld)
			var nh *lockbridge.NotHeldError
			require.ErrorAs(t, err, &nh)
			assert.Equal(t, want, nh.Reason)
		}
		lost := func(t *testing.T, lk lockbridge.Lock, want lockbridge.Reason) {
			t.Helper()
			require.True(t, waitDone(t, lk, 0), "a lock found not held is done")
			require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
			notHeld(t, lk.Err(), want)
		}
		type op struct {
			name string
			call func(lk *modern.Lock) error
		}
		ops := []op{
			{"Unlock", func(lk *modern.Lock) error { return lk.Unlock(ctx) }},
			{"Refresh", func(lk *modern.Lock) error { return lk.Refresh(ctx, time.Minute) }},
			{"TTL", func(lk *modern.Lock) error { _, err := lk.TTL(ctx); return err }},
		}
		for _, o := range ops {
			t.Run(o.name+"/expired", func(t *testing.T) {
				key := locktest.Key(t, "k")
				lk, err := l.TryLock(ctx, key, time.Minute)
				require.NoError(t, err)
				locktest.Do(t, tg.Client, "DEL", key) // as if the lease ran out
				notHeld(t, o.call(asModern(t, lk)), lockbridge.ReasonGone)
				lost(t, lk, lockbridge.ReasonGone)
				_, ok := locktest.Get(t, tg.Client, key)
				assert.False(t, ok, "nothing was written")
			})
			t.Run(o.name+"/taken", func(t *testing.T) {
				key := locktest.Key(t, "k")
				lk, err := l.TryLock(ctx, key, time.Minute)
				require.NoError(t, err)
				locktest.Do(t, tg.Client, "SET", key, "someone-else", "PX", 60000)
				notHeld(t, o.call(asModern(t, lk)), lockbridge.ReasonTaken)
				lost(t, lk, lockbridge.ReasonTaken)
				v, _ := locktest.Get(t, tg.Client, key)
				assert.Equal(t, "someone-else", v, "the other holder's lock is untouched")
				assert.Greater(t, locktest.PTTL(t, tg.Client, key), int64(50000), "and its lease too")
			})
		}
	})
}

func TestRefresh(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		lk, err := modern.New(tg.Client).TryLock(ctx, key, 2*time.Second)
		require.NoError(t, err)
		before := lk.ExpiresAt()
		require.NoError(t, lk.Refresh(ctx, time.Minute))
		assert.Greater(t, locktest.PTTL(t, tg.Client, key), int64(50000), "the server's lease is extended")
		assert.True(t, lk.ExpiresAt().After(before.Add(50*time.Second)), "and so is the local view")
		v, _ := locktest.Get(t, tg.Client, key)
		assert.Equal(t, lk.Token(), v)

		assert.ErrorIs(t, lk.Refresh(ctx, 999*time.Microsecond), lockbridge.ErrInvalid)
		assert.ErrorIs(t, lk.Refresh(ctx, 0), lockbridge.ErrInvalid)
		require.NoError(t, lk.Unlock(ctx))
	})
}

// A Redis error is returned as it is, never as ErrNotObtained or ErrNotHeld.
func TestRedisErrorsAreNotDisguised(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		l := modern.New(tg.Client)
		lk, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		// Someone turns the key into a hash: GET in the release script fails.
		locktest.Do(t, tg.Client, "DEL", key)
		locktest.Do(t, tg.Client, "HSET", key, "f", "v")
		err = lk.Unlock(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "WRONGTYPE")
		assert.False(t, errors.Is(err, lockbridge.ErrNotHeld))
		assert.True(t, waitDone(t, lk, 0), "a failed Unlock ends the lock locally")
		assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost)

		// A key of another type is no lock: WRONGTYPE, neither held nor free.
		_, err = l.TryLock(ctx, key, time.Second)
		var wt *modern.WrongTypeError
		require.ErrorAs(t, err, &wt)
		assert.False(t, errors.Is(err, lockbridge.ErrNotObtained))
	})

	t.Run("server down", func(t *testing.T) {
		for _, tg := range locktest.Single(t) {
			tg.Server.Stop()
			ctx := locktest.Ctx(t)
			l := modern.New(tg.Client)
			_, err := l.TryLock(ctx, "k", time.Second)
			require.Error(t, err, tg.Name)
			assert.False(t, errors.Is(err, lockbridge.ErrNotObtained), "%s: TryLock: %v", tg.Name, err)
			_, err = l.Lock(ctx, "k", time.Second)
			require.Error(t, err, tg.Name)
			assert.False(t, errors.Is(err, lockbridge.ErrNotObtained), "%s: Lock: %v", tg.Name, err)
		}
	})
}

func TestNilLock(t *testing.T) {
	var lk *modern.Lock
	ctx := context.Background()
	assert.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, lk.Refresh(ctx, time.Second), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, lk.Refresh(ctx, time.Second), lockbridge.ErrInvalid)
	_, err := lk.TTL(ctx)
	assert.ErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	assert.Equal(t, "", lk.Key())
	assert.Equal(t, "", lk.Token())
	assert.Equal(t, int64(0), lk.Fence())
	assert.True(t, lk.ExpiresAt().IsZero())
	assert.ErrorIs(t, lk.Err(), lockbridge.ErrNotHeld)
	select {
	case <-lk.Done():
	default:
		t.Error("a nil lock is done")
	}
}

func TestErrorMessages(t *testing.T) {
	assert.Equal(t, `modern: lock "k" not held: it is gone`, (&lockbridge.NotHeldError{Pkg: "modern", Key: "k",
		Reason: lockbridge.ReasonGone}).Error())
	assert.Equal(t, `modern: lock "k" not held: another holder has it (detail)`, (&lockbridge.NotHeldError{Pkg: "modern",
		Key: "k", Reason: lockbridge.ReasonTaken, Detail: "detail"}).Error())
	assert.Equal(t, `modern: lock "k" not obtained: held by another for 1.5s more`,
		(&lockbridge.NotObtainedError{Pkg: "modern", Key: "k", HolderTTL: 1500 * time.Millisecond}).Error())
	assert.Equal(t, "gone", lockbridge.ReasonGone.String())
	assert.Equal(t, "taken", lockbridge.ReasonTaken.String())
}
