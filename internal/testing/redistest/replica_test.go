package redistest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplicated: the replica syncs, lags while paused, and after a
// failover serves writes with what it had received.
func TestReplicated(t *testing.T) {
	t.Parallel()
	r := StartReplicated(t)
	_, err := do(t, r.Primary.Addr(), "SET", "a", "1")
	require.NoError(t, err)
	r.Sync(t)
	v, err := do(t, r.Replica.Addr(), "GET", "a")
	require.NoError(t, err)
	require.Equal(t, "1", v)
	_, err = do(t, r.Replica.Addr(), "SET", "x", "1")
	require.ErrorContains(t, err, "READONLY")

	r.Detach(t)
	_, err = do(t, r.Primary.Addr(), "SET", "a", "2")
	require.NoError(t, err)
	r.Failover(t)

	v, err = do(t, r.Replica.Addr(), "GET", "a")
	require.NoError(t, err)
	require.Equal(t, "1", v, "the detached replica missed the last write")
	_, err = do(t, r.Replica.Addr(), "SET", "a", "3")
	require.NoError(t, err, "the promoted replica takes writes")
	require.Error(t, ping(r.Primary.Addr(), probeTimeout), "the old primary is down")
}

// TestReplicatedRejoin: after a failover the old primary comes back empty
// as a replica of the new one, and a second failover goes the other way.
func TestReplicatedRejoin(t *testing.T) {
	t.Parallel()
	r := StartReplicated(t)
	first, second := r.Primary, r.Replica
	_, err := do(t, first.Addr(), "SET", "a", "1")
	require.NoError(t, err)
	r.Sync(t)
	r.Detach(t)
	_, err = do(t, first.Addr(), "SET", "lost", "1")
	require.NoError(t, err)
	r.Failover(t)
	r.Rejoin(t)
	require.Same(t, second, r.Primary)
	require.Same(t, first, r.Replica)
	v, err := do(t, first.Addr(), "GET", "lost")
	require.NoError(t, err)
	require.Nil(t, v, "the rejoined server holds the new primary's data, not its own")
	_, err = do(t, second.Addr(), "SET", "b", "2")
	require.NoError(t, err)
	r.Sync(t)
	v, err = do(t, first.Addr(), "GET", "b")
	require.NoError(t, err)
	require.Equal(t, "2", v)

	r.Failover(t)
	r.Rejoin(t)
	require.Same(t, first, r.Primary)
	v, err = do(t, first.Addr(), "GET", "b")
	require.NoError(t, err)
	require.Equal(t, "2", v)
	_, err = do(t, first.Addr(), "SET", "c", "3")
	require.NoError(t, err)
	r.Sync(t)
	v, err = do(t, second.Addr(), "GET", "c")
	require.NoError(t, err)
	require.Equal(t, "3", v)
}
