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
