package redisson_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// With WithFencing every acquire, re-entries too, takes the next token of
// redisson_lock_token:{name}, in the same script, on one server and in a
// cluster: max(counter + 1, the server's clock in µs), written back to the
// counter, which Java's RedissonFencedLock INCRs. The lock itself is the
// plain one.
func TestFencing(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		counter := "redisson_lock_token:{" + key + "}"
		token := func() int64 {
			v, ok := locktest.Get(t, tg.Client, counter)
			require.True(t, ok)
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
		l := redisson.New(tg.Client, redisson.WithFencing())
		o := l.NewOwner()
		before := time.Now().Add(-time.Minute).UnixMicro() // the server's clock, give or take
		a, err := o.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		b, err := o.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		fa, fb := a.(*redisson.Lock).Fence(), b.(*redisson.Lock).Fence()
		assert.Greater(t, fa, before, "floored at the server's clock in µs")
		assert.Greater(t, fb, fa, "a re-entry takes a token too, as Redisson's does")
		assert.Equal(t, fb, token(), "the counter holds the last token")
		assert.Equal(t, map[string]int64{o.Field(): 2}, hash(t, tg.Client, key))
		_, err = l.TryLock(ctx, key, time.Second)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		assert.Equal(t, fb, token(), "a failed attempt takes no token")
		require.NoError(t, b.Unlock(ctx))
		require.NoError(t, a.Unlock(ctx))

		// A counter ahead of the clock (Java INCRs it; a clock stepped
		// back) wins: tokens never go down.
		ahead := time.Now().Add(24 * time.Hour).UnixMicro()
		locktest.Set(t, tg.Client, counter, strconv.FormatInt(ahead, 10))
		c, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, ahead+1, c.(*redisson.Lock).Fence())
		require.NoError(t, c.Unlock(ctx))

		plain, err := redisson.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		assert.Zero(t, plain.(*redisson.Lock).Fence())
		require.NoError(t, plain.Unlock(ctx))
	})
}

func TestFencingNotWithFair(t *testing.T) {
	tg := locktest.Single(t)[0]
	_, err := redisson.New(tg.Client, redisson.WithFencing(), redisson.WithFair(time.Minute)).TryLock(locktest.Ctx(t), "k",
		time.Second)
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
	v, _ := locktest.Get(t, raw, "redisson_lock_token:{"+key+"}")
	assert.Equal(t, v, strconv.FormatInt(lk.(*redisson.Lock).Fence(), 10), "the token the acquire wrote")
	assert.Greater(t, lk.(*redisson.Lock).Fence(), int64(41))
	assert.Equal(t, 1, p.Dropped())
	require.NoError(t, lk.Unlock(ctx))
}
