package goredis_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/modern"
)

// A go-redis client with retries off, under a modern lock.
// ContextTimeoutEnabled lets go-redis apply context deadlines itself, on
// the caller's goroutine.
func ExampleNew() {
	// An in-process Redis (miniredis), so the example runs as pasted: in
	// your code, your server's address. With ClockTTL, leases count down on
	// the wall clock, as on a real server.
	mr, err := miniredis.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	mr.ClockTTL(true)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer rdb.Close()

	locker := modern.New(goredis.New(rdb))
	ctx := context.Background()
	lock, err := locker.TryLock(ctx, "report:daily", 30*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("locked", lock.Key())
	fmt.Println("unlock:", lock.Unlock(ctx))
	// Output:
	// locked report:daily
	// unlock: <nil>
}

// The other go-redis clients: a Redis Cluster (keys of one lock share a
// slot; notifications use sharded pub/sub), a Ring, or a Sentinel failover
// client — each with retries off, and a cluster with redirects off too (the
// adapter follows MOVED itself). miniredis serves none of these, so this
// example only compiles: it needs your cluster's and Sentinels' addresses.
func ExampleNew_cluster() {
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"node1:7000", "node2:7000", "node3:7000"},
		MaxRetries: -1, MaxRedirects: -1})
	defer cluster.Close()
	failover := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster",
		SentinelAddrs: []string{"sentinel:26379"}, MaxRetries: -1})
	defer failover.Close()

	_ = modern.New(goredis.New(cluster))
	_ = modern.New(goredis.New(failover))
}

// go-redis resends a command whose reply was lost unless told not to, and a
// resent release can delete the next holder's lock: Check says so at
// start-up, and the Client New returns for it refuses every call. (No
// server is needed: Check only reads the options.)
func ExampleCheck() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"}) // go-redis's default MaxRetries: 3
	defer rdb.Close()
	fmt.Println(goredis.Check(rdb))
	// Output:
	// goredis: lockbridge: invalid argument: the client resends a command whose reply was lost (MaxRetries 3): create it with MaxRetries: -1
}
