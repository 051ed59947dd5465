package modern_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/modern"
)

// maxAllocsPerCycle bounds the heap allocations of one uncontended TryLock +
// Unlock (defaults: no auto-refresh, notifications on), by client. The
// go-redis bound is the performance goal: its own floor (SET NX PX, then
// EVALSHA of a compare-and-delete, sent with go-redis alone) allocates 20
// times, and a modern cycle may allocate at most 4 more. Each bound has one
// or two allocations of headroom over the measured figure, for a client's
// occasional background work.
var maxAllocsPerCycle = map[string]float64{
	"goredis": 23,
	"redigo":  15,
}

// TestAllocsPerCycle keeps the allocations of a modern cycle from growing
// unnoticed: a boxed argument, a closure or a copied reply on the path adds
// one per call.
func TestAllocsPerCycle(t *testing.T) {
	for _, tg := range locktest.Single(t) {
		t.Run(tg.Name, func(t *testing.T) {
			max, ok := maxAllocsPerCycle[tg.Name]
			require.True(t, ok, "no bound for %s", tg.Name)
			l := modern.New(tg.Client)
			ctx := context.Background()
			key := locktest.Key(t, "allocs")
			var err error
			cycle := func() {
				if err != nil {
					return
				}
				var lk interface{ Unlock(context.Context) error }
				if lk, err = l.TryLock(ctx, key, time.Minute); err == nil {
					err = lk.Unlock(ctx)
				}
			}
			cycle() // connect, load the scripts
			n := testing.AllocsPerRun(1000, cycle)
			require.NoError(t, err)
			t.Logf("%s: %.0f allocations per cycle", tg.Name, n)
			assert.LessOrEqual(t, n, max+raceAllocs, "allocations per TryLock + Unlock on %s", tg.Name)
		})
	}
}
