package redlock_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redlock"
)

// unreached returns n clients on a port nothing listens on: the invalid
// cases must fail before any of them is used.
func unreached(t *testing.T, n int) []driver.Client {
	out := make([]driver.Client, n)
	for i := range out {
		c := goredislib.NewClient(&goredislib.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		out[i] = goredis.New(c)
	}
	return out
}

// TestInvalid: bad clients, options and arguments are ErrInvalid from the
// call, never a panic and never a Redis round trip.
func TestInvalid(t *testing.T) {
	five := unreached(t, 5)
	withNil := append(append([]driver.Client(nil), five[:2]...), nil, five[3])
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		clients []driver.Client
		opts    []redlock.Option
		key     string
		ttl     time.Duration
		msg     string
	}{
		{"no clients", nil, nil, "k", time.Second, "0 clients"},
		{"two clients", five[:2], nil, "k", time.Second, "2 clients: Redlock needs at least 3"},
		{"nil client", withNil, nil, "k", time.Second, "nil driver.Client at index 2"},
		{"nil option", five, []redlock.Option{nil}, "k", time.Second, "nil option"},
		{"names count", five, []redlock.Option{redlock.WithNodeNames("a", "b")}, "k", time.Second,
			"2 node names for 5 clients"},
		{"no names", five, []redlock.Option{redlock.WithNodeNames()}, "k", time.Second, "0 node names for 5 clients"},
		{"node timeout zero", five, []redlock.Option{redlock.WithNodeTimeout(0)}, "k", time.Second,
			"node timeout 0s is not positive"},
		{"drift factor 1", five, []redlock.Option{redlock.WithDrift(1, 2*time.Millisecond)}, "k", time.Second,
			"drift factor 1 is not in [0, 1)"},
		{"drift factor negative", five, []redlock.Option{redlock.WithDrift(-0.1, 2*time.Millisecond)}, "k", time.Second,
			"drift factor -0.1"},
		{"drift factor NaN", five, []redlock.Option{redlock.WithDrift(math.NaN(), 2*time.Millisecond)}, "k", time.Second,
			"drift factor NaN"},
		{"drift negative", five, []redlock.Option{redlock.WithDrift(0.01, -time.Millisecond)}, "k", time.Second,
			"drift -1ms is negative"},
		{"nil backoff", five, []redlock.Option{redlock.WithBackoff(nil)}, "k", time.Second, "nil backoff"},
		{"bad backoff", five, []redlock.Option{redlock.WithBackoff(lockbridge.ExponentialBackoff(0, 1))}, "k", time.Second,
			"exponential backoff"},
		{"nil token func", five, []redlock.Option{redlock.WithTokenFunc(nil)}, "k", time.Second, "nil token func"},
		{"empty key", five, nil, "", time.Second, "empty key"},
		{"ttl zero", five, nil, "k", 0, "ttl 0s is below 1ms"},
		{"ttl sub-ms", five, nil, "k", 500 * time.Microsecond, "ttl 500µs is below 1ms"},
		{"ttl within drift", five, nil, "k", 3 * time.Millisecond,
			"ttl 3ms leaves no validity after the drift allowance 2.03ms and the node timeout 1ms"},
		{"node timeout above ttl", five, []redlock.Option{redlock.WithNodeTimeout(time.Second)}, "k", time.Second,
			"node timeout 1s"},
		{"drift above ttl", five, []redlock.Option{redlock.WithDrift(0.01, time.Second)}, "k", time.Second,
			"drift allowance 1.01s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := redlock.New(c.clients, c.opts...)
			lk, err := l.TryLock(ctx, c.key, c.ttl)
			assert.Nil(t, lk)
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			assert.ErrorContains(t, err, c.msg)
			assert.Regexp(t, "^redlock: ", err.Error())
			_, err = l.Lock(ctx, c.key, c.ttl)
			assert.ErrorIs(t, err, lockbridge.ErrInvalid)
		})
	}

	var nilLocker *redlock.Locker
	_, err := nilLocker.TryLock(ctx, "k", time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	_, err = nilLocker.Lock(ctx, "k", time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}

func TestQuorum(t *testing.T) {
	cs := unreached(t, 7)
	for n, q := range map[int]int{3: 2, 4: 3, 5: 3, 6: 4, 7: 4} {
		assert.Equal(t, q, redlock.New(cs[:n]).Quorum(), "%d nodes", n)
	}
	assert.Equal(t, 0, redlock.New(cs[:2]).Quorum())
}

// TestTokenFunc: the token func's value is what every node holds; a bad
// token or a failing func fails the attempt.
func TestTokenFunc(t *testing.T) {
	f := startFleet(t, 3)
	ctx := locktest.Ctx(t)
	lk, err := redlock.New(f.clients, redlock.WithTokenFunc(func() (string, error) {
		return "host-1/42/abc",
			nil
	})).TryLock(ctx, "k", time.Second)
	require.NoError(t, err)
	assert.Equal(t, "host-1/42/abc", lk.Token())
	assert.Equal(t, all(3, true), f.holds(t, "k", "host-1/42/abc"))
	require.NoError(t, lk.Unlock(ctx))

	_, err = redlock.New(f.clients, redlock.WithTokenFunc(func() (string, error) { return "", nil })).TryLock(ctx, "k",
		time.Second)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	boom := errors.New("boom")
	_, err = redlock.New(f.clients, redlock.WithTokenFunc(func() (string, error) { return "", boom })).TryLock(ctx, "k",
		time.Second)
	assert.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "redlock: token: boom")
}
