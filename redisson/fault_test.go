package redisson_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	goredislib "github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/redisson"
)

// script returns one of the package's scripts by file name.
func script(t testing.TB, name string) *driver.Script {
	for _, s := range redisson.Scripts() {
		if s.Name() == "redisson/scripts/"+name {
			return s
		}
	}
	t.Fatalf("no script %s", name)
	return nil
}

// proxied returns a client whose commands go through a fault proxy, and a
// client straight to the server, for looking.
func proxied(t *testing.T) (*faultproxy.Proxy, driver.Client, driver.Client) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	raw := locktest.GoRedis(t, srv)
	for _, s := range redisson.Scripts() { // EVALSHA finds them: no NOSCRIPT round to drop
		locktest.Do(t, raw, "SCRIPT", "LOAD", s.Source())
	}
	return p, goredis.New(rdb), raw
}

// The reply of an unlock is lost after the server ran it: the owner had
// two holds, the unlock took one. Unlock reports the unknown outcome and
// sends nothing again; asked again, it sends the same request and the unlock
// latch answers with the first run's result — the second hold is still
// held. (Sending a fresh unlock instead would have released it.)
func TestFaultUnlockReplyDropped(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	o := redisson.New(c).NewOwner()
	first, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	second, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)

	count := p.Count(faultproxy.Script(script(t, "release.lua")))
	p.DropReply(faultproxy.Script(script(t, "release.lua")), 1, faultproxy.Close)
	err = first.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
	assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.Equal(t, 1, count(), "sent once, not resent")
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key), "the server ran it")
	assert.True(t, done(first))

	require.NoError(t, first.Unlock(ctx), "the latch answers with the first run's result")
	assert.Equal(t, 2, count())
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key), "the second hold is still held")
	assert.False(t, done(second))
	require.ErrorIs(t, first.Unlock(ctx), lockbridge.ErrNotHeld, "that hold is gone now")

	require.NoError(t, second.Unlock(ctx))
	assert.Empty(t, hash(t, raw, key))
}

// Past half the latch's life, asking again could meet an expired latch and
// release a second hold: Unlock refuses with the unknown outcome, and
// sends nothing.
func TestFaultUnlockAskedTooLate(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	o := redisson.New(c, redisson.WithUnlockLatch(time.Second)).NewOwner()
	first, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	second, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	count := p.Count(faultproxy.Script(script(t, "release.lua")))
	p.DropReply(faultproxy.Script(script(t, "release.lua")), 1, faultproxy.Close)
	require.ErrorIs(t, first.Unlock(ctx), lockbridge.ErrUnknownOutcome)
	time.Sleep(1100 * time.Millisecond) // the latch is gone
	err = first.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
	assert.Contains(t, err.Error(), "past half the latch's life")
	assert.Equal(t, 1, count(), "nothing sent")
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key))
	require.NoError(t, second.Unlock(ctx))
}

// The reply of an acquire is lost. With no other hold, reading the field
// back settles it: the hold is returned, not resent. With another hold the
// count cannot tell: the error says the outcome is unknown.
func TestFaultAcquireReplyDropped(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	o := redisson.New(c).NewOwner()
	acquire := faultproxy.Script(script(t, "acquire.lua"))
	count := p.Count(acquire)

	p.DropReply(acquire, 1, faultproxy.Close)
	first, err := o.TryLock(ctx, key, time.Minute)
	require.NoError(t, err, "read back")
	assert.Equal(t, 1, count())
	assert.Equal(t, map[string]int64{o.Field(): 1}, hash(t, raw, key))

	p.DropReply(acquire, 1, faultproxy.Close)
	_, err = o.TryLock(ctx, key, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
	assert.Equal(t, 2, count())
	assert.Equal(t, map[string]int64{o.Field(): 2}, hash(t, raw, key),
		"it ran: one hold nobody knows, until the lease ends")
	require.NoError(t, first.Unlock(ctx))
}
