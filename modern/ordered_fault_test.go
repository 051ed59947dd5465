package modern_test

import (
	"context"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// A waiter that orders its attempts after a notice (elderFirst,
// lineSpacing) puts off its attempt by a delay that grows with the line its
// Locker last saw and with its own round trip. The release notice of a lock
// nobody else wants must still lead to an attempt within the backoff's
// bound: here the line was long (a waiter heard many notices before it got
// the lock), the round trip is slow (a proxy adds delay), and the lock is
// released with the waiter alone: it must not sleep for line × 2 × rtt
// while the key is free.
func TestFaultOrderedWaitBoundedByBackoff(t *testing.T) {
	const (
		ttl        = 10 * time.Second
		backoffMax = 50 * time.Millisecond
		delay      = 10 * time.Millisecond // each way: a round trip of ~20 ms
	)
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rdb.Close()
	l := modern.New(goredis.New(rdb), modern.WithBackoff(lockbridge.ExponentialBackoff(time.Millisecond, backoffMax)),
		modern.WithNotifyLinger(5*time.Second))
	defer l.Close()
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "ordered")
	channel := "{" + key + "}:released"

	// A line: the key held elsewhere, released-and-retaken notices heard by
	// the waiter, each attempt losing, until the key is free.
	locktest.Set(t, direct, key, "elsewhere")
	got := make(chan error, 1)
	go func() {
		lk, err := l.Lock(ctx, key, ttl)
		if err == nil {
			err = lk.Unlock(ctx)
		}
		got <- err
	}()
	eventually(t, func() bool { return modern.HubSubscribed(l, key) }, "the waiter subscribed")
	for i := 0; i < 40; i++ {
		locktest.Do(t, direct, "PUBLISH", channel, "released")
		time.Sleep(3 * time.Millisecond)
	}
	locktest.Do(t, direct, "DEL", key)
	locktest.Do(t, direct, "PUBLISH", channel, "released")
	require.NoError(t, <-got)

	// A slow network now, and the key held elsewhere again.
	p.Delay(delay)
	locktest.Do(t, direct, "SET", key, "elsewhere", "PX", ttl.Milliseconds())
	type result struct {
		lk  lockbridge.Lock
		err error
		at  time.Time
	}
	res := make(chan result, 1)
	go func() {
		lk, err := l.Lock(ctx, key, ttl)
		res <- result{lk, err, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond) // it attempted, lost, and sleeps on
	released := time.Now()
	locktest.Do(t, direct, "DEL", key)
	locktest.Do(t, direct, "PUBLISH", channel, "released")
	r := <-res
	require.NoError(t, r.err)
	defer func() { _ = r.lk.Unlock(context.Background()) }()
	// Bound: a backoff step, a round trip, the notice's way, and margin for
	// a loaded machine; far below the 40 × 2 × 20 ms the ordering allows.
	assert.Less(t, r.at.Sub(released), 400*time.Millisecond,
		"the lone waiter slept past its backoff with the key free after a release notice")
}
