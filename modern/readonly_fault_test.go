package modern_test

import (
	"context"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// TestFaultReadOnlyClusterWaiterWoken: a go-redis ClusterClient with
// ReadOnly (as RouteByLatency and RouteRandomly imply) sends its SSUBSCRIBE
// to a replica of the key's shard; the release script, run on the primary,
// would count no subscriber (PUBSUB SHARDNUMSUB) and publish nothing, and
// the waiter, whose backoff is an hour, would never be woken. The goredis
// adapter subscribes on the slot's primary instead.
func TestFaultReadOnlyClusterWaiterWoken(t *testing.T) {
	cl := redistest.StartCluster(t)
	key := locktest.Key(t, "k")
	slot := keyslot.Of(key)
	node := 0
	switch {
	case slot > 10922:
		node = 2
	case slot > 5460:
		node = 1
	}
	replica := cl.AddReplica(t, node)
	ctx := locktest.Ctx(t)

	primary := locktest.GoRedisCluster(t, cl)
	pc := goredislib.NewClient(&goredislib.Options{Addr: cl.Addrs()[node]})
	defer pc.Close()
	require.Eventually(t, func() bool {
		// CLUSTER SLOTS as the cluster client reads it: per range, start,
		// end, then the primary and its replicas.
		slots, err := pc.Do(ctx, "CLUSTER", "SLOTS").Slice()
		if err != nil {
			return false
		}
		for _, r := range slots {
			if s, ok := r.([]any); ok && len(s) == 4 {
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond, "CLUSTER SLOTS lists the replica")
	ro := goredislib.NewClusterClient(&goredislib.ClusterOptions{Addrs: cl.Addrs(), MaxRetries: -1, MaxRedirects: -1,
		ReadOnly: true})
	t.Cleanup(func() { _ = ro.Close() })

	holder, err := modern.New(primary).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)

	slow := lockbridge.LinearBackoff(time.Hour, time.Hour)
	waiter := modern.New(goredis.New(ro), modern.WithBackoff(slow))
	got := make(chan error, 1)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	go func() {
		lk, err := waiter.Lock(wctx, key, time.Minute)
		if err == nil {
			err = lk.Unlock(context.Background())
		}
		got <- err
	}()
	ch := "{" + key + "}:released"
	rc := goredislib.NewClient(&goredislib.Options{Addr: replica.Addr()})
	defer rc.Close()
	require.Eventually(t, func() bool {
		n, err := pc.PubSubShardNumSub(ctx, ch).Result()
		return err == nil && n[ch] == 1
	}, 5*time.Second, time.Millisecond, "the waiter subscribed on the primary")
	n, err := rc.PubSubShardNumSub(ctx, ch).Result()
	require.NoError(t, err)
	require.Zero(t, n[ch], "not on the replica")
	time.Sleep(50 * time.Millisecond) // its attempt after the subscription is done
	require.NoError(t, holder.Unlock(ctx))
	require.NoError(t, <-got, "the waiter missed the release")
}
