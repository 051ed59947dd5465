package lockbridge_test

// Second adversarial review of issues 25 and 26: each test asks whether
// the holder's Done had closed when another client got the lock.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// Review (issue 26, round 2): a Redisson owner holds a lock (2 s) and
// re-enters it; the re-entry's acquire is held up in the network (the
// proxy delays its frame 1.5 s) and its context ends first, so its outcome
// is unknown ("the re-entry may have been counted"). The acquire sets the
// whole lock's lease to max(its ttl, keep()) ≈ 2 s when it runs. The outer
// hold then refreshes to 6 s, confirmed. The late acquire lands after that
// refresh and sets the server's lease back to ≈ 2 s from its arrival; the
// outer hold's lease still runs 6 s from its refresh. The fix made every
// renewal and unlock of a hold whose reply never came call Owner.unsure —
// the attempt of a re-entry does not, so the later confirmed grant is not
// capped.
func TestReviewRedissonLostReentryBesideRefresh(t *testing.T) {
	k := leaseKinds()[4]
	require.Equal(t, "redisson", k.name)
	r := newRig(t, k, "goredis", false)
	key := locktest.Key(t, "k")
	ctx := context.Background()
	o := r.a.(*redisson.Locker).NewOwner()
	outer, err := o.TryLock(ctx, key, 2*time.Second)
	require.NoError(t, err)

	p := r.proxies[0]
	count := p.Count(evals)
	p.Delay(1500 * time.Millisecond)
	rctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	done := make(chan error, 1)
	go func() {
		lk, err := o.TryLock(rctx, key, 100*time.Millisecond)
		if err == nil {
			_ = lk.Unlock(ctx)
		}
		done <- err
	}()
	waitCount(t, count, 1) // the re-entry's frame is held in the proxy
	p.Delay(0)
	err = <-done
	cancel()
	require.Error(t, err, "the re-entry timed out")
	t.Logf("re-entry: %v (unknown outcome: %v)", err, errors.Is(err, lockbridge.ErrUnknownOutcome))

	require.NoError(t, outer.Refresh(ctx, 6*time.Second), "the outer hold's refresh is confirmed")
	time.Sleep(1600 * time.Millisecond) // the late acquire has landed
	pttl := locktest.Do(t, r.direct[0], "PTTL", key).(int64)
	t.Logf("server lease %d ms, outer hold's local lease %v", pttl, time.Until(outer.ExpiresAt()).Round(time.Millisecond))

	assert.True(t, takeover(t, outer, r.b, key), "two holders: the outer hold's Done was open when another client got the lock")
	_ = outer.Unlock(ctx)
}
