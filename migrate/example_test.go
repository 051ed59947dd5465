package migrate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// A service locks by the Java fleet's name in whatever phase the namespace
// is at; the operator moves the phase with the Controller.
func Example() {
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
	c := goredis.New(rdb)
	ctx := context.Background()

	// Once per namespace, before any locker: start it at legacy. On a real
	// server, from a shell: lockbridge phase init --namespace example-orders
	// (it waits until the namespace has shown no trace for two minutes).
	// The in-memory server here was made a moment ago, so nothing can have
	// run on it: the example starts the namespace at once (forced). It
	// cannot report its eviction policy (INFO memory) either: it never
	// evicts, which the example declares.
	ctl, _ := control.New(c, "example-orders", control.WithMaxmemoryPolicy("noeviction"))
	_, _ = ctl.Init(ctx, true)

	locker := migrate.New(c,
		migrate.WithPhaseFrom("example-orders"),
		migrate.WithLegacy(legacy.WithKeyCodec(legacy.KeyRaw)))
	defer locker.Close(ctx)
	phase, _ := locker.Phase(ctx) // registers in the fleet at once
	fmt.Println("running", phase)

	lock, err := locker.TryLock(ctx, "orders:42", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	legacyKey, modernKey, _ := locker.Keys("orders:42")
	fmt.Println("holds", legacyKey, "(the Java services' key)")
	_ = lock.Unlock(ctx)

	step, err := ctl.Advance(ctx, false)
	fmt.Println(step.From, "->", step.To, err)
	fmt.Println("modern key:", modernKey)
	// Output:
	// running legacy
	// holds orders:42 (the Java services' key)
	// legacy -> dual-write <nil>
	// modern key: {orders:42}:modern
}
