package redisson_test

import (
	"context"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/redisson"
)

// Review 8, finding 3 (the owner's field read as proof that an acquire
// ran): an owner's hold is lost — the watchdog's renewals get no reply, the
// lease runs out by our clock — and is unlocked (nothing is sent: the hold
// was lost); its count stays in the hash until the server's lease ends,
// which is later than ours. The owner takes the lock again; that acquire is
// held up in the network and its reply never comes. The read-back finds the
// owner's field — the lost hold's count, not this acquire's — and returns a
// hold with a fresh lease of its own. The lingering count expires, another
// owner takes the lock, and the late acquire finds it held: two holders,
// the first one's Done open for seconds. The field is the owner's, not the
// acquire's: finding it shows nothing about this acquire while an earlier
// hold of the owner may still have a count there.
func TestFaultReadBackTakesALostHoldsFieldForTheAcquire(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	raw := locktest.GoRedis(t, srv)
	for _, s := range redisson.Scripts() { // EVALSHA finds them: no NOSCRIPT round to hold up
		locktest.Do(t, raw, "SCRIPT", "LOAD", s.Source())
	}
	ctx := context.Background()
	key := locktest.Key(t, "k")
	o := redisson.New(goredis.New(rdb), redisson.WithWatchdog()).NewOwner()

	lost, err := o.TryLock(ctx, key, 1200*time.Millisecond)
	require.NoError(t, err)
	p.DropReply(faultproxy.Script(script(t, "renew.lua")), -1, faultproxy.Close)
	require.True(t, locktest.WaitDone(lost, 5*time.Second), "no renewal confirmed: the lease ran out")
	require.ErrorIs(t, lost.Unlock(ctx), lockbridge.ErrNotHeld, "a lost hold sends no unlock")
	p.ClearRules()
	require.Equal(t, int64(1), locktest.Do(t, raw, "HEXISTS", key, o.Field()), "its count lingers on the server")

	p.Hold(faultproxy.Script(script(t, "acquire.lua")), 4*time.Second)
	again, err := o.TryLock(ctx, key, 10*time.Second)
	if err != nil {
		require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
		return // the outcome is unknown: not a hold
	}
	defer func() { _ = again.Unlock(ctx) }()

	other := redisson.New(raw).NewOwner()
	deadline := time.Now().Add(5 * time.Second)
	var second lockbridge.Lock
	for second == nil && time.Now().Before(deadline) {
		if second, err = other.TryLock(ctx, key, time.Minute); err != nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if second != nil {
		defer func() { _ = second.Unlock(ctx) }()
	}
	select {
	case <-again.Done():
	default:
		t.Fatalf("two holders: the read-back returned a hold (lease to %v) on the lost hold's lingering field; "+
			"another owner got the lock (%v) while its Done is open", time.Until(again.ExpiresAt()).Round(time.Millisecond),
			second != nil)
	}
}
