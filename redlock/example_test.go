package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredislib "github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/redlock"
)

// Five independent masters, one lock on a majority of them: granted while
// three answer, refused — with what each node answered — when only two do.
func Example() {
	// Five in-process Redis servers (miniredis), so the example runs as
	// pasted: in your code, your masters' addresses. With ClockTTL, leases
	// count down on the wall clock, as on a real server.
	names := []string{"redis-a", "redis-b", "redis-c", "redis-d", "redis-e"}
	var servers []*miniredis.Miniredis
	var clients []driver.Client
	for range names {
		mr, err := miniredis.Run()
		if err != nil {
			fmt.Println(err)
			return
		}
		defer mr.Close()
		mr.ClockTTL(true)
		rdb := goredislib.NewClient(&goredislib.Options{Addr: mr.Addr(), MaxRetries: -1})
		defer rdb.Close()
		servers = append(servers, mr)
		clients = append(clients, goredis.New(rdb))
	}
	locker := redlock.New(clients, redlock.WithNodeNames(names...), redlock.WithAutoRefresh())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// Two masters restarting (they answer every command with an error,
	// as a master loading its data does): three of five are a majority.
	const loading = "LOADING Redis is loading the dataset in memory"
	servers[3].SetError(loading)
	servers[4].SetError(loading)
	lock, err := locker.Lock(ctx, "invoice:42", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("locked", lock.Key(), "on", locker.Quorum(), "or more of", len(names))
	select {
	case <-lock.Done(): // lost: stop working, lock.Err() says why
		fmt.Println("lost:", lock.Err())
	case <-time.After(100 * time.Millisecond): // the work
	}
	fmt.Println("unlock:", lock.Unlock(ctx))

	// A third one restarting: no majority, and the error says who failed.
	servers[2].SetError(loading)
	_, err = locker.TryLock(ctx, "invoice:43", 10*time.Second)
	var qe *redlock.QuorumError
	if errors.As(err, &qe) {
		fmt.Printf("no majority: %d of %d nodes, need %d, failing: %v\n", qe.Got, len(qe.Nodes), qe.Need,
			qe.Indexes(redlock.Failed))
	}
	// Output:
	// locked invoice:42 on 3 or more of 5
	// unlock: <nil>
	// no majority: 2 of 5 nodes, need 3, failing: [2 3 4]
}
