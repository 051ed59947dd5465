package goredis_test

import (
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/modern"
)

// Any go-redis client: a single server, a Redis Cluster (keys of one lock
// share a slot; notifications use sharded pub/sub), a Ring, or a Sentinel
// failover client. ContextTimeoutEnabled lets go-redis apply context
// deadlines itself, on the caller's goroutine.
func ExampleNew() {
	single := redis.NewClient(&redis.Options{Addr: "localhost:6379", MaxRetries: -1, ContextTimeoutEnabled: true})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"node1:7000", "node2:7000", "node3:7000"},
		MaxRetries: -1, MaxRedirects: -1})
	failover := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{"sentinel:26379"}})

	_ = modern.New(goredis.New(single))
	_ = modern.New(goredis.New(cluster))
	_ = modern.New(goredis.New(failover))
}
