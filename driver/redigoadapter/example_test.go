package redigoadapter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/lockbridge/lockbridge/driver/redigoadapter"
	"github.com/lockbridge/lockbridge/legacy"
)

// A redigo pool under the legacy lock; PubSubPing keeps release-notification
// subscriptions alive below the pool's read timeout.
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
	addr := mr.Addr()
	pool := &redis.Pool{
		MaxIdle: 16,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr, redis.DialReadTimeout(2*time.Second))
		},
	}
	defer pool.Close()

	locker := legacy.New(redigoadapter.New(pool, redigoadapter.PubSubPing(time.Second)))
	ctx := context.Background()
	lock, err := locker.TryLock(ctx, "lock:order:42", 30*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The value is what the Java services write: the expiry in ms, as decimal.
	stored, _ := mr.Get("lock:order:42")
	fmt.Println("locked", lock.Key(), stored == lock.Token())
	fmt.Println("unlock:", lock.Unlock(ctx))
	// Output:
	// locked lock:order:42 true
	// unlock: <nil>
}
