package lockbridge_test

// Second adversarial review of issues 25 and 26: each test asks whether
// the holder's Done had closed when another client got the lock.

import (
	"context"
	"errors"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
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
func TestFaultRedissonLostReentryBesideRefresh(t *testing.T) {
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

	assert.True(t, takeover(t, outer, r.b, key),
		"two holders: the outer hold's Done was open when another client got the lock")
	_ = outer.Unlock(ctx)
}

// Review (issue 26, round 2): a dual-read lock (6 s). A shortening
// Refresh(1 s) is held up in the network (the proxy delays its frame
// 1.5 s) past the client's read timeout (200 ms): its outcome is unknown.
// (Dual-read used to ask again with the same arguments and take the second
// send's answer as the first's; now it is sent once, and the Refresh
// returns the unknown outcome.) Then Refresh(6 s), confirmed. The first
// send lands late, after the longer refresh, and sets the modern key's
// lease to 1 s from its arrival; the local lease must not still run 6 s
// from the last refresh. The fix gave heldLock, modern, redlock, Redisson
// and the dual lock Lease.Unsure for a write whose reply never came.
func TestFaultDualReadRetriedRefreshLandsLate(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	direct := locktest.GoRedis(t, srv)
	a := migrate.New(goredis.New(rdb), migrate.WithPhase(migrate.PhaseDualRead))
	b := migrate.New(direct, migrate.WithPhase(migrate.PhaseDualRead))
	warm(t, a)
	ctx := context.Background()
	key := locktest.Key(t, "k")
	lk, err := a.TryLock(ctx, key, 6*time.Second)
	require.NoError(t, err)

	count := p.Count(evals)
	p.Delay(1500 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- lk.Refresh(ctx, time.Second) }()
	waitCount(t, count, 1) // the first send's frame is held in the proxy
	p.Delay(0)
	require.ErrorIs(t, <-done, lockbridge.ErrUnknownOutcome, "the read timed out")
	assert.Equal(t, 1, count(), "the refresh was sent once")

	require.NoError(t, lk.Refresh(ctx, 6*time.Second), "the longer refresh is confirmed")
	time.Sleep(1600 * time.Millisecond) // the first send has landed
	_, mk, err := a.Keys(key)
	require.NoError(t, err)
	pttl := locktest.Do(t, direct, "PTTL", mk).(int64)
	t.Logf("server lease %d ms, local lease %v", pttl, time.Until(lk.ExpiresAt()).Round(time.Millisecond))

	assert.True(t, takeover(t, lk, b, key), "two holders: Done was open when another client got the lock")
	_ = lk.Unlock(ctx)
}
