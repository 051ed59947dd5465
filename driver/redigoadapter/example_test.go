package redigoadapter_test

import (
	"context"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockbridge/lockbridge/driver/redigoadapter"
	"github.com/lockbridge/lockbridge/legacy"
)

// A redigo pool; PubSubPing keeps release-notification subscriptions alive
// below the pool's read timeout.
func ExampleNew() {
	pool := &redis.Pool{
		MaxIdle: 16,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", "localhost:6379", redis.DialReadTimeout(2*time.Second))
		},
	}
	_ = legacy.New(redigoadapter.New(pool, redigoadapter.PubSubPing(time.Second)))
}
