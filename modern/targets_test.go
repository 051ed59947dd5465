package modern_test

import (
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
	"github.com/lockbridge/lockbridge/modern"
)

// TestAllTargets runs the "done when" cases on go-redis and redigo against
// one server, and on a go-redis cluster client against a 3-master cluster
// (started once, ~2 s).
func TestAllTargets(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		t.Parallel()
		t.Run("exclusion 32 goroutines", func(t *testing.T) { t.Parallel(); exclusion(t, tg.Client) })
		t.Run("fences increase over 1000 hand-offs", func(t *testing.T) { t.Parallel(); fences(t, tg.Client) })
		t.Run("release wakes waiter", func(t *testing.T) { t.Parallel(); releaseWakes(t, tg.Client) })
		t.Run("unlock publishes", func(t *testing.T) { t.Parallel(); unlockPublishes(t, tg.Client, tg.Cluster) })
		t.Run("auto-refresh holds", func(t *testing.T) { t.Parallel(); autoRefreshHolds(t, tg.Client) })
		t.Run("auto-refresh lost on delete", func(t *testing.T) { t.Parallel(); autoRefreshLostOnDelete(t, tg.Client) })
		t.Run("polling without notifications", func(t *testing.T) { t.Parallel(); polling(t, tg.Client) })
		t.Run("hash-tagged key", func(t *testing.T) { t.Parallel(); taggedKey(t, tg.Client) })
	})
}

// exclusion: 32 goroutines on one key, through 4 lockers: all acquire, and
// the guard never sees two inside.
func exclusion(t *testing.T, c driver.Client) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	guard := locktest.NewGuard(c, key)
	lockers := []*modern.Locker{
		modern.New(c),
		modern.New(c, modern.WithAutoRefresh()),
		modern.New(c, modern.WithFencing()),
		modern.New(c, modern.WithNotifications(false), modern.WithBackoff(lockbridge.LinearBackoff(time.Millisecond,
			5*time.Millisecond))),
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(l *modern.Locker) {
			defer wg.Done()
			lk, err := l.Lock(ctx, key, 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			guard.Hold(t, 2*time.Millisecond)
			errs <- lk.Unlock(ctx)
		}(lockers[i%len(lockers)])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, int64(32), guard.Entries(), "every goroutine got the lock")
	assert.Equal(t, int64(0), guard.Violations(), "no two holders at once")
	_, ok := locktest.Get(t, c, key)
	assert.False(t, ok)
}

// fences: 1000 hand-offs between 8 goroutines on 4 lockers give strictly
// increasing fences, in the order the holders held the lock.
func fences(t *testing.T, c driver.Client) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	guard := locktest.NewGuard(c, key)
	lockers := make([]*modern.Locker, 4)
	for i := range lockers {
		lockers[i] = modern.New(c, modern.WithFencing())
	}
	const total = 1000
	var (
		mu   sync.Mutex
		seen []int64
		wg   sync.WaitGroup
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(l *modern.Locker) {
			defer wg.Done()
			for {
				lk, err := l.Lock(ctx, key, 5*time.Second)
				if !assert.NoError(t, err) {
					return
				}
				guard.Enter(t)
				mu.Lock()
				n := len(seen)
				if n < total {
					seen = append(seen, asModern(t, lk).Fence())
				}
				mu.Unlock()
				guard.Exit(t)
				assert.NoError(t, lk.Unlock(ctx))
				if n >= total {
					return
				}
			}
		}(lockers[g%len(lockers)])
	}
	wg.Wait()
	require.Len(t, seen, total)
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("fence %d of holder %d is not above %d of the holder before", seen[i], i, seen[i-1])
		}
	}
	assert.Equal(t, int64(0), guard.Violations())
	assert.Greater(t, seen[0], int64(1e15), "the first holder ever gets the server's TIME in µs")

	// The counter: in the key's slot, never expiring, at the last fence
	// handed out (the last holders of each goroutine took one more each).
	fenceKey := "{" + key + "}:fence"
	v, ok := locktest.Get(t, c, fenceKey)
	require.True(t, ok)
	assert.GreaterOrEqual(t, v, fmt.Sprint(seen[total-1]))
	assert.Equal(t, int64(-1), locktest.PTTL(t, c, fenceKey), "the fence counter never expires")
}

// releaseWakes: a waiter whose backoff is an hour, behind a holder with a
// minute left, gets the lock when the holder unlocks: only the release
// notification can wake it.
func releaseWakes(t *testing.T, c driver.Client) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	holder, err := modern.New(c).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)

	var tokens countingTokens
	waiter := modern.New(c, modern.WithBackoff(lockbridge.LinearBackoff(time.Hour, time.Hour)),
		modern.WithTokenFunc(tokens.token))
	got := make(chan lockbridge.Lock, 1)
	go func() {
		lk, err := waiter.Lock(ctx, key, time.Minute)
		assert.NoError(t, err)
		got <- lk
	}()
	// The waiter has tried, subscribed and tried again: it sleeps now.
	eventually(t, func() bool { return tokens.n.Load() >= 2 && modern.HubSubscribed(waiter, key) }, "waiter subscribed")
	time.Sleep(20 * time.Millisecond) // let its second attempt come back
	require.NoError(t, holder.Unlock(ctx))
	var lk lockbridge.Lock
	select {
	case lk = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken by the release")
	}
	require.NotNil(t, lk)
	v, _ := locktest.Get(t, c, key)
	assert.Equal(t, lk.Token(), v)
	assert.Equal(t, int64(3), tokens.n.Load(), "tried, subscribed, tried again, woken: the third attempt got it")
	require.NoError(t, lk.Unlock(ctx))
	lingerEnds(t, waiter, "no waiter left: the subscription is closed")
}

// unlockPublishes: the release script publishes on "{key}:released", with
// SPUBLISH in a cluster.
func unlockPublishes(t *testing.T, c driver.Client, cluster bool) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	ch := "{" + key + "}:released"
	sub, err := c.Subscribe(ctx, ch)
	require.NoError(t, err)
	defer sub.Close()
	lk, err := modern.New(c).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))
	select {
	case m := <-sub.Messages():
		assert.Equal(t, driver.Message{Channel: ch, Payload: "released"}, m)
	case <-time.After(5 * time.Second):
		t.Fatalf("no release message (cluster %v)", cluster)
	}
	// An expired lock's Unlock publishes nothing.
	lk, err = modern.New(c).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	locktest.Do(t, c, "DEL", key)
	require.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
	select {
	case m := <-sub.Messages():
		t.Fatalf("unexpected message %v", m)
	case <-time.After(50 * time.Millisecond):
	}
}

// polling: with notifications off, waiters still get the lock, by polling,
// and never sleep past the holder's lease.
func polling(t *testing.T, c driver.Client) {
	ctx := locktest.Ctx(t)
	t.Run("release", func(t *testing.T) {
		key := locktest.Key(t, "k")
		holder, err := modern.New(c).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		waiter := modern.New(c, modern.WithNotifications(false),
			modern.WithBackoff(lockbridge.LinearBackoff(5*time.Millisecond, 20*time.Millisecond)))
		got := make(chan lockbridge.Lock, 1)
		go func() {
			lk, err := waiter.Lock(ctx, key, time.Minute)
			assert.NoError(t, err)
			got <- lk
		}()
		time.Sleep(30 * time.Millisecond)
		require.NoError(t, holder.Unlock(ctx))
		lk := <-got
		require.NotNil(t, lk)
		lingerEnds(t, waiter, "the subscription closed")
		require.NoError(t, lk.Unlock(ctx))
	})
	t.Run("holder's lease bounds the wait", func(t *testing.T) {
		key := locktest.Key(t, "k")
		_, err := modern.New(c).TryLock(ctx, key, 200*time.Millisecond) // never unlocked
		require.NoError(t, err)
		waiter := modern.New(c, modern.WithNotifications(false), modern.WithBackoff(lockbridge.LinearBackoff(time.Hour,
			time.Hour)))
		lk, err := waiter.Lock(ctx, key, time.Minute)
		require.NoError(t, err, "the waiter retried when the holder's lease ran out, not after an hour")
		require.NoError(t, lk.Unlock(ctx))
	})
}

// taggedKey: a key with a hash tag keeps it; fence and channel are key+suffix.
func taggedKey(t *testing.T, c driver.Client) {
	ctx := locktest.Ctx(t)
	key := "{" + locktest.Key(t, "tag") + "}:order"
	lk, err := modern.New(c, modern.WithFencing()).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	fence := asModern(t, lk).Fence()
	assert.Greater(t, fence, int64(0))
	v, ok := locktest.Get(t, c, key+":fence")
	require.True(t, ok)
	assert.Equal(t, strconv.FormatInt(fence, 10), v)
	require.NoError(t, lk.Unlock(ctx))
}
