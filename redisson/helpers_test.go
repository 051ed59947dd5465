package redisson_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/redisson"
)

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
