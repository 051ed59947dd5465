package redigoadapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockbridge/lockbridge/adaptertest"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/redigoadapter"
)

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			p := &redis.Pool{
				MaxIdle: 8,
				DialContext: func(ctx context.Context) (redis.Conn, error) {
					return redis.DialContext(ctx, "tcp", addr)
				},
			}
			t.Cleanup(func() { _ = p.Close() })
			return redigoadapter.New(p)
		},
	})
}

// A pool whose connections time out reads after 300 ms: subscriptions stay
// alive through the adapter's pings.
func TestConformanceWithReadTimeout(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			p := &redis.Pool{
				MaxIdle: 8,
				DialContext: func(ctx context.Context) (redis.Conn, error) {
					return redis.DialContext(ctx, "tcp", addr, redis.DialReadTimeout(300*time.Millisecond))
				},
			}
			t.Cleanup(func() { _ = p.Close() })
			return redigoadapter.New(p, redigoadapter.PubSubPing(100*time.Millisecond))
		},
	})
}
