package redisson_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// infoInt reads one integer field of INFO section.
func infoInt(t *testing.T, c driver.Client, section, field string) int64 {
	t.Helper()
	r := locktest.Do(t, c, "INFO", section)
	for _, line := range strings.Split(fmt.Sprint(r), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// A reentrant hold of two; the inner Unlock ran on the server but its reply
// was lost (the error wraps ErrUnknownOutcome; the way to learn the outcome
// is to call Unlock again). Before the second call, memory pressure under
// maxmemory-policy volatile-ttl evicts the unlock latch, the key with the
// shortest TTL. The second call must not run the release again: that would
// take the outer hold's count, delete the hash and let another owner in
// while the outer hold's Done is still open. Without the latch the outcome
// stays unknown, and nothing is released.
func TestFaultUnlockAgainAfterLatchEvicted(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	o := redisson.New(c).NewOwner() // latch 20 s
	outer, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	inner, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)

	release := faultproxy.Script(script(t, "release.lua"))
	p.DropReply(release, 1, faultproxy.Close)
	require.ErrorIs(t, inner.Unlock(ctx), lockbridge.ErrUnknownOutcome)
	require.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key), "the server ran the inner unlock")
	latches := locktest.Do(t, raw, "KEYS", redisson.LatchName(key, "*"))
	require.Len(t, latches, 1, "the first run's latch")
	latch := fmt.Sprint(latches.([]any)[0])

	// Real pressure: the lock key lives a minute, the latch 20 s, the
	// fillers 40 s; volatile-ttl evicts the shortest TTL first.
	locktest.Do(t, raw, "CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
	locktest.Do(t, raw, "CONFIG", "SET", "maxmemory-samples", "10")
	used := infoInt(t, raw, "memory", "used_memory")
	locktest.Do(t, raw, "CONFIG", "SET", "maxmemory", strconv.FormatInt(used+256<<10, 10))
	defer locktest.Do(t, raw, "CONFIG", "SET", "maxmemory", "0")
	filler := strings.Repeat("x", 1024)
	for i := 0; ; i++ {
		require.Less(t, i, 100000, "the latch was never evicted")
		locktest.Do(t, raw, "SET", fmt.Sprintf("filler:%s:%d", key, i), filler, "EX", "40")
		if n := locktest.Do(t, raw, "EXISTS", latch); n == int64(0) {
			break
		}
	}
	locktest.Do(t, raw, "CONFIG", "SET", "maxmemory", "0")
	require.Positive(t, infoInt(t, raw, "stats", "evicted_keys"))
	require.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key), "the lock key was not evicted")

	err = inner.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome,
		"the latch is gone: the outcome is unknown, not a second release")
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key), "the outer hold's count is untouched")
	assert.False(t, done(outer), "the outer hold goes on")
	other, err := redisson.New(raw).TryLock(ctx, key, time.Minute)
	if err == nil {
		_ = other.Unlock(context.Background())
	}
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no other owner while the outer hold lasts")
	require.NoError(t, outer.Unlock(ctx))
	assert.Empty(t, hash(t, raw, key))
}
