package goredis_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/adaptertest"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
)

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			t.Cleanup(func() { _ = c.Close() })
			return goredis.New(c)
		},
		NewCluster: func(t *testing.T, addrs []string) driver.Client {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, MaxRedirects: -1})
			t.Cleanup(func() { _ = c.Close() })
			return goredis.New(c)
		},
	})
}

// With ContextTimeoutEnabled the adapter leaves deadlines to go-redis.
func TestConformanceContextTimeouts(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = c.Close() })
			return goredis.New(c)
		},
	})
}

// A Ring (client-side sharding) of one shard: the adapter's Ring paths —
// pub/sub grouped by hash tag, the first channel choosing the shard.
func TestConformanceRing(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			c := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"shard": addr}, MaxRetries: -1})
			t.Cleanup(func() { _ = c.Close() })
			return goredis.New(c)
		},
	})
}

func TestConformanceRESP2(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1})
			t.Cleanup(func() { _ = c.Close() })
			return goredis.New(c)
		},
	})
}
