package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/redlock"
)

func TestQuorumError(t *testing.T) {
	refused := errors.New("redlock: acquire \"k\": dial tcp: connection refused")
	timeout := fmt.Errorf("%w after %v", redlock.ErrNodeTimeout, 50*time.Millisecond)
	nodes := []redlock.NodeResult{
		{Index: 0, Status: redlock.OK},
		{Index: 1, Name: "b:6379", Status: redlock.Taken, HolderTTL: 1500 * time.Millisecond},
		{Index: 2, Status: redlock.Taken, HolderTTL: -1},
		{Index: 3, Status: redlock.Failed, Err: refused},
		{Index: 4, Name: "e:6379", Status: redlock.Failed, Err: timeout},
	}
	acq := redlock.WithOp(redlock.OpAcquire, &redlock.QuorumError{Key: "k", Need: 3, Got: 1, Nodes: nodes})
	assert.EqualError(t, acq, `redlock: lock "k" not obtained: 1 of 5 nodes acquired, need 3: `+
		`node 0: ok; node 1 (b:6379): held by another for 1.5s more; node 2: held by another, with no expiry; `+
		`node 3: failed: acquire "k": dial tcp: connection refused; node 4 (e:6379): failed: node timed out after 50ms`)
	assert.ErrorIs(t, acq, lockbridge.ErrNotObtained)
	assert.ErrorIs(t, acq, refused)
	assert.ErrorIs(t, acq, redlock.ErrNodeTimeout)
	assert.NotErrorIs(t, acq, context.DeadlineExceeded)
	assert.NotErrorIs(t, acq, lockbridge.ErrNotHeld)
	assert.Equal(t, []int{3, 4}, acq.Indexes(redlock.Failed))
	assert.Equal(t, []int{1, 2}, acq.Indexes(redlock.Taken))
	assert.Nil(t, acq.Indexes(redlock.Expired))

	// Refresh: 1 ok + 2 failed could still be a majority: undecided.
	ref := redlock.WithOp(redlock.OpRefresh, &redlock.QuorumError{Key: "k", Need: 3, Got: 1, Nodes: nodes})
	assert.NotErrorIs(t, ref, lockbridge.ErrNotHeld)
	assert.NotErrorIs(t, ref, lockbridge.ErrNotObtained)
	assert.ErrorIs(t, ref, refused)
	assert.Contains(t, ref.Error(), `redlock: refresh of lock "k" failed: 1 of 5 nodes refreshed, need 3: `)
	// 1 ok + 1 failed cannot: lost.
	lost := append([]redlock.NodeResult(nil), nodes...)
	lost[4] = redlock.NodeResult{Index: 4, Status: redlock.Expired}
	un := redlock.WithOp(redlock.OpUnlock, &redlock.QuorumError{Key: "k", Need: 3, Got: 1, Nodes: lost})
	assert.ErrorIs(t, un, lockbridge.ErrNotHeld)
	assert.Contains(t, un.Error(), `redlock: unlock of lock "k" failed: 1 of 5 nodes released, need 3: `)
	assert.Contains(t, un.Error(), `node 4: expired`)

	assert.Equal(t, "ok taken expired failed Status(9)",
		fmt.Sprint(redlock.OK, redlock.Taken, redlock.Expired, redlock.Failed, redlock.Status(9)))
}

// A Redis error reply from the nodes is a misconfiguration, not a lock held
// by another: the error does not wrap ErrNotObtained, so Lock stops at once.
func TestRefusedIsNotNotObtained(t *testing.T) {
	e := redlock.WithOp(redlock.OpAcquire, &redlock.QuorumError{Key: "k", Need: 2, Got: 0, Nodes: []redlock.NodeResult{
		{Index: 0, Status: redlock.Failed, Err: driver.ReplyError("NOPERM this user has no permissions")},
		{Index: 1, Status: redlock.Failed, Err: driver.ReplyError("NOPERM this user has no permissions")},
		{Index: 2, Status: redlock.Taken},
	}})
	assert.False(t, errors.Is(e, lockbridge.ErrNotObtained))
	assert.True(t, driver.HasPrefix(e, "NOPERM"))

	e.Nodes[0] = redlock.NodeResult{Index: 0, Status: redlock.Failed, Err: redlock.ErrNodeTimeout}
	e.Nodes[1] = redlock.NodeResult{Index: 1, Status: redlock.Taken}
	assert.True(t, errors.Is(e, lockbridge.ErrNotObtained), "held by others and a timeout: wait and retry")
}

func TestZeroLockerIsInvalid(t *testing.T) {
	var l redlock.Locker
	_, err := l.TryLock(context.Background(), "k", time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}
