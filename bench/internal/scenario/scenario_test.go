package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/monitor"
	"github.com/lockbridge/lockbridge/bench/internal/redisserver"
	"github.com/lockbridge/lockbridge/bench/internal/scenario"
)

func locker(t *testing.T, addr string, im impls.Impl) impls.Locker {
	t.Helper()
	c := impls.NewClient(addr)
	t.Cleanup(func() { _ = c.Close() })
	l, err := im.New(impls.On(c), impls.Recommended)
	require.NoError(t, err)
	if cl, ok := l.(impls.Closer); ok {
		t.Cleanup(cl.Close)
	}
	return l
}

// TestPaired: both lockers ran their cycles (each released its key) and
// both means are times.
func TestPaired(t *testing.T) {
	srv, err := redisserver.Start()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a, b := locker(t, srv.Addr(), impls.Floor), locker(t, srv.Addr(), impls.Modern)
	ctx := context.Background()
	for _, first := range []bool{true, false} {
		an, bn, err := scenario.Paired(ctx, a, b, "pa", "pb", 20, first)
		require.NoError(t, err)
		require.Positive(t, an)
		require.Positive(t, bn)
	}
	conn, err := monitor.Dial(srv.Addr())
	require.NoError(t, err)
	defer conn.Close()
	n, err := conn.Do("EXISTS", "pa", "pb")
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "every cycle released its key")
}

// TestHandoffOneLockerEach: waiters each on a locker of its own hand the
// key over without ever being inside together.
func TestHandoffOneLockerEach(t *testing.T) {
	srv, err := redisserver.Start()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	var ls []impls.Locker
	for i := 0; i < 4; i++ {
		ls = append(ls, locker(t, srv.Addr(), impls.Modern))
	}
	r, err := scenario.Handoff(context.Background(), ls, "h", scenario.HandoffConfig{Workers: 4, MaxCycles: 50,
		Hold: 50 * time.Microsecond, Stagger: 10 * time.Millisecond})
	require.NoError(t, err)
	require.GreaterOrEqual(t, r.Cycles, 50)
	require.Zero(t, r.Violations)
}
