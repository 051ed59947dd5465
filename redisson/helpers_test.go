package redisson_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/redisson"
)

// asHold asserts that a lockbridge.Lock is a *redisson.Lock.
func asHold(t testing.TB, l lockbridge.Lock) *redisson.Lock {
	t.Helper()
	h, ok := l.(*redisson.Lock)
	require.True(t, ok, "lock is a %T, not a *redisson.Lock", l)
	return h
}

// hash returns the lock's hash, field by field ("" → count).
func hash(t testing.TB, c driver.Client, key string) map[string]int64 {
	t.Helper()
	h, err := redisson.New(c).Holders(context.Background(), key)
	require.NoError(t, err)
	return h
}

// done reports whether a lock's Done channel is closed now.
func done(l lockbridge.Lock) bool {
	select {
	case <-l.Done():
		return true
	default:
		return false
	}
}
