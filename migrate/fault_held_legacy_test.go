package migrate

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// A lock taken in PhaseLegacy by a Locker that follows a namespace is a
// heldLock whose own lease is Init(start, ttl) — not the legacy lock's
// lease, which ends when the other lockers' clocks pass W. With a seconds
// profile without +1 (a Java variant the profile options name) and a ttl
// that is not a whole number of seconds, W = floor(now) + floor(ttl):
// taken at x.9 s with ttl 1.9 s, a legacy locker of the same profile takes
// over at x+2 s (1.1 s on), while the heldLock's Done stays open until
// 1.9 s − ttl/12 ≈ 1.74 s. The inner legacy lock's own Done closed at once
// (its lease was 0.1 s) but the heldLock does not mirror it.
func TestFaultHeldLegacyLockLeaseIgnoresW(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	initNS(t, tg.Client, ns)
	prof := []legacy.Option{legacy.WithUnit(time.Second), legacy.WithPlusOne(false)}
	a := New(tg.Client, WithPhaseFrom(ns), WithPhaseInterval(20*time.Millisecond), WithLegacy(prof...))
	defer a.Close(ctx)
	_, err := a.Phase(ctx)
	require.NoError(t, err)
	b := legacy.New(tg.Client, prof...) // a Java locker of the same profile
	name := locktest.Key(t, "orders")

	// Take the lock at x.9 s by the wall clock.
	for time.Now().Nanosecond() < 900_000_000 || time.Now().Nanosecond() > 950_000_000 {
		time.Sleep(time.Millisecond)
	}
	lk, err := a.TryLock(ctx, name, 1900*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, PhaseLegacy, heldPhase(lk))

	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		closed := false
		select {
		case <-lk.Done():
			closed = true
		default:
		}
		bl, err := b.TryLock(ctx, name, time.Minute)
		if err != nil {
			continue
		}
		assert.True(t, closed, "Done was open when a legacy locker got the lock")
		_ = bl.Unlock(ctx)
		_ = lk.Unlock(ctx)
		return
	}
	t.Fatal("the legacy locker never got the lock")
}
