package redlock_test

import (
	"context"
	"errors"
	"log"
	"time"

	goredislib "github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/redlock"
)

// Five independent masters, one lock on a majority of them.
func Example() {
	addrs := []string{"redis-a:6379", "redis-b:6379", "redis-c:6379", "redis-d:6379", "redis-e:6379"}
	var clients []driver.Client
	for _, a := range addrs {
		clients = append(clients, goredis.New(goredislib.NewClient(&goredislib.Options{Addr: a, MaxRetries: -1})))
	}
	locker := redlock.New(clients, redlock.WithNodeNames(addrs...), redlock.WithAutoRefresh())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lock, err := locker.Lock(ctx, "invoice:42", 10*time.Second)
	if err != nil {
		var qe *redlock.QuorumError
		if errors.As(err, &qe) {
			log.Printf("no majority: %d of %d nodes, failing: %v", qe.Got, len(qe.Nodes), qe.Indexes(redlock.Failed))
		}
		return
	}
	defer lock.Unlock(context.Background())

	select {
	case <-lock.Done(): // lost: stop working, lock.Err() says why
	case <-time.After(time.Second): // the work
	}
}
