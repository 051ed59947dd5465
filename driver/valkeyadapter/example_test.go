package valkeyadapter_test

import (
	"fmt"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockbridge/lockbridge/driver/valkeyadapter"
	"github.com/lockbridge/lockbridge/modern"
)

// Any client valkey.NewClient returns: a single server, a Redis Cluster
// (keys of one lock share a slot; notifications use sharded pub/sub) or a
// Sentinel-managed primary.
func ExampleNew() {
	single, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"localhost:6379"}})
	if err != nil {
		return
	}
	defer single.Close()
	cluster, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"node1:7000", "node2:7000", "node3:7000"}})
	if err != nil {
		return
	}
	defer cluster.Close()
	sentinel, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"sentinel:26379"},
		Sentinel: valkey.SentinelOption{MasterSet: "mymaster"}})
	if err != nil {
		return
	}
	defer sentinel.Close()
	_ = modern.New(valkeyadapter.New(single))
	_ = modern.New(valkeyadapter.New(cluster))
	_ = modern.New(valkeyadapter.New(sentinel))
}

// A client built with ConnLifetime sends a command again when its
// connection expires before the reply came: the adapter refuses it. (No
// server is needed to see it: ForceSingleClient returns the client even
// though nothing listens on port 1.)
func ExampleCheck() {
	c, _ := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"127.0.0.1:1"},
		ForceSingleClient: true, ConnLifetime: time.Hour})
	defer c.Close()
	fmt.Println(valkeyadapter.Check(c))
	// Output:
	// valkeyadapter: lockbridge: invalid argument: the client was built with ConnLifetime: when a connection's lifetime ends under a command whose reply has not come, the client sends the command again on a new connection; build it without ConnLifetime
}
