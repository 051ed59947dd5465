package lease_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/stretchr/testify/assert"
)

// A Refresh by hand to a shorter ttl reschedules the auto-refresh at once:
// waiting out the old, longer period would let the shorter lease lapse.
func TestExtendReschedulesTheRefresher(t *testing.T) {
	l := lease.New("x", time.Now(), 3*time.Second)
	var calls atomic.Int64
	l.AutoRefresh(context.Background(), func(ctx context.Context) error {
		calls.Add(1)
		l.Extend(time.Now().Add(150*time.Millisecond), 150*time.Millisecond)
		return nil
	})
	defer l.StopRefresh()
	time.Sleep(50 * time.Millisecond)
	l.Extend(time.Now().Add(150*time.Millisecond), 150*time.Millisecond) // the manual Refresh
	time.Sleep(400 * time.Millisecond)
	assert.GreaterOrEqual(t, calls.Load(), int64(3), "refreshes every ttl/3 of the new ttl, not the old 1s")
	select {
	case <-l.Done():
		t.Fatalf("the lease lapsed: %v", l.Err())
	default:
	}
}
