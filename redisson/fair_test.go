package redisson_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// queue returns a fair lock's waiters' queue, head first.
func queue(t testing.TB, c driver.Client, key string) []string {
	t.Helper()
	r := locktest.Do(t, c, "LRANGE", "redisson_lock_queue:{"+key+"}", 0, -1)
	var out []string
	for _, v := range r.([]any) {
		out = append(out, v.(string))
	}
	return out
}

// Fair waiters are served in arrival order, each woken on its own channel,
// on one server and in a cluster; a waiter that gives up leaves the queue.
func TestFairFIFO(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		slow := redisson.WithBackoff(lockbridge.LinearBackoff(20*time.Second, 20*time.Second))
		holder, err := redisson.New(tg.Client, redisson.WithFair(time.Minute)).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)

		const n = 4
		got := make(chan int, n)
		owners := make([]*redisson.Owner, n)
		release := make(chan struct{}, n)
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := 0; i < n; i++ {
			owners[i] = redisson.New(tg.Client, redisson.WithFair(time.Minute), slow).NewOwner()
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				lk, err := owners[i].Lock(ctx, key, time.Minute)
				if !assert.NoError(t, err) {
					got <- -1
					return
				}
				got <- i
				<-release
				assert.NoError(t, lk.Unlock(ctx))
			}(i)
			require.Eventually(t, func() bool { return len(queue(t, tg.Client, key)) == i+1 }, 10*time.Second, time.Millisecond)
		}
		want := make([]string, n)
		for i, o := range owners {
			want[i] = o.Field()
		}
		assert.Equal(t, want, queue(t, tg.Client, key), "queued in arrival order")
		ts := locktest.Do(t, tg.Client, "ZRANGE", "redisson_lock_timeout:{"+key+"}", 0, -1)
		assert.Len(t, ts, n, "each waiter has a timeout")

		// A TryLock never queues and never goes ahead of the waiters.
		_, err = redisson.New(tg.Client, redisson.WithFair(time.Minute)).TryLock(ctx, key, time.Second)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)

		require.NoError(t, holder.Unlock(ctx))
		for i := 0; i < n; i++ {
			assert.Equal(t, i, <-got, "served in arrival order")
			release <- struct{}{}
		}
		wg.Wait()
		assert.Empty(t, queue(t, tg.Client, key))

		// Giving up leaves the queue.
		holder, err = redisson.New(tg.Client, redisson.WithFair(time.Minute)).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err = redisson.New(tg.Client, redisson.WithFair(time.Minute)).Lock(wctx, key, time.Second)
		locktest.GaveUp(t, err, context.DeadlineExceeded)
		assert.Empty(t, queue(t, tg.Client, key), "the waiter that gave up left the queue")
		require.NoError(t, holder.Unlock(ctx))
	})
}

// A waiter that vanished without leaving the queue is dropped once its
// timeout is past by the clock of a client running a fair script: the
// queue's order follows the clients' clocks, but only the hash admits.
func TestFairStaleWaiterPruned(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(tg.Client, redisson.WithFair(time.Minute))
	ghost := "00000000-0000-4000-8000-000000000000:7"
	now := time.Now().UnixMilli()
	locktest.Do(t, tg.Client, "RPUSH", "redisson_lock_queue:{"+key+"}", ghost)
	locktest.Do(t, tg.Client, "ZADD", "redisson_lock_timeout:{"+key+"}", strconv.FormatInt(now+60_000, 10), ghost)
	_, err := l.TryLock(ctx, key, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "a live waiter goes first, though the lock is free")

	locktest.Do(t, tg.Client, "ZADD", "redisson_lock_timeout:{"+key+"}", strconv.FormatInt(now-1, 10), ghost)
	lk, err := l.TryLock(ctx, key, time.Second)
	require.NoError(t, err, "its timeout passed: dropped")
	assert.Empty(t, queue(t, tg.Client, key))
	require.NoError(t, lk.Unlock(ctx))

	// A waiter ahead in the queue never lets anyone in while the lock is
	// held, whatever the clocks say: exclusion is the hash's alone.
	holder, err := l.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	locktest.Do(t, tg.Client, "ZADD", "redisson_lock_timeout:{"+key+"}", strconv.FormatInt(now-1, 10), ghost)
	locktest.Do(t, tg.Client, "RPUSH", "redisson_lock_queue:{"+key+"}", ghost)
	_, err = l.TryLock(ctx, key, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	require.NoError(t, holder.Unlock(ctx))
}

func TestWaiterChannel(t *testing.T) {
	assert.Equal(t, "redisson_lock__channel:{orders}:u:1", redisson.WaiterChannel("orders", "u:1"))
	assert.Equal(t, fmt.Sprintf("%s:%s", redisson.ChannelName("a{b}c"), "u:1"), redisson.WaiterChannel("a{b}c", "u:1"))
}

// Redisson's fair release replies success for a lock whose key is gone
// (and wakes the queue head); the Unlock still says not held after the lease
// ran out, as the plain lock's does.
func TestFairUnlockAfterExpiry(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	fair, err := redisson.New(tg.Client, redisson.WithFair(time.Minute)).TryLock(ctx, key, 20*time.Millisecond)
	require.NoError(t, err)
	plain, err := redisson.New(tg.Client).TryLock(ctx, key+":plain", 20*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(60 * time.Millisecond)
	assert.ErrorIs(t, fair.Unlock(ctx), lockbridge.ErrNotHeld, "whatever the fair script's reply")
	assert.ErrorIs(t, plain.Unlock(ctx), lockbridge.ErrNotHeld)
}
