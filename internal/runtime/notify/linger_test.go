package notify_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
)

// stat returns a field of INFO section on c's server, as a number (0 when
// absent: a command never called has no commandstats line).
func stat(t *testing.T, c driver.Client, section, field string) int {
	t.Helper()
	info := locktest.Do(t, c, "INFO", section).(string)
	for _, line := range strings.Split(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, field)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, ','); i >= 0 {
			rest = rest[:i]
		}
		n, err := strconv.Atoi(rest)
		require.NoError(t, err, line)
		return n
	}
	return 0
}

// connections is how many connections c's server has accepted so far.
func connections(t *testing.T, c driver.Client) int {
	return stat(t, c, "stats", "total_connections_received:")
}

// subscribes is how many SUBSCRIBE commands c's server has run.
func subscribes(t *testing.T, c driver.Client) int {
	return stat(t, c, "commandstats", "cmdstat_subscribe:calls=")
}

// With a linger, a channel whose last waiter left stays subscribed, and the
// subscription open: the next Wait on it within the linger sends nothing
// and opens no connection. The linger then ends by itself: the channel is
// unsubscribed and the connection closed.
func TestHubLingerKeepsTheSubscription(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	const linger = 300 * time.Millisecond
	h := notify.New(tg.Client, notify.Linger(linger))
	ch, _ := notify.Channel(locktest.Key(t, "k"))
	w := make(chan struct{}, 1)
	rel, err := h.Wait(ctx, ch, w)
	require.NoError(t, err)
	rel()
	assert.True(t, h.Open(), "lingers")
	assert.True(t, h.Subscribed(ch))
	assert.Equal(t, 1, h.Lingering())
	conns, subs := connections(t, tg.Client), subscribes(t, tg.Client)
	for i := 0; i < 20; i++ {
		rel, err := h.Wait(ctx, ch, w)
		require.NoError(t, err)
		assert.Equal(t, 0, h.Lingering(), "waited on: no longer lingering")
		assert.Equal(t, int64(1), publish(t, tg.Client, ch))
		assert.True(t, woken(w, 5*time.Second))
		rel()
	}
	assert.Equal(t, conns, connections(t, tg.Client), "no new connection for 20 waits")
	assert.Equal(t, subs, subscribes(t, tg.Client), "no SUBSCRIBE for 20 waits")

	start := time.Now()
	require.Eventually(t, func() bool { return !h.Open() }, 5*time.Second, time.Millisecond, "the linger ends")
	assert.GreaterOrEqual(t, time.Since(start), linger/2, "not before the linger")
	assert.False(t, h.Subscribed(ch))
	assert.Equal(t, 0, h.Lingering())
	require.Eventually(t, func() bool { return publish(t, tg.Client, ch) == 0 }, 5*time.Second, 5*time.Millisecond,
		"unsubscribed on the server")
}

// Two channels, one waited on and one lingering: the lingering one alone is
// unsubscribed after the linger, and the subscription stays open for the
// other.
func TestHubLingerEndsPerChannel(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	h := notify.New(tg.Client, notify.Linger(100*time.Millisecond))
	chA, _ := notify.Channel(locktest.Key(t, "a"))
	chB, _ := notify.Channel(locktest.Key(t, "b"))
	wa, wb := make(chan struct{}, 1), make(chan struct{}, 1)
	relA, err := h.Wait(ctx, chA, wa)
	require.NoError(t, err)
	relB, err := h.Wait(ctx, chB, wb)
	require.NoError(t, err)
	defer relB()
	relA()
	require.Eventually(t, func() bool { return publish(t, tg.Client, chA) == 0 }, 5*time.Second, 5*time.Millisecond,
		"a unsubscribed after its linger")
	assert.True(t, h.Open())
	assert.True(t, h.Subscribed(chB))
	assert.Equal(t, int64(1), publish(t, tg.Client, chB))
	assert.True(t, woken(wb, 5*time.Second))
}

// A Mark taken on a subscribed channel covers the time until WaitFrom: a
// notice in between (heard while nobody waited) wakes the waiter at once;
// without one it sleeps. A Mark taken while the channel was not subscribed
// covers nothing, and WaitFrom subscribes.
func TestHubMarkCoversTheGap(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	h := notify.New(tg.Client, notify.Linger(time.Minute))
	defer func() { require.NoError(t, h.Close()) }()
	ch, _ := notify.Channel(locktest.Key(t, "k"))
	w := make(chan struct{}, 1)

	m := h.Since(ch)
	assert.False(t, m.Covers(), "not subscribed yet")
	rel, covered, err := h.WaitFrom(ctx, ch, w, m)
	require.NoError(t, err)
	assert.False(t, covered, "subscribed only now: attempt again")
	rel()

	m = h.Since(ch) // lingering: covers
	require.True(t, m.Covers())
	assert.Equal(t, int64(1), publish(t, tg.Client, ch), "the lingering channel hears the release")
	require.Eventually(t, func() bool { return !h.Since(ch).Covers() || h.Since(ch) != m }, 5*time.Second,
		time.Millisecond, "the notice is counted")
	rel, covered, err = h.WaitFrom(ctx, ch, w, m)
	require.NoError(t, err)
	assert.True(t, covered)
	assert.True(t, woken(w, 0), "the release after the mark wakes the waiter at once")
	rel()

	m = h.Since(ch)
	rel, covered, err = h.WaitFrom(ctx, ch, w, m)
	require.NoError(t, err)
	assert.True(t, covered)
	assert.True(t, quiet(w), "no release since the mark: sleeps")
	rel()
}

// A subscription lost while a channel lingers drops the channel: a Mark
// taken before the loss covers nothing any more (WaitFrom subscribes
// anew), and the hub opens a fresh subscription after RetryAfter.
func TestHubLingerLost(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	h := notify.New(tg.Client, notify.Linger(time.Minute), notify.RetryAfter(50*time.Millisecond))
	defer func() { require.NoError(t, h.Close()) }()
	ch, _ := notify.Channel(locktest.Key(t, "k"))
	w := make(chan struct{}, 1)
	rel, err := h.Wait(ctx, ch, w)
	require.NoError(t, err)
	rel()
	m := h.Since(ch)
	require.True(t, m.Covers())
	_, err = tg.Client.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !h.Open() }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 0, h.Lingering())
	var covered bool
	require.Eventually(t, func() bool {
		rel, covered, err = h.WaitFrom(ctx, ch, w, m)
		rel()
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "resubscribed after RetryAfter")
	assert.False(t, covered, "the mark was taken on the lost subscription")
}

// Close ends a linger at once, its timer included (TestMain checks that no
// goroutine is left).
func TestHubCloseEndsTheLinger(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	h := notify.New(tg.Client, notify.Linger(time.Hour))
	ch, _ := notify.Channel(locktest.Key(t, "k"))
	w := make(chan struct{}, 1)
	rel, err := h.Wait(ctx, ch, w)
	require.NoError(t, err)
	rel()
	require.True(t, h.Open())
	require.NoError(t, h.Close())
	assert.False(t, h.Open())
	assert.Equal(t, 0, h.Lingering())
	_, _, err = h.WaitFrom(context.Background(), ch, w, notify.Mark{})
	assert.ErrorIs(t, err, notify.ErrClosed)
}

// At most MaxLingering channels linger; the others are unsubscribed as
// their last waiter leaves.
func TestHubLingerBounded(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	h := notify.New(tg.Client, notify.Linger(time.Hour))
	defer func() { require.NoError(t, h.Close()) }()
	w := make(chan struct{}, 1)
	for i := 0; i < notify.MaxLingering+10; i++ {
		ch, _ := notify.Channel(locktest.Key(t, strconv.Itoa(i)))
		rel, err := h.Wait(ctx, ch, w)
		require.NoError(t, err)
		rel()
	}
	assert.Equal(t, notify.MaxLingering, h.Lingering())
	last, _ := notify.Channel(locktest.Key(t, strconv.Itoa(notify.MaxLingering+9)))
	assert.False(t, h.Subscribed(last), "past the bound: unsubscribed at once")
}

// Many goroutines waiting and leaving at once with a short linger: no
// deadlock, no leak, and the hub ends closed after the linger.
func TestHubLingerConcurrent(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := ctxT(t)
	h := notify.New(tg.Client, notify.Linger(2*time.Millisecond))
	done := make(chan struct{})
	for g := 0; g < 16; g++ {
		go func(g int) {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 50; i++ {
				ch, _ := notify.Channel(locktest.Key(t, string(rune('a'+(g+i)%4))))
				w := make(chan struct{}, 1)
				rel, err := h.Wait(ctx, ch, w)
				assert.NoError(t, err)
				if i%7 == 0 {
					time.Sleep(3 * time.Millisecond) // let a linger end meanwhile
				}
				rel()
			}
		}(g)
	}
	for g := 0; g < 16; g++ {
		<-done
	}
	require.Eventually(t, func() bool { return !h.Open() }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 0, h.Lingering())
}
