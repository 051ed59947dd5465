package rueidisadapter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/modern"
)

// A rueidis client under a modern lock: a waiter is woken by the holder's
// release.
func ExampleNew() {
	// An in-process Redis (miniredis), so the example runs as pasted: in
	// your code, your server's address. With ClockTTL, leases count down on
	// the wall clock, as on a real server. miniredis has no client-side
	// caching, hence DisableCache; a real server needs no such option.
	mr, err := miniredis.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	mr.ClockTTL(true)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	locker := modern.New(rueidisadapter.New(c))
	ctx := context.Background()
	holder, err := locker.TryLock(ctx, "invoice:42", time.Minute)
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = holder.Unlock(ctx)
	}()
	// The holder had a minute left: the release notice wakes us at once.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lock, err := locker.Lock(wctx, "invoice:42", time.Minute)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("locked", lock.Key())
	fmt.Println("unlock:", lock.Unlock(ctx))
	// Output:
	// locked invoice:42
	// unlock: <nil>
}

// Any client rueidis.NewClient returns: a single server, a Redis Cluster (keys
// of one lock share a slot; notifications use sharded pub/sub) or a
// Sentinel-managed primary. miniredis serves neither a cluster nor a
// Sentinel, so this example only compiles: it needs your nodes' and
// Sentinels' addresses.
func ExampleNew_cluster() {
	cluster, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{"node1:7000", "node2:7000", "node3:7000"},
	})
	if err != nil {
		return
	}
	defer cluster.Close()
	sentinel, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"sentinel:26379"},
		Sentinel: rueidis.SentinelOption{MasterSet: "mymaster"}})
	if err != nil {
		return
	}
	defer sentinel.Close()
	_ = modern.New(rueidisadapter.New(cluster))
	_ = modern.New(rueidisadapter.New(sentinel))
}

// A client built with ConnLifetime sends a command again when its
// connection expires before the reply came: the adapter refuses it. (No
// server is needed to see it: ForceSingleClient returns the client even
// though nothing listens on port 1.)
func ExampleCheck() {
	c, _ := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:1"},
		ForceSingleClient: true, ConnLifetime: time.Hour})
	defer c.Close()
	fmt.Println(rueidisadapter.Check(c))
	// Output:
	// rueidisadapter: lockbridge: invalid argument: the client was built with ConnLifetime: when a connection's lifetime ends under a command whose reply has not come, the client sends the command again on a new connection; build it without ConnLifetime
}
