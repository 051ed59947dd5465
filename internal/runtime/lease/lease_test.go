package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The lease is local logic: these tests drive it with refresh callbacks.
// The lock packages test it end to end against real servers.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func done(l *lease.Lease, d time.Duration) bool {
	select { // a closed Done wins over a zero wait
	case <-l.Done():
		return true
	default:
	}
	select {
	case <-l.Done():
		return true
	case <-time.After(d):
		return false
	}
}

func TestEndAndDone(t *testing.T) {
	start := time.Now()
	l := lease.New("x", start, time.Second)
	assert.Equal(t, start.Add(time.Second), l.ExpiresAt())
	assert.Equal(t, time.Second, l.TTL())
	assert.False(t, l.Ended())
	assert.NoError(t, l.Err())
	ch := l.Done()
	assert.False(t, done(l, 0))
	assert.True(t, l.End(nil))
	assert.False(t, l.End(errors.New("late")), "the first End wins")
	assert.True(t, done(l, 0))
	<-ch
	assert.NoError(t, l.Err())

	// Done asked for only after the end is closed too.
	l2 := lease.New("x", start, time.Second)
	cause := errors.New("boom")
	assert.True(t, l2.Lose(cause))
	assert.True(t, done(l2, 0))
	assert.ErrorIs(t, l2.Err(), lockbridge.ErrLost)
	assert.ErrorIs(t, l2.Err(), cause)
	assert.Equal(t, "x: lock lost: boom", l2.Err().Error())
	l2.Extend(start.Add(time.Hour), time.Hour)
	assert.Equal(t, start.Add(time.Second), l2.ExpiresAt(), "an ended lease is not extended")

	l3 := lease.New("x", start, time.Second)
	l3.Lose(fmt.Errorf("x: it expired: %w", lockbridge.ErrNotHeld))
	assert.Equal(t, "x: lock lost: it expired: lockbridge: lock not held", l3.Err().Error(), "no repeated prefix")
	l4 := lease.New("x", start, time.Second)
	l4.Lose(nil)
	assert.ErrorIs(t, l4.Err(), lockbridge.ErrLost)
}

// extender is a refresh callback that succeeds and extends.
func extender(l *lease.Lease, calls *atomic.Int64) lease.RefreshFunc {
	return func(ctx context.Context) error {
		calls.Add(1)
		l.Extend(time.Now().Add(l.TTL()), l.TTL())
		return nil
	}
}

func TestAutoRefreshKeepsTheLease(t *testing.T) {
	l := lease.New("x", time.Now(), 90*time.Millisecond)
	var calls atomic.Int64
	l.AutoRefresh(context.Background(), extender(l, &calls))
	l.AutoRefresh(context.Background(), extender(l, &calls)) // a second start does nothing
	time.Sleep(400 * time.Millisecond)
	assert.False(t, l.Ended())
	n := calls.Load()
	assert.GreaterOrEqual(t, n, int64(8), "every ttl/3")
	assert.LessOrEqual(t, n, int64(14))
	l.StopRefresh()
	assert.False(t, l.Ended(), "stopping the refresher does not end the lease")
	after := calls.Load()
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, after, calls.Load(), "no refresh after StopRefresh")
	assert.True(t, l.Ended(), "the lease ends at its give-up point, refreshed or not")
	assert.True(t, l.RanOut())
	l.StopRefresh() // twice is fine
}

func TestAutoRefreshNotHeldLosesAtOnce(t *testing.T) {
	l := lease.New("x", time.Now(), 60*time.Millisecond)
	notHeld := fmt.Errorf("x: gone: %w", lockbridge.ErrNotHeld)
	var calls atomic.Int64
	l.AutoRefresh(context.Background(), func(context.Context) error { calls.Add(1); return notHeld })
	require.True(t, done(l, 5*time.Second))
	assert.Equal(t, int64(1), calls.Load())
	assert.ErrorIs(t, l.Err(), lockbridge.ErrLost)
	assert.ErrorIs(t, l.Err(), notHeld)
	l.StopRefresh()
}

func TestAutoRefreshGivesUpBeforeTheLeaseEnds(t *testing.T) {
	l := lease.New("x", time.Now(), 120*time.Millisecond)
	down := errors.New("connection refused")
	var calls atomic.Int64
	l.AutoRefresh(context.Background(), func(ctx context.Context) error {
		calls.Add(1)
		_, ok := ctx.Deadline()
		assert.True(t, ok, "each call has a deadline")
		return down
	})
	end := l.ExpiresAt()
	require.True(t, done(l, 5*time.Second))
	assert.True(t, time.Now().Before(end), "lost before the lease ended")
	assert.ErrorIs(t, l.Err(), lockbridge.ErrLost)
	assert.ErrorIs(t, l.Err(), down, "the last error is the cause")
	assert.GreaterOrEqual(t, calls.Load(), int64(3), "retried every ttl/12")
	l.StopRefresh()
}

func TestAutoRefreshHungCallIsCutOff(t *testing.T) {
	l := lease.New("x", time.Now(), 120*time.Millisecond)
	l.AutoRefresh(context.Background(), func(ctx context.Context) error {
		<-ctx.Done() // a hung server
		return ctx.Err()
	})
	end := l.ExpiresAt()
	require.True(t, done(l, 5*time.Second))
	assert.True(t, time.Now().Before(end), "lost before the lease ended")
	assert.ErrorIs(t, l.Err(), context.DeadlineExceeded)
}

func TestStopRefreshCancelsTheCall(t *testing.T) {
	l := lease.New("x", time.Now(), 30*time.Millisecond)
	entered := make(chan struct{})
	l.AutoRefresh(context.Background(), func(ctx context.Context) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	})
	<-entered
	l.StopRefresh() // returns although the call would hang until its deadline
	assert.False(t, l.Ended())
}

func TestRefresherStopsWhenTheLeaseEnds(t *testing.T) {
	l := lease.New("x", time.Now(), time.Hour)
	var calls atomic.Int64
	l.AutoRefresh(context.Background(), extender(l, &calls))
	l.End(nil)
	// goleak in TestMain checks that the goroutine is gone; StopRefresh
	// returns at once.
	l.StopRefresh()
	assert.Equal(t, int64(0), calls.Load())
	l.AutoRefresh(context.Background(), extender(l, &calls))
	l.StopRefresh()
	assert.Equal(t, int64(0), calls.Load(), "no refresher on an ended lease")
}

func TestExtendChangesThePeriod(t *testing.T) {
	l := lease.New("x", time.Now(), 30*time.Millisecond)
	var calls atomic.Int64
	l.AutoRefresh(context.Background(), func(context.Context) error {
		calls.Add(1)
		l.Extend(time.Now().Add(time.Hour), time.Hour) // now an hour's lease
		return nil
	})
	time.Sleep(150 * time.Millisecond)
	assert.Equal(t, int64(1), calls.Load(), "the next refresh is 20 minutes away")
	l.StopRefresh()
}

// The give-up timer ends a lease nothing refreshes, ttl/12 before its end,
// with an error saying the lease ran out.
func TestTimerEndsALeaseWithoutRefresh(t *testing.T) {
	l := lease.New("x", time.Now(), 120*time.Millisecond)
	end := l.ExpiresAt()
	require.True(t, done(l, 5*time.Second))
	assert.True(t, time.Now().Before(end), "Done closed before the lease ended")
	assert.ErrorIs(t, l.Err(), lockbridge.ErrLost)
	assert.Contains(t, l.Err().Error(), "the lease ran out (the lock is not refreshed automatically)")
	assert.True(t, l.RanOut())
	assert.ErrorIs(t, l.Extend(time.Now().Add(time.Hour), time.Hour), lockbridge.ErrNotHeld, "nothing revives it")
	assert.Equal(t, end, l.ExpiresAt())
}

// A refresh confirmed after the give-up point passed, before the timer ran,
// does not revive the lease either.
func TestExtendAfterTheGiveUpPointEnds(t *testing.T) {
	l := lease.New("x", time.Now().Add(-time.Second), time.Second)
	err := l.Extend(time.Now().Add(time.Second), time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.ErrorIs(t, err, lockbridge.ErrLost)
	assert.True(t, l.Ended())
}

// A refresh sent to a shorter ttl shortens the lease at once, whether or
// not its reply comes; one to a longer ttl changes nothing until confirmed.
func TestSendingShortens(t *testing.T) {
	start := time.Now()
	l := lease.New("x", start, time.Hour)
	sent := start.Add(time.Millisecond)
	l.Sending(sent, 2*time.Hour)
	assert.Equal(t, start.Add(time.Hour), l.ExpiresAt(), "a longer ttl waits for its confirmation")
	l.Sending(sent, 150*time.Millisecond)
	assert.Equal(t, sent.Add(150*time.Millisecond), l.ExpiresAt())
	assert.Equal(t, 150*time.Millisecond, l.TTL(), "the margin is the shorter ttl's")
	require.True(t, done(l, 5*time.Second), "the timer moved with the end")
	assert.True(t, time.Now().Before(l.ExpiresAt()))
	assert.True(t, l.RanOut())
}

// A refresh callback that never returns by itself (it ignores its
// deadline, as a call waiting on a mutex would) cannot hold Done open.
func TestStuckCallbackCannotHoldDone(t *testing.T) {
	l := lease.New("x", time.Now(), 120*time.Millisecond)
	release := make(chan struct{})
	l.AutoRefresh(context.Background(), func(ctx context.Context) error {
		<-release
		return ctx.Err()
	})
	end := l.ExpiresAt()
	require.True(t, done(l, 5*time.Second))
	assert.True(t, time.Now().Before(end), "lost before the lease ended")
	close(release)
	l.StopRefresh()
}
