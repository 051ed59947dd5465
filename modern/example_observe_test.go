package modern_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/modern"
)

// WithTelemetry's Logger hears what the Locker does in the background: here the
// auto-refresh finds the lock deleted behind its holder's back.
func ExampleWithTelemetry() {
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
	// Text records without the time, for a stable output.
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	locker := modern.New(goredis.New(rdb), modern.WithAutoRefresh(),
		modern.WithTelemetry(lockbridge.Telemetry{Logger: log}))
	ctx := context.Background()

	lock, err := locker.TryLock(ctx, "example:logged", 300*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	rdb.Del(ctx, "example:logged") // an operator's mistake
	<-lock.Done()                  // closes first: the loss is logged just after
	fmt.Println("lost:", lock.Err() != nil)
	// Unordered output:
	// level=ERROR msg="lockbridge: lock lost" lockbridge.lock.system=modern lockbridge.lock.key=example:logged error="modern: lock lost: lock \"example:logged\" not held: it is gone"
	// lost: true
}
