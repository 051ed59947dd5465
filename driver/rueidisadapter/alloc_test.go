package rueidisadapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// maxAllocsPerCycle bounds the heap allocations of one uncontended modern
// TryLock + Unlock through the adapter (defaults: no auto-refresh,
// notifications on). rueidis alone sends SET NX PX and EVALSHA with 2; the
// rest is the lock's own (the Lock, its token, the release channel's name,
// the release script's arguments and reply). Two allocations of headroom over the
// measured figure.
const maxAllocsPerCycle float64 = 7

// TestAllocsPerCycle keeps the allocations of a modern cycle on rueidis
// from growing unnoticed.
func TestAllocsPerCycle(t *testing.T) {
	srv := redistest.Start(t)
	l := modern.New(rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()},
		ForceSingleClient: true})))
	ctx := context.Background()
	var err error
	cycle := func() {
		if err != nil {
			return
		}
		var lk interface{ Unlock(context.Context) error }
		if lk, err = l.TryLock(ctx, "allocs", time.Minute); err == nil {
			err = lk.Unlock(ctx)
		}
	}
	cycle() // connect, load the scripts
	n := testing.AllocsPerRun(1000, cycle)
	require.NoError(t, err)
	t.Logf("%.0f allocations per cycle", n)
	assert.LessOrEqual(t, n, maxAllocsPerCycle+raceAllocs)
}

// BenchmarkModernCycle is an uncontended modern TryLock + Unlock through
// the adapter.
func BenchmarkModernCycle(b *testing.B) {
	srv := redistest.Start(b)
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr()}, ForceSingleClient: true})
	require.NoError(b, err)
	defer rc.Close()
	l := modern.New(rueidisadapter.New(rc))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lk, err := l.TryLock(ctx, "bench", time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if err := lk.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
