// Command quickstart is the README's first program: a go-redis client with
// retries off, TryLock, Lock with a deadline, Unlock.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/modern"
)

func main() {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		addr = "localhost:6379"
	}
	if err := run(context.Background(), addr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string) error {
	// MaxRetries: -1 turns go-redis's resends off; lockbridge refuses a
	// client that would resend (a resent release can delete the next
	// holder's lock).
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	if err := goredis.Check(rdb); err != nil {
		return err
	}
	locker := modern.New(goredis.New(rdb))

	// TryLock: one attempt, no waiting.
	lock, err := locker.TryLock(ctx, "orders:42", 10*time.Second)
	if errors.Is(err, lockbridge.ErrNotObtained) {
		return fmt.Errorf("orders:42 is held by someone else: %w", err)
	}
	if err != nil {
		return err // lockbridge.ErrUnknownOutcome: the reply was lost
	}
	fmt.Println("TryLock: holding orders:42")

	// Lock waits while the key is held, as long as its context lets it:
	// always give it a deadline. Here the holder is ourselves, so it waits
	// out its second and gives up: ErrNotObtained, or ErrUnknownOutcome
	// when the deadline cut an attempt short (sent, it may still take the
	// key, until its lease ends).
	waitCtx, cancel := context.WithTimeout(ctx, time.Second)
	_, err = locker.Lock(waitCtx, "orders:42", 10*time.Second)
	cancel()
	gaveUp := errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, lockbridge.ErrUnknownOutcome)
	fmt.Println("Lock while held:", gaveUp)

	if err := lock.Unlock(ctx); err != nil {
		return err // a *lockbridge.NotHeldError when the lock was no longer ours
	}
	fmt.Println("Unlock: released")

	// Released: Lock takes it at once.
	waitCtx, cancel = context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lock, err = locker.Lock(waitCtx, "orders:42", 10*time.Second)
	if err != nil {
		return err
	}
	defer lock.Unlock(ctx)
	fmt.Println("Lock after the release: holding orders:42")
	return nil
}
