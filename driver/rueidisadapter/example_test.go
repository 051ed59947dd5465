package rueidisadapter_test

import (
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/modern"
)

// Any client rueidis.NewClient returns: a single server, a Redis Cluster
// (keys of one lock share a slot; notifications use sharded pub/sub) or a
// Sentinel-managed primary.
func ExampleNew() {
	single, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"localhost:6379"}})
	if err != nil {
		return
	}
	defer single.Close()
	cluster, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"node1:7000", "node2:7000", "node3:7000"}})
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
	_ = modern.New(rueidisadapter.New(single))
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
