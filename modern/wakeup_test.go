package modern_test

import (
	"context"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/modern"
)

// calls returns how many times the server ran cmd (INFO commandstats, which
// counts the commands scripts run too; cmd as INFO names it, e.g.
// "publish" or "pubsub|numsub").
func calls(t *testing.T, c driver.Client, cmd string) int {
	t.Helper()
	info, ok := locktest.Do(t, c, "INFO", "commandstats").(string)
	require.True(t, ok)
	for _, line := range strings.Split(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		require.NoError(t, err)
		return n
	}
	return 0
}

// TestReleasePublishesOnlyWhenSomeoneWaits: a release that nobody waits
// for publishes nothing (the script counts the channel's subscribers
// first); one with a subscriber publishes, and the subscriber hears it;
// once it unsubscribed, releases are silent again.
func TestReleasePublishesOnlyWhenSomeoneWaits(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := locktest.Ctx(t)
	l := modern.New(c)
	key := locktest.Key(t, "k")
	cycle := func() {
		t.Helper()
		lk, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		require.NoError(t, lk.Unlock(ctx))
	}

	for i := 0; i < 10; i++ {
		cycle()
	}
	assert.Equal(t, 0, calls(t, c, "publish"), "nobody waits: no release publishes")
	assert.Equal(t, 10, calls(t, c, "pubsub|numsub"), "every release counted the subscribers")

	ch := "{" + key + "}:released"
	sub, err := c.Subscribe(ctx, ch)
	require.NoError(t, err)
	cycle()
	select {
	case m := <-sub.Messages():
		assert.Equal(t, driver.Message{Channel: ch, Payload: "released"}, m)
	case <-time.After(5 * time.Second):
		t.Fatal("a subscriber was not notified")
	}
	assert.Equal(t, 1, calls(t, c, "publish"))

	require.NoError(t, sub.Close())
	require.Eventually(t, func() bool {
		n, ok := locktest.Do(t, c, "PUBSUB", "NUMSUB", ch).([]any)
		return ok && len(n) == 2 && n[1] == int64(0)
	}, 5*time.Second, time.Millisecond, "the server saw the unsubscribe")
	cycle()
	assert.Equal(t, 1, calls(t, c, "publish"), "no subscriber left: silent again")
}

// TestNoLostWakeUpRacingSubscribe races a release against a waiter's
// subscription, hundreds of times: the holder releases at a random moment
// while the waiter makes its first attempt, subscribes and attempts again.
// The waiter's backoff is an hour and the holder's lease a minute, so only a
// release notice (or the attempt after the subscription's confirmation)
// can give it the lock within its 10 s: a release published to nobody
// because it was counted between the waiter's miss and its subscription,
// with no attempt after, would leave the waiter stuck. Runs on one server
// (go-redis and redigo: PUBLISH and PUBSUB NUMSUB) and on a cluster
// (SPUBLISH and PUBSUB SHARDNUMSUB).
func TestNoLostWakeUpRacingSubscribe(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		t.Parallel()
		ctx := locktest.Ctx(t)
		holders := modern.New(tg.Client)
		slow := lockbridge.LinearBackoff(time.Hour, time.Hour)
		shared := modern.New(tg.Client, modern.WithBackoff(slow))
		rng := rand.New(rand.NewSource(1))
		const rounds = 200
		for i := 0; i < rounds; i++ {
			key := locktest.Key(t, "k"+strconv.Itoa(i))
			held, err := holders.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			waiter := shared
			if i%4 == 0 {
				// A Locker of its own: it opens a subscription (a
				// connection) instead of adding a channel to an open one.
				waiter = modern.New(tg.Client, modern.WithBackoff(slow))
			}
			delay := time.Duration(rng.Int63n(int64(2 * time.Millisecond)))
			released := make(chan error, 1)
			go func() {
				time.Sleep(delay)
				released <- held.Unlock(ctx)
			}()
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			lk, err := waiter.Lock(wctx, key, time.Minute)
			cancel()
			require.NoError(t, <-released)
			require.NoError(t, err, "round %d (release after %v): the waiter missed the release", i, delay)
			require.NoError(t, lk.Unlock(ctx))
		}
	})
}
