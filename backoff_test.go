package lockbridge_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
)

func TestExponentialBackoffDoublesWithJitterAndCap(t *testing.T) {
	b := lockbridge.ExponentialBackoff(10*time.Millisecond, 80*time.Millisecond)
	want := []time.Duration{10, 20, 40, 80, 80, 80} // upper bounds in ms
	for i, upper := range want {
		upper *= time.Millisecond
		for j := 0; j < 200; j++ {
			d, ok := b.Delay(i + 1)
			require.True(t, ok)
			assert.GreaterOrEqual(t, d, upper/2, "retry %d", i+1)
			assert.LessOrEqual(t, d, upper, "retry %d", i+1)
		}
	}
	// A huge retry count neither overflows nor exceeds the cap.
	d, ok := b.Delay(1 << 30)
	require.True(t, ok)
	assert.LessOrEqual(t, d, 80*time.Millisecond)
	assert.GreaterOrEqual(t, d, 40*time.Millisecond)
}

func TestExponentialBackoffJitters(t *testing.T) {
	b := lockbridge.ExponentialBackoff(time.Millisecond, time.Second)
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		d, _ := b.Delay(8)
		seen[d] = true
	}
	assert.Greater(t, len(seen), 10, "delays should be spread, got %v", seen)
}

func TestLinearBackoff(t *testing.T) {
	b := lockbridge.LinearBackoff(5*time.Millisecond, 12*time.Millisecond)
	for n, want := range map[int]time.Duration{0: 5, 1: 5, 2: 10, 3: 12, 4: 12, 1 << 40: 12} {
		d, ok := b.Delay(n)
		require.True(t, ok)
		assert.Equal(t, want*time.Millisecond, d, "retry %d", n)
	}
}

func TestNoRetry(t *testing.T) {
	b := lockbridge.NoRetry()
	_, ok := b.Delay(1)
	assert.False(t, ok)
}
