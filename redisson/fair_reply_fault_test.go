package redisson_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// The fair lock's replies lost after the server ran the script (the fault
// matrix of docs/safety.md): a lost acquire reply with no other hold is
// settled by reading the field back, as the plain lock's; a lost release
// reply is an unknown outcome, never a release, and nothing is sent again.
// Another owner is never let in while the hold stands.
func TestFaultFairReplyDropped(t *testing.T) {
	p, c, raw := proxied(t)
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(c, redisson.WithFair(time.Minute))
	other := redisson.New(raw, redisson.WithFair(time.Minute))
	try := faultproxy.Script(script(t, "fair_try.lua"))
	release := faultproxy.Script(script(t, "fair_release.lua"))
	tries, releases := p.Count(try), p.Count(release)

	p.DropReply(try, 1, faultproxy.Close)
	lk, err := l.TryLock(ctx, key, time.Minute)
	require.NoError(t, err, "read back")
	assert.Equal(t, 1, tries(), "the acquire is not sent again")
	_, err = other.TryLock(ctx, key, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)

	p.DropReply(release, 1, faultproxy.Close)
	err = lk.Unlock(ctx)
	require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
	assert.NotErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.Equal(t, 1, releases(), "the release is not sent again")
	next, err := other.TryLock(ctx, key, time.Minute)
	require.NoError(t, err, "it ran: the lock is free")
	require.NoError(t, next.Unlock(ctx))
}
