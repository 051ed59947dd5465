package modern_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/modern"
)

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
	locker := modern.New(goredis.New(rdb))
	ctx := context.Background()

	lock, err := locker.TryLock(ctx, "report:daily", 30*time.Second)
	if errors.Is(err, lockbridge.ErrNotObtained) {
		fmt.Println("someone else is writing the report")
		return
	}
	if err != nil {
		fmt.Println("redis:", err)
		return
	}
	defer lock.Unlock(ctx)

	// A second attempt, while we hold it, fails and says for how long the
	// holder has it.
	_, err = locker.TryLock(ctx, "report:daily", 30*time.Second)
	var held *lockbridge.NotObtainedError
	if errors.As(err, &held) {
		fmt.Println("busy for another", held.HolderTTL.Round(time.Second))
	}

	fmt.Println("writing the report")
	// Output:
	// busy for another 30s
	// writing the report
}

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
	locker := modern.New(goredis.New(rdb))
	ctx := context.Background()

	holder, _ := locker.TryLock(ctx, "invoice:42", time.Minute)

	// Wait at most 100 ms for the lock.
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = locker.Lock(wctx, "invoice:42", time.Minute)
	cancel()
	// The error wraps the deadline, and ErrNotObtained — or
	// ErrUnknownOutcome when the deadline cut an attempt short: sent, that
	// attempt may still take the lock (for its ttl, held by no one).
	gaveUp := errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, lockbridge.ErrUnknownOutcome)
	fmt.Println(gaveUp, errors.Is(err, context.DeadlineExceeded))

	// The holder releases while we wait: the release notification wakes us
	// at once (the holder had a minute left; we would not poll that long).
	go func() {
		time.Sleep(50 * time.Millisecond)
		holder.Unlock(ctx)
	}()
	wctx, cancel = context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lock, err := locker.Lock(wctx, "invoice:42", time.Minute)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lock.Unlock(ctx)
	fmt.Println("got it")
	// Output:
	// true true
	// got it
}

func ExampleWithAutoRefresh() {
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
	locker := modern.New(goredis.New(rdb), modern.WithAutoRefresh())
	ctx := context.Background()

	// A short lease, refreshed every 100 ms for as long as we hold the lock.
	lock, err := locker.Lock(ctx, "migration:users", 300*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lock.Unlock(ctx)

	// Someone deletes the key (an operator, a bug elsewhere): the next
	// refresh finds the lock gone.
	time.AfterFunc(time.Second, func() { rdb.Del(ctx, "migration:users") })

	for batch := 1; ; batch++ {
		select {
		case <-lock.Done():
			// Stop before doing anything else a lock should protect.
			fmt.Println("stopped:", errors.Is(lock.Err(), lockbridge.ErrLost))
			var nh *lockbridge.NotHeldError
			if errors.As(lock.Err(), &nh) {
				fmt.Println("reason:", nh.Reason)
			}
			return
		case <-time.After(50 * time.Millisecond):
			// migrate one batch, still holding the lock
		}
	}
	// Output:
	// stopped: true
	// reason: gone
}

func ExampleWithFencing() {
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
	locker := modern.New(goredis.New(rdb), modern.WithFencing())
	ctx := context.Background()

	var last int64
	for i := 0; i < 3; i++ {
		lock, err := locker.Lock(ctx, "ledger", 10*time.Second)
		if err != nil {
			fmt.Println(err)
			return
		}
		// Send the fence with every write; the storage rejects a write
		// whose fence is below the highest it has seen, so a holder that
		// paused past its lease cannot overwrite its successor's work.
		fence := lock.(*modern.Lock).Fence()
		fmt.Println("fence above the last:", fence > last)
		last = fence
		lock.Unlock(ctx)
	}
	// Output:
	// fence above the last: true
	// fence above the last: true
	// fence above the last: true
}
