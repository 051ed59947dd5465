package adapter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
)

func TestRedirectOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind redirectKind
		addr string
	}{
		{driver.ReplyError("MOVED 3999 127.0.0.1:6381"), moved, "127.0.0.1:6381"},
		{fmt.Errorf("driver: script x: %w", driver.ReplyError("ASK 3999 10.0.0.2:7000")), ask, "10.0.0.2:7000"},
		{driver.ReplyError("TRYAGAIN Multiple keys request during rehashing of slot"), pause, ""},
		{driver.ReplyError("CLUSTERDOWN Hash slot not served"), pause, ""},
		{driver.ReplyError("MASTERDOWN Link with MASTER is down"), pause, ""},
		{driver.ReplyError("MOVED"), pause, ""}, // no address: wait for the slot map
		{driver.ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value"), notRedirect, ""},
		{errors.New("MOVED 3999 127.0.0.1:6381"), notRedirect, ""}, // not a reply: may have run
		{nil, notRedirect, ""},
	} {
		k, a := redirectOf(tc.err)
		assert.Equal(t, tc.kind, k, "%v", tc.err)
		assert.Equal(t, tc.addr, a, "%v", tc.err)
	}
}

// The follower's bounds: MaxRedirects redirects in a row, pauses within
// ClusterRetryFor, and a context that ends during a pause returns its
// error with the refusal (the command did not run).
func TestFollowerBounds(t *testing.T) {
	ctx := context.Background()
	var f follower
	mv := driver.ReplyError("MOVED 1 127.0.0.1:1")
	for i := 0; i < MaxRedirects; i++ {
		addr, asking, ok, stop := f.next(ctx, mv, true)
		require.True(t, ok)
		require.NoError(t, stop)
		assert.Equal(t, "127.0.0.1:1", addr)
		assert.False(t, asking)
	}
	_, _, ok, _ := f.next(ctx, mv, true)
	assert.False(t, ok, "past MaxRedirects in a row")

	// Pauses double from firstPause; the one that would pass
	// ClusterRetryFor is not taken.
	f = follower{waited: ClusterRetryFor - 3*firstPause/2}
	ta := driver.ReplyError("TRYAGAIN x")
	addr, _, ok, stop := f.next(ctx, ta, true)
	require.NoError(t, stop)
	assert.True(t, ok, "a first pause of %v fits", firstPause)
	assert.Empty(t, addr, "sent again through the client")
	_, _, ok, stop = f.next(ctx, ta, true)
	require.NoError(t, stop)
	assert.False(t, ok, "the second pause would pass ClusterRetryFor")

	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	f = follower{pause: time.Second}
	_, _, ok, stop = f.next(cctx, ta, true)
	assert.False(t, ok)
	assert.ErrorIs(t, stop, context.DeadlineExceeded)
	assert.ErrorIs(t, stop, ta)
}
