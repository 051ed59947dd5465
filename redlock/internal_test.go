package redlock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
)

func TestJittered(t *testing.T) {
	j := jittered{lockbridge.LinearBackoff(40*time.Millisecond, 40*time.Millisecond)}
	seen := map[time.Duration]bool{}
	for i := 0; i < 200; i++ {
		d, ok := j.Delay(1)
		assert.True(t, ok)
		assert.GreaterOrEqual(t, d, 40*time.Millisecond)
		assert.LessOrEqual(t, d, 50*time.Millisecond)
		seen[d] = true
	}
	assert.Greater(t, len(seen), 10, "a linear backoff gets jitter")
	_, ok := jittered{lockbridge.NoRetry()}.Delay(1)
	assert.False(t, ok)
}

// TestFreeIn: how long until a majority can be free, from a failed round.
func TestFreeIn(t *testing.T) {
	l := &Locker{nodes: make([]modernproto.Node, 5), quorum: 3}
	taken := func(d time.Duration) NodeResult { return NodeResult{Status: Taken, HolderTTL: d} }
	ok := NodeResult{Status: OK}
	failed := NodeResult{Status: Failed}
	within := func(d, want time.Duration) bool { return d >= want && d <= want+want/4+time.Millisecond }

	// Two free (ours, released), three held: the shortest lease frees a third.
	d := l.freeIn([]NodeResult{ok, ok, taken(300 * time.Millisecond), taken(100 * time.Millisecond), taken(time.Second)})
	assert.True(t, within(d, 100*time.Millisecond), "%v", d)
	// None free: the third shortest.
	d = l.freeIn([]NodeResult{taken(5 * time.Second), taken(100 * time.Millisecond), taken(300 * time.Millisecond),
		taken(200 * time.Millisecond), taken(time.Second)})
	assert.True(t, within(d, 300*time.Millisecond), "%v", d)
	// Expiring this millisecond: 1 ms, not 0 (which means unknown).
	d = l.freeIn([]NodeResult{ok, ok, taken(0), taken(-1), failed})
	assert.True(t, within(d, time.Millisecond), "%v", d)
	// Unknown: failures and keys without expiry cannot be counted on.
	assert.Zero(t, l.freeIn([]NodeResult{ok, failed, failed, taken(-1), taken(time.Second)}))
	// A majority acquired (the round failed on validity): the backoff decides.
	assert.Zero(t, l.freeIn([]NodeResult{ok, ok, ok, taken(time.Second), failed}))
}
