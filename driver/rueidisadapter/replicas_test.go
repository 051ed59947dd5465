package rueidisadapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// A standalone client with replicas sends to them only what SendToReplicas
// picks; the usual choice, read-only commands, never picks the adapter's,
// which are all built as writes: a lock's state is read on the primary even
// when the replica lags behind.
func TestStandaloneWithReplicas(t *testing.T) {
	r := redistest.StartReplicated(t)
	opt := rueidis.ClientOption{
		InitAddress:    []string{r.Primary.Addr()},
		Standalone:     rueidis.StandaloneOption{ReplicaAddress: []string{r.Replica.Addr()}},
		SendToReplicas: func(cmd rueidis.Completed) bool { return cmd.IsReadOnly() },
	}
	c := client(t, opt)
	require.NoError(t, rueidisadapter.Check(c))

	r.Detach(t) // the replica sees none of the writes below
	dc := rueidisadapter.New(c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ok, err := dc.SetNX(ctx, "lock", "1")
	require.NoError(t, err)
	require.True(t, ok)
	v, ok, err := dc.Get(ctx, "lock")
	require.NoError(t, err)
	assert.True(t, ok, "GET went to the primary")
	assert.Equal(t, "1", v)
}
