package redisson_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// With WithFencing every acquire, re-entries too, takes the next value of
// redisson_lock_token:{name}, in the same script, on one server and in a
// cluster; the lock itself is the plain one.
func TestFencing(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		l := redisson.New(tg.Client, redisson.WithFencing())
		o := l.NewOwner()
		a, err := o.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		b, err := o.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, int64(1), a.(*redisson.Lock).Fence())
		assert.Equal(t, int64(2), b.(*redisson.Lock).Fence(), "a re-entry takes a token too, as Redisson's does")
		v, _ := locktest.Get(t, tg.Client, "redisson_lock_token:{"+key+"}")
		assert.Equal(t, "2", v)
		assert.Equal(t, map[string]int64{o.Field(): 2}, hash(t, tg.Client, key))
		_, err = l.TryLock(ctx, key, time.Second)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		v, _ = locktest.Get(t, tg.Client, "redisson_lock_token:{"+key+"}")
		assert.Equal(t, "2", v, "a failed attempt takes no token")
		require.NoError(t, b.Unlock(ctx))
		require.NoError(t, a.Unlock(ctx))
		c, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, int64(3), c.(*redisson.Lock).Fence())
		require.NoError(t, c.Unlock(ctx))

		plain, err := redisson.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		assert.Zero(t, plain.(*redisson.Lock).Fence())
		require.NoError(t, plain.Unlock(ctx))
	})
}

func TestFencingNotWithFair(t *testing.T) {
	tg := locktest.Single(t)[0]
	_, err := redisson.New(tg.Client, redisson.WithFencing(), redisson.WithFair(time.Minute)).TryLock(locktest.Ctx(t), "k", time.Second)
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
}

// A fenced acquire whose reply is lost is settled by reading the field and
// the counter back: the hold comes with the token its acquire took.
func TestFaultFencedAcquireReplyDropped(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	locktest.Do(t, raw, "SET", "redisson_lock_token:{"+key+"}", "41")
	acquire := faultproxy.Script(script(t, "fenced_acquire.lua"))
	p.DropReply(acquire, 1, faultproxy.Close)
	lk, err := redisson.New(c, redisson.WithFencing()).TryLock(ctx, key, time.Minute)
	require.NoError(t, err, "read back")
	assert.Equal(t, int64(42), lk.(*redisson.Lock).Fence())
	assert.Equal(t, 1, p.Dropped())
	require.NoError(t, lk.Unlock(ctx))
}
