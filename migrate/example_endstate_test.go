package migrate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

// After the migration, a new service may take the fleet's locks with a
// plain modern.Locker on the derived key: it is the lock a migrate.Locker
// takes at modern (docs/migration.md, The end state).
func ExampleLocker_Keys_endState() {
	// An in-process Redis (miniredis), so the example runs as pasted: in
	// your code, your server's address.
	mr, err := miniredis.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	mr.ClockTTL(true)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	defer rdb.Close()
	c := goredis.New(rdb)
	ctx := context.Background()

	fleet := migrate.New(c, migrate.WithPhase(migrate.PhaseModern))
	_, key, _ := fleet.Keys("orders:77")
	fmt.Println("derived key:", key)

	held, _ := fleet.TryLock(ctx, "orders:77", 10*time.Second)
	_, err = modern.New(c).TryLock(ctx, key, 10*time.Second)
	fmt.Println("plain locker while the fleet holds:", err != nil)
	_ = held.Unlock(ctx)

	lock, err := modern.New(c).TryLock(ctx, key, 10*time.Second)
	fmt.Println("plain locker after the release:", err == nil)
	_, err = fleet.TryLock(ctx, "orders:77", 10*time.Second)
	fmt.Println("fleet while the plain locker holds:", err != nil)
	_ = lock.Unlock(ctx)
	// Output:
	// derived key: {orders:77}:modern
	// plain locker while the fleet holds: true
	// plain locker after the release: true
	// fleet while the plain locker holds: true
}
