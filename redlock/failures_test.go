package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redlock"
)

// TestNodesDown: with two of five servers stopped the lock is granted; with
// three it is refused, with a typed error naming the failing nodes, and the
// round leaves nothing on the live ones.
func TestNodesDown(t *testing.T) {
	f := startFleet(t, 5)
	ctx := locktest.Ctx(t)
	l := redlock.New(f.clients, redlock.WithNodeNames(f.names...))

	f.servers[1].Stop()
	f.servers[3].Stop()
	lk, err := l.TryLock(ctx, "d", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, all(3, true), f.holds(t, "d", lk.Token(), 0, 2, 4))
	lk2, err := l.Lock(ctx, "d2", time.Minute)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx), "3 of 5 released is a clean unlock")
	require.NoError(t, lk2.Unlock(ctx))

	f.servers[4].Stop()
	_, err = l.TryLock(ctx, "d", time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	qe := quorumErr(t, err)
	assert.Equal(t, 2, qe.Got)
	assert.Equal(t, 3, qe.Need)
	assert.Equal(t, []int{1, 3, 4}, qe.Indexes(redlock.Failed))
	assert.Equal(t, []int{0, 2}, qe.Indexes(redlock.OK))
	for _, i := range []int{1, 3, 4} {
		n := qe.Nodes[i]
		assert.Equal(t, f.names[i], n.Name)
		assert.Error(t, n.Err)
		assert.ErrorIs(t, err, n.Err, "the QuorumError wraps node %d's error", i)
		// A refused connection, or a timeout when go-redis keeps redialling.
		assert.Contains(t, err.Error(), fmt.Sprintf("node %d (%s): failed: ", i, f.names[i]))
	}
	for _, i := range []int{0, 2} {
		_, ok := f.value(t, i, "d")
		assert.False(t, ok, "node %d: the failed round was undone", i)
	}

	// Lock keeps trying while the nodes are down, until its context ends.
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = l.Lock(cctx, "d", time.Minute)
	locktest.GaveUp(t, err, context.DeadlineExceeded)

	// A server back (empty): a majority again.
	f.servers[4].Restart()
	lk, err = l.TryLock(ctx, "d", time.Minute)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))
}

// TestNodeStopsMidHold: an auto-refreshed lock survives two of five servers
// stopping while it is held, and one restarting empty (the refresh gives it
// the key back); a third stopping makes it lost.
func TestNodeStopsMidHold(t *testing.T) {
	f := startFleet(t, 5)
	ctx := locktest.Ctx(t)
	l := redlock.New(f.clients, redlock.WithAutoRefresh())
	// Long enough that a refresh (every ttl/3) is not late on a loaded
	// machine: the test is about nodes, not about scheduling.
	const ttl = time.Second

	lk, err := l.TryLock(ctx, "m", ttl)
	require.NoError(t, err)
	f.servers[1].Stop()
	time.Sleep(2 * ttl)
	f.servers[3].Stop()
	time.Sleep(2 * ttl)
	assert.False(t, isDone(lk), "lost: %v", lk.Err())
	assert.Equal(t, all(3, true), f.holds(t, "m", lk.Token(), 0, 2, 4))
	assert.True(t, lk.ExpiresAt().After(time.Now()))

	// Node 1 comes back empty: the next refresh puts the key back.
	f.servers[1].Restart()
	require.Eventually(t, func() bool {
		v, ok, err := f.clients[1].Get(ctx, "m")
		return err == nil && ok && v == lk.Token()
	}, 5*time.Second, 10*time.Millisecond, "node 1 did not rejoin")
	assert.False(t, isDone(lk), "lost: %v", lk.Err())

	// Three down (3 and two more): no refresh can reach a majority.
	f.servers[0].Stop()
	f.servers[4].Stop()
	require.True(t, locktest.WaitDone(lk, 2*time.Second), "the loss was not noticed")
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	quorumErr(t, lk.Err())

	// Unlock cannot decide either: 2 released, 3 failed. Not ErrNotHeld.
	err = lk.Unlock(ctx)
	require.Error(t, err)
	assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
	qe := quorumErr(t, err)
	assert.Equal(t, []int{0, 3, 4}, qe.Indexes(redlock.Failed))
	assert.Equal(t, []int{1, 2}, qe.Indexes(redlock.OK))
}

// TestHungNode: a server that hangs (SIGSTOP) costs a round no more than the
// node timeout: with one of five hung the lock is granted and released
// promptly; with three hung it fails promptly (outcome unknown), each hung node's error
// being ErrNodeTimeout — not context.DeadlineExceeded, the caller's context
// did not end. The bounds are generous: they prove no stall, not a speed.
func TestHungNode(t *testing.T) {
	f := startFleet(t, 5)
	ctx := locktest.Ctx(t)
	const nodeTimeout = 100 * time.Millisecond
	l := redlock.New(f.clients, redlock.WithNodeTimeout(nodeTimeout), redlock.WithAutoRefresh())

	// Warm the connections and script caches before the hang.
	lk, err := l.TryLock(ctx, "h", 2*time.Second)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))

	f.pause(t, 2)
	start := time.Now()
	lk, err = l.TryLock(ctx, "h", 2*time.Second)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 2*time.Second, "acquisition stalled on the hung node")
	assert.Equal(t, all(4, true), f.holds(t, "h", lk.Token(), 0, 1, 3, 4))
	start = time.Now()
	require.NoError(t, lk.Unlock(ctx))
	assert.Less(t, time.Since(start), 2*time.Second, "unlock stalled on the hung node")

	// Lock, too, with the auto-refresh running against the hung node.
	lk, err = l.Lock(ctx, "h", 600*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(time.Second)
	assert.False(t, isDone(lk), "lost: %v", lk.Err())
	require.NoError(t, lk.Unlock(ctx))

	f.pause(t, 0)
	f.pause(t, 4)
	start = time.Now()
	_, err = l.TryLock(ctx, "h", 2*time.Second)
	assert.Less(t, time.Since(start), 2*time.Second, "a refused acquisition stalled")
	// The three hung nodes got the SET and will run it when they resume:
	// with the undo unable to reach them, our token may hold a majority,
	// so the outcome is unknown — never "not obtained".
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
	assert.False(t, errors.Is(err, lockbridge.ErrNotObtained), "got %v", err)
	qe := quorumErr(t, err)
	assert.Equal(t, []int{0, 2, 4}, qe.Indexes(redlock.Failed))
	for _, i := range []int{0, 2, 4} {
		assert.ErrorIs(t, qe.Nodes[i].Err, redlock.ErrNodeTimeout, "node %d", i)
	}
	assert.ErrorIs(t, err, redlock.ErrNodeTimeout)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "a node timeout is not the caller's deadline: %v", err)
	assert.Contains(t, err.Error(), "node 2: failed: node timed out after 100ms")
	for _, i := range []int{1, 3} {
		_, ok := f.value(t, i, "h")
		assert.False(t, ok, "node %d: the failed round was undone", i)
	}
}
