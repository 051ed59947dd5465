package redisson_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// A waiter whose backoff alone would sleep 20 s wakes on the unlock
// message: it gets the lock within its 10 s context, on one server and in a
// cluster (sharded pub/sub).
func TestWaitWokenByUnlock(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		holder, err := redisson.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		slow := lockbridge.LinearBackoff(20*time.Second, 20*time.Second)
		waiter := redisson.New(tg.Client, redisson.WithBackoff(slow))
		got := make(chan error, 1)
		go func() {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			lk, err := waiter.Lock(wctx, key, time.Minute)
			if err == nil {
				err = lk.Unlock(ctx)
			}
			got <- err
		}()
		time.Sleep(200 * time.Millisecond) // the waiter has subscribed and sleeps
		require.NoError(t, holder.Unlock(ctx))
		require.NoError(t, <-got)
	})
}

// Without messages, a waiter never sleeps past the holder's lease (the PTTL
// the failed attempt returned): it takes the lock once the lease ran out,
// though its backoff says 20 s.
func TestWaitBoundedByHolderLease(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	_, err := redisson.New(tg.Client).TryLock(ctx, key, 300*time.Millisecond)
	require.NoError(t, err)
	waiter := redisson.New(tg.Client, redisson.WithNotifications(false),
		redisson.WithBackoff(lockbridge.LinearBackoff(20*time.Second, 20*time.Second)))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lk, err := waiter.Lock(wctx, key, time.Second)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))
}

// A context that ends while waiting: ErrNotObtained and the context's error.
func TestLockContextEnds(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	holder, err := redisson.New(tg.Client).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = redisson.New(tg.Client).Lock(wctx, key, time.Second)
	locktest.GaveUp(t, err, context.DeadlineExceeded)
	require.NoError(t, holder.Unlock(ctx))
}

// Contention among Go owners of several Lockers, with reentrant holds:
// never two owners inside at once (counted by a guard that is not the
// lock), on one server and in a cluster.
func TestContentionReentrant(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		g := locktest.NewGuard(tg.Client, key)
		const workers, rounds = 4, 25
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := redisson.New(tg.Client, redisson.WithWatchdog()).NewOwner()
				for i := 0; i < rounds; i++ {
					outer, err := o.Lock(ctx, key, 5*time.Second)
					if !assert.NoError(t, err) {
						return
					}
					g.Enter(t)
					inner, err := o.TryLock(ctx, key, 5*time.Second)
					if assert.NoError(t, err, "reentry") {
						assert.NoError(t, inner.Unlock(ctx))
					}
					g.Exit(t)
					assert.NoError(t, outer.Unlock(ctx))
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, int64(workers*rounds), g.Entries())
		assert.Zero(t, g.Violations())
	})
}
