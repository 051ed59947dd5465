package lockbridge_test

// Adversarial review of issue 26 (the loss signal is a timer). Each test
// asks whether the holder's Done had closed when another client got the
// lock.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// waitCount waits until count() reaches n.
func waitCount(t *testing.T, count func() int, n int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); count() < n; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(end), "the command never reached the proxy")
	}
}

// A shortening Refresh whose context ends with the command still on the
// wire (held up in the network: the proxy delays that one frame 1.5 s),
// then a longer Refresh that is confirmed. The late short refresh lands
// after the long one and sets the server's lease to 1 s from its arrival;
// the long refresh's Extend has overwritten the cap the unknown one put on
// the local lease (Sending), so the local lease runs 6 s from the second
// send. The rule: a call whose outcome is unknown may only shorten the
// local lease; a later confirmed grant cannot know it was applied after
// the unknown one.
func TestFaultLateShorteningRefreshAfterLongerConfirmed(t *testing.T) {
	k := leaseKinds()[0] // modern, no auto-refresh
	require.Equal(t, "modern", k.name)
	r := newRig(t, k, "goredis", false)
	key := locktest.Key(t, "k")
	lk, err := r.a.TryLock(context.Background(), key, 6*time.Second)
	require.NoError(t, err)

	p := r.proxies[0]
	count := p.Count(evals)
	p.Delay(1500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- lk.Refresh(ctx, time.Second) }()
	waitCount(t, count, 1) // the short refresh's frame is held in the proxy
	p.Delay(0)
	require.Error(t, <-done, "the short refresh timed out, outcome unknown")
	cancel()

	require.NoError(t, lk.Refresh(context.Background(), 6*time.Second), "the longer refresh is confirmed")

	assert.True(t, takeover(t, lk, r.b, key), "Done was open when another client got the lock")
	_ = lk.Unlock(context.Background())
}

// Redisson reentrant holds of one Owner: the outer hold's Refresh is in
// flight (300 ms each way) when the inner hold unlocks. The inner unlock
// sets the whole lock's lease to max(its ttl, keep()), keep() reading the
// outer hold's local lease end from before the refresh is confirmed; it
// lands after the outer refresh, so the server's lease is shortened back,
// while the outer hold's Extend then records the refresh's full lease.
func TestFaultRedissonInnerUnlockBesideOuterRefresh(t *testing.T) {
	k := leaseKinds()[4]
	require.Equal(t, "redisson", k.name)
	r := newRig(t, k, "goredis", false)
	key := locktest.Key(t, "k")
	ctx := context.Background()
	o := r.a.(*redisson.Locker).NewOwner()
	// Open several pooled connections through the proxy first: a new
	// connection's handshake would otherwise take round trips under the
	// delay.
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				w, err := r.a.TryLock(ctx, locktest.Key(t, fmt.Sprintf("warm%d", i)), time.Minute)
				if err == nil {
					_ = w.Unlock(ctx)
				}
			}
		}(i)
	}
	wg.Wait()
	outer, err := o.TryLock(ctx, key, 2*time.Second)
	require.NoError(t, err)
	time.Sleep(900 * time.Millisecond)
	inner, err := o.TryLock(ctx, key, 500*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)

	p := r.proxies[0]
	count := p.Count(evals)
	p.Delay(300 * time.Millisecond)
	refreshed := make(chan error, 1)
	go func() { refreshed <- outer.Refresh(ctx, 2*time.Second) }()
	waitCount(t, count, 1)
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, inner.Unlock(ctx))
	require.NoError(t, <-refreshed)
	p.Delay(0)
	pttl := locktest.Do(t, r.direct[0], "PTTL", key).(int64)
	left := time.Until(outer.(*redisson.Lock).ExpiresAt())
	t.Logf("server lease %d ms, outer hold's local lease %v", pttl, left)

	assert.True(t, takeover(t, outer, r.b, key), "Done was open when another client got the lock")
	_ = outer.Unlock(ctx)
}
