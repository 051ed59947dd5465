package redisson_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// A fair lock blocked by a dead waiter's queue entry says that a queued
// waiter is ahead and until when, not "held by another owner for 0s more".
func TestFairNotObtainedSaysWaiterAhead(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	l := redisson.New(tg.Client, redisson.WithFair(time.Minute))
	ghost := "00000000-0000-4000-8000-000000000000:7"
	until := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	locktest.Do(t, tg.Client, "RPUSH", "redisson_lock_queue:{"+key+"}", ghost)
	locktest.Do(t, tg.Client, "ZADD", "redisson_lock_timeout:{"+key+"}", strconv.FormatInt(until.UnixMilli(), 10), ghost)

	_, err := l.TryLock(ctx, key, time.Second)
	var ne *lockbridge.NotObtainedError
	require.ErrorAs(t, err, &ne)
	assert.Zero(t, ne.HolderTTL, "nobody holds it")
	assert.Equal(t, `redisson: lock "`+key+`" not obtained: a queued waiter is ahead ("`+ghost+
		`", keeping its place until `+
		until.UTC().Format("2006-01-02T15:04:05.000Z")+` if it does not take its turn)`, err.Error())
	assert.NotContains(t, err.Error(), "0s more")

	// Lock giving up says the same.
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = l.Lock(wctx, key, time.Second)
	cancel()
	locktest.GaveUp(t, err, context.DeadlineExceeded)
	if !errors.Is(err, lockbridge.ErrUnknownOutcome) { // the deadline fell between attempts
		require.ErrorAs(t, err, &ne)
		assert.Contains(t, ne.Detail, strconv.Quote(ghost), "%v", err)
		assert.Contains(t, err.Error(), "a queued waiter is ahead")
	}

	// Held, and a waiter ahead: both.
	locktest.Do(t, tg.Client, "HSET", key, "other:1", "1")
	locktest.Do(t, tg.Client, "PEXPIRE", key, "30000")
	_, err = l.TryLock(ctx, key, time.Second)
	require.ErrorAs(t, err, &ne)
	assert.Greater(t, ne.HolderTTL, 20*time.Second)
	assert.Regexp(t, `not obtained: held by another for [0-9.]+s more, a queued waiter is ahead \("`+ghost,
		err.Error())

	// Held, queue empty: the holder only.
	locktest.Do(t, tg.Client, "DEL", "redisson_lock_queue:{"+key+"}", "redisson_lock_timeout:{"+key+"}")
	_, err = l.TryLock(ctx, key, time.Second)
	require.ErrorAs(t, err, &ne)
	assert.Empty(t, ne.Detail)
	assert.Regexp(t, `not obtained: held by another for [0-9.]+s more$`, err.Error())
}
