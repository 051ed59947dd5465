package goredis_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/adaptertest"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// A cluster client that may not resend (MaxRedirects -1) still follows a
// resharding: the slot of a lock moves to another master after the client
// read the slot map, the first command gets MOVED, which Redis sends before
// running it, and the adapter sends it to the new owner.
func TestFaultClusterFollowsMovedWithoutResends(t *testing.T) {
	cl := redistest.StartCluster(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), MaxRetries: -1, MaxRedirects: -1})
	defer rdb.Close()
	c := goredis.New(rdb)
	ctx := context.Background()
	key := "moved:lock"
	l := modern.New(c)
	lk, err := l.TryLock(ctx, key, time.Second) // the client now knows the slot map
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))

	target := cl.MoveEmptySlot(t, keyslot.Of(key))

	lk, err = l.TryLock(ctx, key, time.Second)
	require.NoError(t, err, "the adapter followed MOVED")
	direct := redis.NewClient(&redis.Options{Addr: target.Addr(), MaxRetries: -1})
	defer direct.Close()
	v, ok, err := goredis.New(direct).Get(ctx, key)
	require.NoError(t, err)
	assert.True(t, ok, "the lock is on the slot's new owner")
	assert.Equal(t, lk.Token(), v)
	require.NoError(t, lk.Unlock(ctx))
}

// Slots moving with their keys while locks are in use: the adapter follows
// MOVED, ASK (with ASKING) and TRYAGAIN, a waiting Lock keeps waiting, and
// release notices follow the slot (adaptertest.Reshard).
func TestFaultReshard(t *testing.T) {
	adaptertest.Reshard(t, adaptertest.ClusterFactory{
		New: func(t *testing.T, addrs []string) driver.Client {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, MaxRedirects: -1})
			t.Cleanup(func() { _ = c.Close() })
			return goredis.New(c)
		},
		NewVia: func(t *testing.T, addrs []string, via func(string) string) driver.Client {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, MaxRedirects: -1,
				Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, network, via(addr))
				}})
			t.Cleanup(func() { _ = c.Close() })
			return goredis.New(c)
		},
	})
}
