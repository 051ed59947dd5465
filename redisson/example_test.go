package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/redisson"
)

// An owner takes the lock a Java service takes with
// redisson.getLock("orders").lock(): same hash, same watchdog.
func ExampleOwner_Lock() {
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
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	defer rdb.Close()
	locker := redisson.New(goredis.New(rdb), redisson.WithWatchdog())
	ctx := context.Background()

	owner := locker.NewOwner() // one per task, as Java has one thread
	lock, err := owner.Lock(ctx, "orders", redisson.DefaultWatchdogTimeout)
	if err != nil {
		fmt.Println("not locked:", err)
		return
	}
	// The same owner may take it again (Java's reentrant lock()): each
	// hold is unlocked once.
	again, err := owner.TryLock(ctx, "orders", redisson.DefaultWatchdogTimeout)
	if err != nil {
		fmt.Println("not locked:", err)
		return
	}
	n, _ := owner.HoldCount(ctx, "orders")
	fmt.Println("holds:", n)
	_ = again.Unlock(ctx)
	_ = lock.Unlock(ctx)
	locked, _ := locker.IsLocked(ctx, "orders")
	fmt.Println("locked:", locked)
	// Output:
	// holds: 2
	// locked: false
}

func ExampleLocker_TryLock() {
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
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	defer rdb.Close()
	locker := redisson.New(goredis.New(rdb))
	ctx := context.Background()

	holder, _ := locker.TryLock(ctx, "report", 10*time.Second)
	_, err = locker.TryLock(ctx, "report", 10*time.Second)
	var no *lockbridge.NotObtainedError
	if errors.As(err, &no) && errors.Is(err, lockbridge.ErrNotObtained) {
		fmt.Println("held by another owner")
	}
	_ = holder.Unlock(ctx)
	// Output: held by another owner
}
