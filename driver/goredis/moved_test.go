package goredis_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/protocol/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/resp"
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

	slot := keyslot.Of(key)
	nodes := cl.Nodes()
	ids := make([]string, len(nodes))
	owner := -1
	for i, n := range nodes {
		conn, err := resp.Dial(n.Addr(), 5*time.Second)
		require.NoError(t, err)
		id, err := conn.Do("CLUSTER", "MYID")
		require.NoError(t, err)
		ids[i] = id.(string)
		conn.Close()
	}
	// The owner is the node whose slot range holds the slot: ask any node.
	conn, err := resp.Dial(nodes[0].Addr(), 5*time.Second)
	require.NoError(t, err)
	slots, err := conn.Do("CLUSTER", "SLOTS")
	require.NoError(t, err)
	conn.Close()
	for _, r := range slots.([]any) {
		rr := r.([]any)
		if int(rr[0].(int64)) <= slot && slot <= int(rr[1].(int64)) {
			port := rr[2].([]any)[1].(int64)
			for i, n := range nodes {
				if n.Addr() == "127.0.0.1:"+strconv.FormatInt(port, 10) {
					owner = i
				}
			}
		}
	}
	require.GreaterOrEqual(t, owner, 0)
	target := (owner + 1) % len(nodes)
	// The slot is empty: hand it over on every node.
	for _, i := range []int{target, owner, (owner + 2) % len(nodes)} {
		conn, err := resp.Dial(nodes[i].Addr(), 5*time.Second)
		require.NoError(t, err)
		_, err = conn.Do("CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", ids[target])
		require.NoError(t, err)
		conn.Close()
	}
	lk, err = l.TryLock(ctx, key, time.Second)
	require.NoError(t, err, "the adapter followed MOVED")
	direct := redis.NewClient(&redis.Options{Addr: nodes[target].Addr(), MaxRetries: -1})
	defer direct.Close()
	v, ok, err := goredis.New(direct).Get(ctx, key)
	require.NoError(t, err)
	assert.True(t, ok, "the lock is on the slot's new owner")
	assert.Equal(t, lk.Token(), v)
	require.NoError(t, lk.Unlock(ctx))
}
