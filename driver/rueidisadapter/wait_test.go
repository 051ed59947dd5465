package rueidisadapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

var setScript = driver.NewScript("rueidisadapter_test/set.lua",
	"-- sets KEYS[1] to ARGV[1]\nreturn redis.call('SET', KEYS[1], ARGV[1])")

// EvalWait runs the script and WAIT on one dedicated connection: WAIT
// counts the replicas that acknowledged that connection's writes.
func TestEvalWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Run("Replicated", func(t *testing.T) {
		r := redistest.StartReplicated(t)
		c := rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: []string{r.Primary.Addr()}}))
		w, ok := c.(driver.Waiter)
		require.True(t, ok)
		v, acked, err := w.EvalWait(ctx, setScript, []string{"k"}, 1, 5*time.Second, "v")
		require.NoError(t, err)
		assert.Equal(t, "OK", v)
		assert.Equal(t, int64(1), acked, "the replica acknowledged the script's write")
	})
	t.Run("Cluster", func(t *testing.T) {
		cl := redistest.StartCluster(t)
		c := rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: cl.Addrs()}))
		for _, key := range []string{"a", "b", "c", "{x}:lock"} { // keys on every master
			v, acked, err := c.(driver.Waiter).EvalWait(ctx, setScript, []string{key}, 0, 10*time.Millisecond, "v")
			require.NoError(t, err, key)
			assert.Equal(t, "OK", v)
			assert.Equal(t, int64(0), acked, "no replicas")
			got, _, err := c.Get(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, "v", got)
		}
	})
}
