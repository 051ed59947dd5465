package control_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// exampleRedis starts an in-process Redis (miniredis), so the examples run
// as pasted: in your code, a client of your server. With ClockTTL, leases
// count down on the wall clock, as on a real server.
func exampleRedis() (driver.Client, func(), error) {
	mr, err := miniredis.Run()
	if err != nil {
		return nil, nil, err
	}
	mr.ClockTTL(true)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	return goredis.New(rdb), func() { _ = rdb.Close(); mr.Close() }, nil
}

// The operator's side of a migration: start the namespace, read its status,
// and step the fleet forward once every locker runs the namespace's phase.
// (These were migrate.NewController, migrate.Status, … before the split.)
func Example() {
	c, done, err := exampleRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	ctx := context.Background()

	// The in-memory server cannot report its eviction policy (INFO
	// memory); it never evicts, which the controller is told. On a real
	// server leave the option out.
	ctl, err := control.New(c, "example-orders", control.WithMaxmemoryPolicy("noeviction"))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Forced: the server was made a moment ago, so nothing can have run on
	// it. Unforced, Init waits until the namespace has shown no trace for
	// the init silence (lockbridge phase init --namespace example-orders).
	if _, err := ctl.Init(ctx, true); err != nil {
		fmt.Println(err)
		return
	}

	// A service's locker joins the fleet (in its own process, in real life).
	locker := migrate.New(c, migrate.WithPhaseFrom("example-orders"))
	defer locker.Close(ctx)
	if _, err := locker.Phase(ctx); err != nil {
		fmt.Println(err)
		return
	}

	st, err := ctl.Status(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	next, _ := st.Phase.Next()
	fmt.Println("at", st.Phase, "next", next, "safe:", st.Safe(), "live lockers:", st.Live[migrate.PhaseLegacy])

	step, err := ctl.Advance(ctx, false)
	fmt.Println(step.From, "->", step.To, err)
	// Output:
	// at legacy next dual-write safe: true live lockers: 1
	// legacy -> dual-write <nil>
}

// Advance refuses a step that is not safe yet, saying why in Blockers: here
// the quiet period, which the fleet must run dual-write for before
// dual-read (to meet any legacy-only locker left).
func ExampleController_Advance_refused() {
	c, done, err := exampleRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	ctx := context.Background()
	ctl, err := control.New(c, "example-orders", control.WithMaxmemoryPolicy("noeviction"),
		control.WithQuietPeriod(time.Hour))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := ctl.Init(ctx, true); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := ctl.Advance(ctx, false); err != nil { // legacy -> dual-write: no locker runs yet
		fmt.Println(err)
		return
	}

	_, err = ctl.Advance(ctx, false)
	fmt.Println("refused:", errors.Is(err, control.ErrUnsafeStep))
	var unsafe *control.UnsafeStepError
	if errors.As(err, &unsafe) {
		for _, b := range unsafe.Blockers {
			fmt.Println("blocker:", b.Kind)
		}
	}
	// Output:
	// refused: true
	// blocker: quiet-period
}
