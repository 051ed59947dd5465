package rueidisadapter_test

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/adaptertest"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// A resharding: the slot of a lock moves to another master after the
// client read the slot map; the acquire gets MOVED, which Redis sends
// before running it, and rueidis sends it to the new owner.
func TestFaultClusterFollowsMovedWithoutResends(t *testing.T) {
	cl := redistest.StartCluster(t)
	l := modern.New(rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: cl.Addrs()})))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "moved:lock"
	lk, err := l.TryLock(ctx, key, time.Second) // the client now knows the slot map
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))

	target := cl.MoveEmptySlot(t, keyslot.Of(key))

	lk, err = l.TryLock(ctx, key, time.Second)
	require.NoError(t, err, "MOVED was followed")
	direct := rueidisadapter.New(client(t,
		rueidis.ClientOption{InitAddress: []string{target.Addr()}, ForceSingleClient: true}))
	v, ok, err := direct.Get(ctx, key)
	require.NoError(t, err)
	assert.True(t, ok, "the lock is on the slot's new owner")
	assert.Equal(t, lk.Token(), v)
	require.NoError(t, lk.Unlock(ctx))
}

// Slots moving with their keys while locks are in use: rueidis follows
// MOVED and ASK, the adapter TRYAGAIN, a waiting Lock keeps waiting, and
// release notices follow the slot (adaptertest.Reshard).
func TestFaultReshard(t *testing.T) {
	adaptertest.Reshard(t, adaptertest.ClusterFactory{
		New: func(t *testing.T, addrs []string) driver.Client {
			return rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: addrs}))
		},
		NewVia: func(t *testing.T, addrs []string, via func(string) string) driver.Client {
			return rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: addrs,
				DialCtxFn: func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
					return d.DialContext(ctx, "tcp", via(addr))
				}}))
		},
	})
}
