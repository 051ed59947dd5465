package notify_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/logtest"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the tests if any goroutine outlives them: a hub's reader
// must stop when its last waiter leaves.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var publishScript = driver.NewScript("notify_test/publish.lua",
	"-- publishes 'released' on KEYS[1] with the command ARGV[1]; returns the receivers\n"+
		"return redis.call(ARGV[1], KEYS[1], 'released')")

func publish(t *testing.T, c driver.Client, ch string) int64 {
	t.Helper()
	n, err := c.Eval(context.Background(), publishScript, []string{ch}, notify.PublishCommand(c))
	require.NoError(t, err)
	return n.(int64)
}

func woken(wake <-chan struct{}, d time.Duration) bool {
	select { // a wake already there wins over a zero wait
	case <-wake:
		return true
	default:
	}
	select {
	case <-wake:
		return true
	case <-time.After(d):
		return false
	}
}

func quiet(wake <-chan struct{}) bool {
	select {
	case <-wake:
		return false
	case <-time.After(30 * time.Millisecond):
		return true
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestChannel(t *testing.T) {
	for key, want := range map[string]string{
		"order:42":      "{order:42}:released",
		"{order}:42":    "{order}:42:released",
		"a{b":           "{a{b}:released",
		"\xac\xed\x00t": "{\xac\xed\x00t}:released",
	} {
		ch, ok := notify.Channel(key)
		assert.True(t, ok, key)
		assert.Equal(t, want, ch, key)
		assert.Equal(t, keyslot.Of(key), keyslot.Of(ch), "%q: same slot", key)
	}
	for _, key := range []string{"a}b", "{}x"} {
		_, ok := notify.Channel(key)
		assert.False(t, ok, "%q: no channel name hashes to the key's slot", key)
	}
}

func TestPublishCommand(t *testing.T) {
	tgs := locktest.Single(t)
	assert.Equal(t, "PUBLISH", notify.PublishCommand(tgs[0].Client))
	assert.Equal(t, "PUBLISH", notify.PublishCommand(tgs[1].Client))
}

// TestHub runs the hub's behaviour on go-redis, redigo and a cluster.
func TestHub(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		t.Parallel()
		t.Run("wakes on publish", func(t *testing.T) { t.Parallel(); wakesOnPublish(t, tg) })
		t.Run("shared and closed", func(t *testing.T) { t.Parallel(); sharedAndClosed(t, tg) })
		t.Run("close", func(t *testing.T) { t.Parallel(); closeHub(t, tg) })
	})
}

func wakesOnPublish(t *testing.T, tg locktest.Target) {
	ctx := ctxT(t)
	h := notify.New(tg.Client)
	ch, _ := notify.Channel(locktest.Key(t, "k"))
	wake := make(chan struct{}, 1)
	release, err := h.Wait(ctx, ch, wake)
	require.NoError(t, err)
	defer release()
	assert.True(t, h.Subscribed(ch))
	// Wait returned: the subscription is confirmed, the publish is heard.
	assert.Equal(t, int64(1), publish(t, tg.Client, ch))
	assert.True(t, woken(wake, 5*time.Second))
	other, _ := notify.Channel(locktest.Key(t, "other"))
	publish(t, tg.Client, other)
	assert.True(t, quiet(wake), "another key's release does not wake")

	// Two channels, one wake channel: either wakes.
	release2, err := h.Wait(ctx, other, wake)
	require.NoError(t, err)
	defer release2()
	publish(t, tg.Client, other)
	assert.True(t, woken(wake, 5*time.Second))
}

func sharedAndClosed(t *testing.T, tg locktest.Target) {
	ctx := ctxT(t)
	h := notify.New(tg.Client)
	chA, _ := notify.Channel(locktest.Key(t, "a"))
	chB, _ := notify.Channel(locktest.Key(t, "b"))
	var wakes []chan struct{}
	var releases []func()
	for i := 0; i < 6; i++ {
		w := make(chan struct{}, 1)
		ch := chA
		if i%2 == 1 {
			ch = chB
		}
		rel, err := h.Wait(ctx, ch, w)
		require.NoError(t, err)
		wakes, releases = append(wakes, w), append(releases, rel)
	}
	// One subscriber per channel however many waiters; a release wakes one
	// waiter of its channel.
	assert.Equal(t, int64(1), publish(t, tg.Client, chA))
	require.Eventually(t, func() bool { return pending(wakes) == 1 }, 5*time.Second, time.Millisecond)
	assert.True(t, quiet(wakes[1]) && quiet(wakes[3]) && quiet(wakes[5]), "b's waiters sleep on")
	assert.Equal(t, 1, pending(wakes), "exactly one of a's waiters is woken")
	// Three releases wake all three (each picks one with no wake pending).
	publish(t, tg.Client, chA)
	publish(t, tg.Client, chA)
	require.Eventually(t, func() bool { return pending(wakes) == 3 }, 5*time.Second, time.Millisecond)
	for i := 0; i < 6; i += 2 {
		<-wakes[i]
	}

	// A waiter that leaves with a wake it did not act on passes it on.
	publish(t, tg.Client, chA)
	require.Eventually(t, func() bool { return pending(wakes) == 1 }, 5*time.Second, time.Millisecond)
	for i := 0; i < 6; i += 2 {
		if len(wakes[i]) == 1 {
			releases[i]()
			releases[i] = func() {}
			break
		}
	}
	assert.Equal(t, 2, pending(wakes), "the leaver's wake went to another waiter of a")
	for i := 0; i < 6; i += 2 {
		select {
		case <-wakes[i]:
		default:
		}
	}
	// The last waiter of a leaves: a is unsubscribed, b still heard.
	for i := 0; i < 6; i += 2 {
		releases[i]()
	}
	assert.False(t, h.Subscribed(chA))
	require.Eventually(t, func() bool { return publish(t, tg.Client, chA) == 0 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, int64(1), publish(t, tg.Client, chB))
	require.Eventually(t, func() bool { return pending(wakes) == 1 }, 5*time.Second, time.Millisecond,
		"one of b's waiters")
	assert.True(t, h.Open())
	// The last waiter of all: the subscription is closed.
	for i := 1; i < 6; i += 2 {
		releases[i]()
		releases[i]() // twice is harmless
	}
	assert.False(t, h.Open())
	require.Eventually(t, func() bool { return publish(t, tg.Client, chB) == 0 }, 5*time.Second, 5*time.Millisecond)

	// And a new waiter opens a fresh one.
	w := make(chan struct{}, 1)
	rel, err := h.Wait(ctx, chA, w)
	require.NoError(t, err)
	publish(t, tg.Client, chA)
	assert.True(t, woken(w, 5*time.Second))
	rel()
	assert.False(t, h.Open())
}

// pending counts the wake channels with a wake in them.
func pending(wakes []chan struct{}) int {
	n := 0
	for _, w := range wakes {
		n += len(w)
	}
	return n
}

func closeHub(t *testing.T, tg locktest.Target) {
	ctx := ctxT(t)
	h := notify.New(tg.Client)
	ch, _ := notify.Channel(locktest.Key(t, "k"))
	w := make(chan struct{}, 1)
	rel, err := h.Wait(ctx, ch, w)
	require.NoError(t, err)
	require.NoError(t, h.Close())
	assert.True(t, woken(w, 0), "Close wakes the waiters")
	assert.False(t, h.Open())
	rel()
	_, err = h.Wait(ctx, ch, w)
	assert.ErrorIs(t, err, notify.ErrClosed)
	assert.NoError(t, h.Close(), "twice")
}

// Many goroutines waiting and leaving at once: no deadlock, no leak, and
// the hub ends closed.
func TestHubConcurrent(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	h := notify.New(tg.Client)
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				ch, _ := notify.Channel(locktest.Key(t, string(rune('a'+(g+i)%4))))
				w := make(chan struct{}, 1)
				rel, err := h.Wait(ctx, ch, w)
				assert.NoError(t, err)
				rel()
			}
		}(g)
	}
	wg.Wait()
	assert.False(t, h.Open())
}

// Without the right to subscribe (an ACL user with no channels), Wait
// fails — the waiter polls — and the hub waits RetryAfter before trying
// again.
func TestHubSubscribeRefused(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	_, err := tg.Client.Do(ctx, "ACL", "SETUSER", "nochannels", "on", ">secret", "~*", "resetchannels", "+@all")
	require.NoError(t, err)
	rc := goredislib.NewClient(&goredislib.Options{Addr: tg.Server.Addr(), Username: "nochannels", Password: "secret",
		MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	c := goredis.New(rc)

	rec, log := logtest.New()
	h := notify.New(c, notify.RetryAfter(200*time.Millisecond), notify.Logger(log))
	ch, _ := notify.Channel(locktest.Key(t, "k"))
	w := make(chan struct{}, 1)
	rel, err := h.Wait(ctx, ch, w)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NOPERM")
	logged := rec.Records("subscribing failed")
	require.Len(t, logged, 1, "the failure is logged")
	assert.Equal(t, slog.LevelWarn, logged[0].Level)
	assert.Contains(t, logged[0].Attrs["error"], "NOPERM")
	assert.False(t, h.Open())
	defer rel()

	rel2, err := h.Wait(ctx, ch, w)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not subscribing for another", "within RetryAfter the hub does not try")
	rel2()

	time.Sleep(250 * time.Millisecond)
	rel3, err := h.Wait(ctx, ch, w)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NOPERM", "after RetryAfter it tries again")
	rel3()
}

// A lost subscription wakes its waiters; a later Wait resubscribes every
// channel with waiters, and the earlier waiters hear releases again.
func TestHubSubscriptionLost(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := ctxT(t)
		rec, log := logtest.New()
		h := notify.New(tg.Client, notify.RetryAfter(50*time.Millisecond), notify.Logger(log))
		chA, _ := notify.Channel(locktest.Key(t, "a"))
		chB, _ := notify.Channel(locktest.Key(t, "b"))
		wa := make(chan struct{}, 1)
		relA, err := h.Wait(ctx, chA, wa)
		require.NoError(t, err)
		defer relA()

		_, err = tg.Client.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub")
		require.NoError(t, err)
		assert.True(t, woken(wa, 5*time.Second), "the loss wakes the waiter: it may have missed a release")
		require.Eventually(t, func() bool { return !h.Open() }, 5*time.Second, time.Millisecond)
		_, logged := rec.Wait("subscription lost", 5*time.Second)
		assert.True(t, logged, "the loss is logged")

		wb := make(chan struct{}, 1)
		var relB func()
		require.Eventually(t, func() bool {
			if relB != nil {
				relB()
			}
			relB, err = h.Wait(ctx, chB, wb)
			return err == nil
		}, 5*time.Second, 10*time.Millisecond, "resubscribed after RetryAfter")
		defer relB()
		assert.True(t, woken(wa, 5*time.Second), "the resubscription wakes the earlier waiter")
		assert.True(t, h.Subscribed(chA), "and covers its channel")
		publish(t, tg.Client, chA)
		assert.True(t, woken(wa, 5*time.Second))
	})
}

// A Wait whose context ends while subscribing returns that error and does
// not count against the server.
func TestHubWaitContextEnded(t *testing.T) {
	tg := locktest.Single(t)[0]
	h := notify.New(tg.Client)
	ch, _ := notify.Channel(locktest.Key(t, "k"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := make(chan struct{}, 1)
	rel, err := h.Wait(ctx, ch, w)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	rel()
	rel, err = h.Wait(ctxT(t), ch, w)
	assert.NoError(t, err, "no retry delay after the caller's own cancellation")
	rel()
	assert.False(t, h.Open())
	assert.False(t, strings.Contains(err2s(err), "not subscribing"))
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
