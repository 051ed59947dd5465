package adaptertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// Factory makes the clients under test.
type Factory struct {
	// New returns a client for the single redis-server at addr. It should
	// close the client in t.Cleanup.
	New func(t *testing.T, addr string) driver.Client
	// NewCluster returns a client for the Redis Cluster whose nodes are at
	// addrs; nil when the adapter has no cluster client.
	NewCluster func(t *testing.T, addrs []string) driver.Client
}

// A JDK-serialized java.lang.String key, as Spring's default RedisTemplate
// writes "lock:order": binary bytes a client must pass through untouched.
const jdkKey = "\xac\xed\x00\x05t\x00\x0alock:order"

// A value with a NUL, a high byte and invalid UTF-8.
const binaryValue = "a\x00b\xff\xfe\r\n"

var (
	echoScript = driver.NewScript("adaptertest/echo.lua",
		"-- returns KEYS[1], ARGV[1], an integer, a nested array and a status\n"+
			"return {KEYS[1], ARGV[1], 42, {'x', 7}, redis.status_reply('OK')}")
	nilScript = driver.NewScript("adaptertest/nil.lua", "-- returns nil\nreturn false")
	getScript = driver.NewScript("adaptertest/get.lua", "-- returns GET KEYS[1]\nreturn redis.call('GET', KEYS[1])")
	twoKeys   = driver.NewScript("adaptertest/twokeys.lua",
		"-- sets both keys, returns the number set\nredis.call('SET', KEYS[1], ARGV[1]) redis.call('SET', KEYS[2], "+
			"ARGV[1]) return 2")
	publishScript = driver.NewScript("adaptertest/publish.lua",
		"-- publishes ARGV[2] on KEYS[1] with the command ARGV[1]; returns the receivers\n"+
			"return redis.call(ARGV[1], KEYS[1], ARGV[2])")
)

// Run runs the whole suite.
func Run(t *testing.T, f Factory) {
	t.Run("Single", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		c := f.New(t, srv.Addr())
		runCommon(t, c, false)
		t.Run("LiteralCommands", func(t *testing.T) { literalCommands(t, c) })
		t.Run("ScriptFlushFallback", func(t *testing.T) { scriptFlush(t, c, c) })
	})
	t.Run("Faults", func(t *testing.T) {
		t.Parallel()
		faults(t, f)
	})
	t.Run("NoResend", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		p := faultproxy.Start(t, srv.Addr())
		noResend(t, f.New(t, p.Addr()), p)
	})
	t.Run("ErrorClasses", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		errorClasses(t, f.New(t, srv.Addr()))
	})
	if f.NewCluster != nil {
		t.Run("Cluster", func(t *testing.T) {
			t.Parallel()
			cl := redistest.StartCluster(t)
			c := f.NewCluster(t, cl.Addrs())
			require.True(t, c.Cluster(), "a cluster client must report Cluster()")
			runCommon(t, c, true)
			t.Run("KeysOnDifferentSlots", func(t *testing.T) { clusterSlots(t, c) })
			t.Run("IdleShardConnectionsClose", func(t *testing.T) {
				var nodes []driver.Client
				for _, n := range cl.Nodes() {
					nodes = append(nodes, f.New(t, n.Addr()))
				}
				idleShards(t, c, nodes)
			})
			t.Run("ScriptFlushFallback", func(t *testing.T) {
				// SCRIPT FLUSH on every node, then EVALSHA must fall back.
				for _, n := range cl.Nodes() {
					nc := f.New(t, n.Addr())
					_, err := nc.Do(context.Background(), "SCRIPT", "FLUSH")
					require.NoError(t, err)
				}
				scriptFlush(t, c, nil)
			})
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// k makes a key unique to the running test.
func k(t *testing.T, name string) string { return t.Name() + ":" + name }

func runCommon(t *testing.T, c driver.Client, cluster bool) {
	t.Run("NilReplies", func(t *testing.T) { nilReplies(t, c, cluster) })

	t.Run("ReplyTypes", func(t *testing.T) { replyTypes(t, c, cluster) })

	t.Run("JavaCommands", func(t *testing.T) { javaCommands(t, c, cluster) })

	t.Run("SetNXPX", func(t *testing.T) { setNXPX(t, c, cluster) })

	t.Run("BinarySafe", func(t *testing.T) { binarySafe(t, c, cluster) })

	t.Run("WrongType", func(t *testing.T) { wrongType(t, c, cluster) })

	t.Run("CancelledContext", func(t *testing.T) { cancelledContext(t, c, cluster) })

	t.Run("PubSub", func(t *testing.T) { pubSub(t, c, cluster) })
	t.Run("IdleSubscriptionSurvives", func(t *testing.T) { idleSubscriptionSurvives(t, c, cluster) })
}
