package redlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redlock"
)

var _ lockbridge.Locker = (*redlock.Locker)(nil)

// The modern scripts' SHA1s (pinned in internal/protocol/modernproto): Redlock sends
// exactly modern's acquire and release.
const (
	acquireSHA = "c88d5b8233eabe847508bfc22760d7415e18d8f1"
	releaseSHA = "befd0567ebab81ec7383e9b1e06800d9b55c193c"
)

// TestCycle: one token on every node, with the ttl; a second locker is
// refused by all five; Unlock clears every node; the lock is modern's lock
// on each node.
func TestCycle(t *testing.T) {
	f := startFleet(t, 5)
	ctx := locktest.Ctx(t)
	l := redlock.New(f.clients)
	const ttl = 10 * time.Second

	before := time.Now()
	lk, err := l.TryLock(ctx, "order:1", ttl)
	require.NoError(t, err)
	after := time.Now()
	rl := asRedlock(t, lk)
	assert.Equal(t, "order:1", rl.Key())
	assert.Len(t, rl.Token(), 22)
	assert.Equal(t, all(5, true), f.holds(t, "order:1", lk.Token()))
	for i := range f.clients {
		assert.InDelta(t, ttl.Milliseconds(), f.pttl(t, i, "order:1"), 1000, "node %d", i)
	}
	// Validity end: sent-at + ttl − (ttl×0.01 + 2 ms).
	drift := ttl/100 + 2*time.Millisecond
	assert.False(t, lk.ExpiresAt().Before(before.Add(ttl-drift)), "ExpiresAt %v", lk.ExpiresAt())
	assert.False(t, lk.ExpiresAt().After(after.Add(ttl-drift)), "ExpiresAt %v", lk.ExpiresAt())
	assert.False(t, isDone(lk))
	assert.NoError(t, lk.Err())

	// Same scripts as modern: a Locker's first acquire runs modern's acquire
	// script (later ones, without fencing, a plain SET NX PX).
	for i, c := range f.clients {
		r, err := c.Do(ctx, "SCRIPT", "EXISTS", acquireSHA, releaseSHA)
		require.NoError(t, err)
		assert.Equal(t, []any{int64(1), int64(0)}, r, "node %d", i)
	}
	// And the same lock: a modern locker on any node sees it held.
	for i, c := range f.clients {
		_, err := modern.New(c).TryLock(ctx, "order:1", time.Second)
		var no *lockbridge.NotObtainedError
		assert.True(t, errors.As(err, &no), "node %d: %v", i, err)
	}

	// A second Redlock client is refused by every node, and leaves nothing.
	_, err = redlock.New(f.clients).TryLock(ctx, "order:1", ttl)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	qe := quorumErr(t, err)
	assert.Equal(t, redlock.OpAcquire, redlock.OpOf(qe))
	assert.Equal(t, "order:1", qe.Key)
	assert.Equal(t, 3, qe.Need)
	assert.Equal(t, 0, qe.Got)
	assert.Equal(t, []int{0, 1, 2, 3, 4}, qe.Indexes(redlock.Taken))
	for _, n := range qe.Nodes {
		assert.Greater(t, n.HolderTTL, ttl/2)
		assert.NoError(t, n.Err)
	}
	assert.Equal(t, all(5, true), f.holds(t, "order:1", lk.Token()))

	require.NoError(t, lk.Unlock(ctx))
	for i := range f.clients {
		_, ok := f.value(t, i, "order:1")
		assert.False(t, ok, "node %d", i)
	}
	assert.True(t, isDone(lk))
	assert.NoError(t, lk.Err())
	assert.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, lk.Refresh(ctx, ttl), lockbridge.ErrNotHeld)

	// Free again: a modern lock on one node does not stop a Redlock quorum.
	ml, err := modern.New(f.clients[0]).TryLock(ctx, "order:1", ttl)
	require.NoError(t, err)
	lk, err = l.TryLock(ctx, "order:1", ttl)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true, true, true}, f.holds(t, "order:1", lk.Token()))
	require.NoError(t, lk.Unlock(ctx))
	require.NoError(t, ml.Unlock(ctx))
}

// TestMajority: with the key held by others on two nodes the lock is
// granted; on three it is refused, and the round is undone on the nodes it
// got.
func TestMajority(t *testing.T) {
	f := startFleet(t, 5)
	ctx := locktest.Ctx(t)
	l := redlock.New(f.clients, redlock.WithNodeNames(f.names...))

	f.set(t, "two", "other", time.Minute, 0, 1)
	lk, err := l.TryLock(ctx, "two", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, false, true, true, true}, f.holds(t, "two", lk.Token()))
	require.NoError(t, lk.Unlock(ctx), "3 of 5 released is a clean unlock")
	assert.Equal(t, []bool{true, true}, f.holds(t, "two", "other", 0, 1), "the other holder's keys are untouched")

	f.set(t, "three", "other", 700*time.Millisecond, 0, 1, 2)
	_, err = l.TryLock(ctx, "three", time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	qe := quorumErr(t, err)
	assert.Equal(t, 2, qe.Got)
	assert.Equal(t, []int{0, 1, 2}, qe.Indexes(redlock.Taken))
	assert.Equal(t, []int{3, 4}, qe.Indexes(redlock.OK))
	assert.Equal(t, f.names[1], qe.Nodes[1].Name)
	assert.Contains(t, err.Error(),
		`redlock: lock "three" not obtained: 2 of 5 nodes acquired, need 3: node 0 (`+f.names[0]+`): held by another for `)
	assert.Contains(t, err.Error(), "; node 3 ("+f.names[3]+"): ok")
	for _, i := range []int{3, 4} {
		_, ok := f.value(t, i, "three")
		assert.False(t, ok, "node %d: the failed round was undone", i)
	}

	// Lock waits for the holders to expire (≈700 ms), with no Unlock.
	lk, err = l.Lock(ctx, "three", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, all(5, true), f.holds(t, "three", lk.Token()))
	require.NoError(t, lk.Unlock(ctx))

	// NoRetry: Lock is one round.
	f.set(t, "three", "other", time.Minute, 0, 1, 2)
	_, err = redlock.New(f.clients, redlock.WithBackoff(lockbridge.NoRetry())).Lock(ctx, "three", time.Minute)
	quorumErr(t, err)
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)

	// A context that ends while Lock waits.
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = l.Lock(cctx, "three", time.Minute)
	locktest.GaveUp(t, err, context.DeadlineExceeded)
	quorumErr(t, err)

	// One already ended: no round at all.
	cctx, cancel = context.WithCancel(ctx)
	cancel()
	_, err = l.TryLock(cctx, "free", time.Minute)
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
	assert.ErrorIs(t, err, context.Canceled)
	for i := range f.clients {
		_, ok := f.value(t, i, "free")
		assert.False(t, ok)
	}
}

// TestExclusion: 8 goroutines contending through two lockers over the same
// five nodes never overlap.
func TestExclusion(t *testing.T) {
	f := startFleet(t, 5)
	ctx := locktest.Ctx(t)
	guard := locktest.NewGuard(f.clients[0], "excl")
	lockers := []*redlock.Locker{
		redlock.New(f.clients, redlock.WithBackoff(lockbridge.ExponentialBackoff(time.Millisecond, 16*time.Millisecond))),
		redlock.New(f.clients, redlock.WithAutoRefresh(),
			redlock.WithBackoff(lockbridge.ExponentialBackoff(2*time.Millisecond, 32*time.Millisecond))),
	}
	const goroutines, rounds = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*rounds)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(l *redlock.Locker) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				lk, err := l.Lock(ctx, "excl", 2*time.Second)
				if err != nil {
					errs <- err
					return
				}
				guard.Hold(t, time.Millisecond)
				errs <- lk.Unlock(ctx)
			}
		}(lockers[g%len(lockers)])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.EqualValues(t, goroutines*rounds, guard.Entries())
	assert.Zero(t, guard.Violations())
}

// TestRefresh: Refresh extends on every node; it survives two nodes losing
// the key (and gives it back to them); three is a lost lock.
func TestRefresh(t *testing.T) {
	f := startFleet(t, 5)
	ctx := locktest.Ctx(t)
	l := redlock.New(f.clients)

	lk, err := l.TryLock(ctx, "r", time.Second)
	require.NoError(t, err)
	exp := lk.ExpiresAt()
	require.NoError(t, lk.Refresh(ctx, time.Minute))
	assert.True(t, lk.ExpiresAt().After(exp.Add(50*time.Second)))
	for i := range f.clients {
		assert.Greater(t, f.pttl(t, i, "r"), int64(50000), "node %d", i)
	}
	assert.ErrorIs(t, lk.Refresh(ctx, 0), lockbridge.ErrInvalid)

	// Two nodes forget the key (say, restarted empty): still a majority,
	// and the refresh puts it back.
	f.del(t, "r", 1, 3)
	require.NoError(t, lk.Refresh(ctx, time.Minute))
	assert.Equal(t, all(5, true), f.holds(t, "r", lk.Token()))

	// Another holder on two nodes, two forgotten: lost.
	f.set(t, "r", "other", time.Minute, 0, 1)
	f.del(t, "r", 2)
	err = lk.Refresh(ctx, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotHeld)
	qe := quorumErr(t, err)
	assert.Equal(t, redlock.OpRefresh, redlock.OpOf(qe))
	assert.Equal(t, []int{0, 1}, qe.Indexes(redlock.Taken))
	assert.Equal(t, []int{2}, qe.Indexes(redlock.Expired))
	assert.Equal(t, []int{3, 4}, qe.Indexes(redlock.OK))
	assert.True(t, isDone(lk))
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	assert.ErrorIs(t, lk.Err(), lockbridge.ErrNotHeld)
	assert.Equal(t, qe, quorumErr(t, lk.Err()))
	assert.ErrorIs(t, lk.Refresh(ctx, time.Minute), lockbridge.ErrNotHeld)

	// Unlock of the lost lock: not ours, said as such; the other holder's
	// keys are untouched.
	err = lk.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.Equal(t, redlock.OpUnlock, redlock.OpOf(quorumErr(t, err)))
	assert.Equal(t, []bool{true, true}, f.holds(t, "r", "other", 0, 1))
	_, ok := f.value(t, 3, "r")
	assert.False(t, ok, "our key on node 3 released all the same")
	assert.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
}

// TestAutoRefresh: a lock outlives its ttl many times over; deleting it on
// three nodes makes it lost, and Done says so.
func TestAutoRefresh(t *testing.T) {
	f := startFleet(t, 5)
	ctx := locktest.Ctx(t)
	l := redlock.New(f.clients, redlock.WithAutoRefresh())

	lk, err := l.TryLock(ctx, "a", 300*time.Millisecond)
	require.NoError(t, err)
	exp := lk.ExpiresAt()
	time.Sleep(time.Second)
	assert.False(t, isDone(lk), "lost: %v", lk.Err())
	assert.True(t, lk.ExpiresAt().After(exp.Add(500*time.Millisecond)))
	assert.Equal(t, all(5, true), f.holds(t, "a", lk.Token()))
	require.NoError(t, lk.Unlock(ctx))
	assert.True(t, isDone(lk))
	assert.NoError(t, lk.Err())
	for i := range f.clients {
		_, ok := f.value(t, i, "a")
		assert.False(t, ok)
	}

	lk, err = l.TryLock(ctx, "b", 300*time.Millisecond)
	require.NoError(t, err)
	f.del(t, "b", 0, 2, 4)
	require.True(t, locktest.WaitDone(lk, 2*time.Second), "the loss was not noticed")
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	assert.ErrorIs(t, lk.Err(), lockbridge.ErrNotHeld)
	assert.Contains(t, lk.Err().Error(), `redlock: lock lost: refresh of lock "b" failed: 2 of 5 nodes refreshed, need 3`)
	assert.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
}

// TestPausedClient: a client process that pauses during the round (a GC
// pause, say) finds no validity left even though every node said yes: the
// lock is refused and the round undone.
func TestPausedClient(t *testing.T) {
	f := startFleet(t, 3)
	ctx := locktest.Ctx(t)
	clients := append(f.clients[:0:0], f.clients...)
	// A lease long enough that each node's timeout (a tenth of it) is not
	// reached on a loaded machine; the pause outlasts it.
	clients[1] = pausingClient{Client: clients[1], pause: 600 * time.Millisecond}
	_, err := redlock.New(clients).TryLock(ctx, "p", 400*time.Millisecond)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	qe := quorumErr(t, err)
	assert.Equal(t, 3, qe.Got)
	assert.Less(t, redlock.ValidityOf(qe), -40*time.Millisecond)
	assert.Regexp(t, `^redlock: lock "p" not obtained: 3 of 3 nodes acquired but no validity left \(-[0-9.]+ms\): node 0: ok; node 1: ok; node 2: ok$`, err.Error())
	for i := range f.clients {
		_, ok := f.value(t, i, "p")
		assert.False(t, ok, "node %d", i)
	}
}

// TestNilLock: a nil *Lock is safe.
func TestNilLock(t *testing.T) {
	var lk *redlock.Lock
	ctx := context.Background()
	assert.ErrorIs(t, lk.Unlock(ctx), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, lk.Refresh(ctx, time.Second), lockbridge.ErrNotHeld)
	assert.ErrorIs(t, lk.Err(), lockbridge.ErrNotHeld)
	assert.True(t, isDone(lk))
	assert.Empty(t, lk.Key())
	assert.Empty(t, lk.Token())
	assert.True(t, lk.ExpiresAt().IsZero())
}
