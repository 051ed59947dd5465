package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/legacy"
)

// Take a lock that Java services using the SETNX + GETSET timestamp lock on
// the same name respect, and release it.
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
	locker := legacy.New(goredis.New(rdb)) // milliseconds, +1, raw key, decimal value

	ctx := context.Background()
	lock, err := locker.TryLock(ctx, "lock:order:42", 30*time.Second)
	if errors.Is(err, lockbridge.ErrNotObtained) {
		fmt.Println("someone else holds it")
		return
	} else if err != nil {
		fmt.Println("redis:", err)
		return
	}

	// The value is what the Java side writes: the expiry in ms, as decimal.
	stored, _ := rdb.Get(ctx, "lock:order:42").Result()
	fmt.Println(stored == lock.Token(), len(stored))

	// Anyone else, Go or Java, is refused until we unlock or the lease ends.
	_, err = locker.TryLock(ctx, "lock:order:42", 30*time.Second)
	fmt.Println(errors.Is(err, lockbridge.ErrNotObtained))

	fmt.Println(lock.Unlock(ctx))
	// Output:
	// true 13
	// true
	// <nil>
}

// Wait for a lock until a deadline. A holder that crashed without
// unlocking is taken over as soon as its lease ends.
func ExampleLocker_Lock() {
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
	locker := legacy.New(goredis.New(rdb))

	// A holder with a 200 ms lease that never unlocks.
	if _, err := locker.TryLock(context.Background(), "lock:report", 200*time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lock, err := locker.Lock(ctx, "lock:report", time.Minute)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("acquired", lock.Key())

	// A deadline that ends while waiting: the error says both why and that
	// the lock was not obtained. (A deadline that ends while an attempt is
	// on the wire gives lockbridge.ErrUnknownOutcome instead: that attempt
	// may have written the lock, which then expires on its own.)
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	patient := legacy.New(goredis.New(rdb), legacy.WithBackoff(lockbridge.LinearBackoff(time.Second, time.Second)))
	_, err = patient.Lock(short, "lock:report", time.Minute)
	fmt.Println(errors.Is(err, lockbridge.ErrNotObtained), errors.Is(err, context.DeadlineExceeded))

	fmt.Println(lock.Unlock(context.Background()))
	// Output:
	// acquired lock:report
	// true true
	// <nil>
}

// Share locks with a Java service on Spring Boot's default RedisTemplate,
// which JDK-serializes keys and values.
func Example_springDefaultTemplate() {
	opts := []legacy.Option{
		legacy.WithKeyCodec(legacy.KeyJavaString),
		legacy.WithValueCodec(legacy.ValueJavaString),
	}
	key, _ := legacy.KeyJavaString.Encode("lock:order")
	fmt.Printf("key   % x\n", key)
	fmt.Printf("value % x\n", legacy.ValueJavaString.Encode(1700000000001))

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
	locker := legacy.New(goredis.New(rdb), opts...)
	ctx := context.Background()
	lock, err := locker.TryLock(ctx, "lock:order", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lock.Unlock(ctx)
	stored, _ := rdb.Get(ctx, key).Result()
	expiry, _ := legacy.ValueJavaString.Decode(stored)
	fmt.Println(stored == lock.(*legacy.Lock).Value(), strconv.FormatInt(expiry, 10) == lock.Token())
	// Output:
	// key   ac ed 00 05 74 00 0a 6c 6f 63 6b 3a 6f 72 64 65 72
	// value ac ed 00 05 74 00 0d 31 37 30 30 30 30 30 30 30 30 30 30 31
	// true true
}

// Contend beside Java services that poll every 100 ms (the Spring lockers'
// default, jedis-lock's fixed interval): Lock waits as they do, so they keep
// their share of a contended lock.
func ExampleWithPollers() {
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
	locker := legacy.New(goredis.New(rdb), legacy.WithPollers(100*time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lock, err := locker.Lock(ctx, "lock:nightly", 30*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("acquired", lock.Key())
	fmt.Println(lock.Unlock(context.Background()))
	// Output:
	// acquired lock:nightly
	// <nil>
}
