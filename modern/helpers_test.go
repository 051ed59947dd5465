package modern_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/modern"
)

// testCtx is a context that ends with the test, or after 30 s.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// asModern asserts that a lockbridge.Lock is a *modern.Lock.
func asModern(t testing.TB, l lockbridge.Lock) *modern.Lock {
	t.Helper()
	ml, ok := l.(*modern.Lock)
	require.True(t, ok, "lock is a %T, not a *modern.Lock", l)
	return ml
}

// get returns the stored value of key and whether it exists.
func get(t testing.TB, c driver.Client, key string) (string, bool) {
	t.Helper()
	v, ok, err := c.Get(context.Background(), key)
	require.NoError(t, err)
	return v, ok
}

// pttl returns PTTL key in milliseconds (-2: no key, -1: no expiry).
func pttl(t testing.TB, c driver.Client, key string) int64 {
	t.Helper()
	r, err := c.Do(context.Background(), "PTTL", key)
	require.NoError(t, err)
	return r.(int64)
}

// do runs a command and requires it to succeed.
func do(t testing.TB, c driver.Client, args ...any) any {
	t.Helper()
	r, err := c.Do(context.Background(), args...)
	require.NoError(t, err)
	return r
}

// countingTokens is a WithTokenFunc that counts acquire attempts.
type countingTokens struct{ n atomic.Int64 }

func (c *countingTokens) token() (string, error) {
	c.n.Add(1)
	return modern.NewToken()
}

// waitDone waits up to d for a lock's Done channel.
func waitDone(t testing.TB, l lockbridge.Lock, d time.Duration) bool {
	t.Helper()
	select {
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

// eventually polls cond every 5 ms for up to 10 s.
func eventually(t testing.TB, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, msg)
}
