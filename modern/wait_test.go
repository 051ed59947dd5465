package modern_test

import (
	"context"
	"errors"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/redigoadapter"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/modern"
)

// A Lock whose context ends while it waits returns an error wrapping both
// ErrNotObtained and the context's error, and leaves the holder's lock alone.
func TestLockContextEnds(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		holder, err := modern.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)

		for _, notify := range []bool{true, false} {
			wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			l := modern.New(tg.Client, modern.WithNotifications(notify))
			lk, err := l.Lock(wctx, key, time.Minute)
			cancel()
			assert.Nil(t, lk)
			locktest.GaveUp(t, err, context.DeadlineExceeded)
			lingerEnds(t, l, "the waiter left the hub")
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = modern.New(tg.Client).TryLock(cctx, key, time.Minute)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		require.ErrorIs(t, err, context.Canceled)

		v, _ := locktest.Get(t, tg.Client, key)
		assert.Equal(t, holder.Token(), v, "the holder still has it")
		require.NoError(t, holder.Unlock(ctx))
	})
}

// Contexts that end while the acquire is on the wire leave no lock behind:
// a SET that landed is released at once. One whose release found no token
// of ours is an unknown outcome (the SET may still be on its way: see
// TestFaultGivenUpAcquireLandsAfterItsUndo), never ErrNotObtained.
func TestCancelledAcquireLeavesNoLock(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		l := modern.New(tg.Client, modern.WithFencing())
		rng := rand.New(rand.NewSource(1))
		var cancelled, obtained, unknown int
		for i := 0; i < 300; i++ {
			key := locktest.Key(t, "k")
			actx, cancel := context.WithTimeout(ctx, time.Duration(rng.Intn(400))*time.Microsecond)
			var lk lockbridge.Lock
			var err error
			if i%2 == 0 {
				lk, err = l.TryLock(actx, key, time.Minute)
			} else {
				lk, err = l.Lock(actx, key, time.Minute)
			}
			cancel()
			if err == nil {
				obtained++
				require.NoError(t, lk.Unlock(ctx))
				continue
			}
			cancelled++
			require.ErrorIs(t, err, context.DeadlineExceeded)
			if errors.Is(err, lockbridge.ErrUnknownOutcome) {
				require.NotErrorIs(t, err, lockbridge.ErrNotObtained)
				unknown++
				continue
			}
			require.ErrorIs(t, err, lockbridge.ErrNotObtained)
			_, ok := locktest.Get(t, tg.Client, key)
			require.False(t, ok, "attempt %d: a cancelled acquire left the key behind", i)
		}
		// Whatever was in flight has landed by now; still nothing there.
		time.Sleep(50 * time.Millisecond)
		key := locktest.Key(t, "k")
		_, ok := locktest.Get(t, tg.Client, key)
		assert.False(t, ok)
		// Every SET that landed also took a fence: those beyond the locks
		// obtained are SETs whose context ended on the wire, undone.
		v, _ := locktest.Get(t, tg.Client, "{"+key+"}:fence")
		landed, err := strconv.Atoi(v)
		require.NoError(t, err)
		t.Logf("%d obtained, %d cancelled (%d of unknown outcome), of which %d had landed and were undone", obtained,
			cancelled, unknown, landed-obtained)
	})
}

// One subscription per Locker, shared by all its waiters, closed when the
// last one is done.
func TestSharedSubscription(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		keys := []string{locktest.Key(t, "a"), locktest.Key(t, "b")}
		holders := make([]lockbridge.Lock, len(keys))
		for i, k := range keys {
			var err error
			holders[i], err = modern.New(tg.Client).TryLock(ctx, k, time.Minute)
			require.NoError(t, err)
		}
		var tokens countingTokens
		l := modern.New(tg.Client, modern.WithTokenFunc(tokens.token))
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(key string) {
				defer wg.Done()
				lk, err := l.Lock(ctx, key, time.Minute)
				if assert.NoError(t, err) {
					assert.NoError(t, lk.Unlock(ctx))
				}
			}(keys[i%2])
		}
		eventually(t, func() bool {
			return tokens.n.Load() >= 16 && modern.HubSubscribed(l, keys[0]) && modern.HubSubscribed(l, keys[1])
		}, "all waiters subscribed")
		for _, k := range keys {
			r := locktest.Do(t, tg.Client, "PUBSUB", "NUMSUB", "{"+k+"}:released").([]any)
			assert.Equal(t, int64(1), r[1], "one subscriber for the 4 waiters of %s", k)
		}
		assert.Equal(t, 1, pubsubClients(t, tg.Client), "one pub/sub connection for 8 waiters on 2 keys")

		for _, h := range holders {
			require.NoError(t, h.Unlock(ctx))
		}
		wg.Wait()
		lingerEnds(t, l, "the subscription closed")
		eventually(t, func() bool { return pubsubClients(t, tg.Client) == 0 }, "the subscription's connection is closed")
	})
}

func pubsubClients(t *testing.T, c driver.Client) int {
	list := locktest.Do(t, c, "CLIENT", "LIST", "TYPE", "pubsub").(string)
	return strings.Count(list, "id=")
}

// Without pub/sub rights (an ACL user with no channels), Lock falls back to
// polling, and Unlock still releases (its publish is refused and ignored).
func TestNoPubSubRightsFallsBackToPolling(t *testing.T) {
	{
		tg := locktest.Single(t)[0]
		locktest.Do(t, tg.Client, "ACL", "SETUSER", "nochannels", "on", ">secret", "~*", "resetchannels", "+@all")
		addr := tg.Server.Addr()
		rc := goredislib.NewClient(&goredislib.Options{Addr: addr, Username: "nochannels", Password: "secret",
			MaxRetries: -1})
		t.Cleanup(func() { _ = rc.Close() })
		pool := &redis.Pool{MaxIdle: 4, DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr, redis.DialUsername("nochannels"), redis.DialPassword("secret"))
		}}
		t.Cleanup(func() { _ = pool.Close() })
		clients := map[string]driver.Client{"goredis": goredis.New(rc), "redigo": redigoadapter.New(pool)}
		for name, c := range clients {
			t.Run(name, func(t *testing.T) {
				ctx := locktest.Ctx(t)
				key := locktest.Key(t, "k")
				_, err := c.Subscribe(ctx, "{"+key+"}:released")
				require.Error(t, err, "the user really may not subscribe")

				holder, err := modern.New(c).TryLock(ctx, key, time.Minute)
				require.NoError(t, err)
				var tokens countingTokens
				waiter := modern.New(c, modern.WithTokenFunc(tokens.token),
					modern.WithBackoff(lockbridge.LinearBackoff(5*time.Millisecond, 20*time.Millisecond)))
				got := make(chan lockbridge.Lock, 1)
				go func() {
					lk, err := waiter.Lock(ctx, key, time.Minute)
					assert.NoError(t, err)
					got <- lk
				}()
				eventually(t, func() bool { return tokens.n.Load() >= 3 }, "the waiter polls")
				assert.False(t, modern.HubSubscribed(waiter, key))
				require.NoError(t, holder.Unlock(ctx), "the release stands though its publish is refused")
				lk := <-got
				require.NotNil(t, lk)
				require.NoError(t, lk.Unlock(ctx))
			})
		}
	}
}

// NoRetry makes Lock a single attempt, without subscribing.
func TestLockNoRetry(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	holder, err := modern.New(tg.Client).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	var tokens countingTokens
	l := modern.New(tg.Client, modern.WithBackoff(lockbridge.NoRetry()), modern.WithTokenFunc(tokens.token))
	_, err = l.Lock(ctx, key, time.Minute)
	var no *lockbridge.NotObtainedError
	require.ErrorAs(t, err, &no)
	assert.Equal(t, int64(1), tokens.n.Load())
	assert.False(t, modern.HubOpen(l))
	assert.Equal(t, 0, pubsubClients(t, tg.Client))
	require.NoError(t, holder.Unlock(ctx))
	assert.False(t, errors.Is(err, context.Canceled))
}
