package modern_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
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

// roundTrips is a driver.Client that counts the commands it sends: one
// round trip each (a subscription counts one per Subscribe call).
type roundTrips struct {
	driver.Client
	n atomic.Int64
}

func (c *roundTrips) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	c.n.Add(1)
	return c.Client.Eval(ctx, s, keys, args...)
}

func (c *roundTrips) SetNXPX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	c.n.Add(1)
	return c.Client.SetNXPX(ctx, key, value, ttl)
}

func (c *roundTrips) Do(ctx context.Context, args ...any) (any, error) {
	c.n.Add(1)
	return c.Client.Do(ctx, args...)
}

func (c *roundTrips) Subscribe(ctx context.Context, channels ...string) (driver.Subscription, error) {
	c.n.Add(1)
	return c.Client.Subscribe(ctx, channels...)
}

// A waiting Lock's attempts after its first failed one are one round trip
// each, the holder's lease included: the acquire script answers with it.
// (The first attempt is the plain SET, then the ttl script when it finds
// the key taken.) The lease learnt bounds the wait.
func TestWaitingAttemptIsOneRoundTrip(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		for _, fencing := range []bool{false, true} {
			t.Run("fencing="+strconv.FormatBool(fencing), func(t *testing.T) {
				opts := []modern.Option{modern.WithNotifications(false)}
				if fencing {
					opts = append(opts, modern.WithFencing())
				}
				_, err := modern.New(tg.Client, opts...).TryLock(ctx, key, 400*time.Millisecond)
				require.NoError(t, err)
				c := &roundTrips{Client: tg.Client}
				var tokens countingTokens
				waiter := modern.New(c, append(opts, modern.WithTokenFunc(tokens.token),
					modern.WithBackoff(tries{n: 6, d: 5 * time.Millisecond}))...)
				// Scripts loaded, and the plain SET allowed, before counting.
				warm, err := waiter.TryLock(ctx, key+":warm", time.Second)
				require.NoError(t, err)
				require.NoError(t, warm.Unlock(ctx))
				c.n.Store(0)
				tokens.n.Store(0)

				_, err = waiter.Lock(ctx, key, time.Second)
				var no *lockbridge.NotObtainedError
				require.ErrorAs(t, err, &no, "the backoff gave up")
				assert.Greater(t, no.HolderTTL, time.Duration(0), "the last attempt read the holder's lease")
				assert.LessOrEqual(t, no.HolderTTL, 400*time.Millisecond)
				attempts := tokens.n.Load()
				require.Equal(t, int64(6), attempts)
				want := attempts // one round trip per attempt...
				if !fencing {
					want++ // ...but the first, a SET and the ttl script
				}
				assert.Equal(t, want, c.n.Load(), "%d attempts", attempts)

				// Waiting out the lease (no release), a waiter gets the
				// lock soon after it ends.
				lk, err := modern.New(tg.Client, opts...).Lock(ctx, key, time.Second)
				require.NoError(t, err)
				require.NoError(t, lk.Unlock(ctx))
			})
		}
	})
}

// subscriptions returns, over servers, the ids of the pub/sub connections
// and how many SUBSCRIBE and SSUBSCRIBE commands ran.
func subscriptions(t *testing.T, cs []driver.Client) (ids []string, subscribes int) {
	for i, c := range cs {
		list := locktest.Do(t, c, "CLIENT", "LIST", "TYPE", "pubsub").(string)
		for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
			if id, _, ok := strings.Cut(line, " "); ok && id != "" {
				ids = append(ids, strconv.Itoa(i)+"/"+id)
			}
		}
		info := locktest.Do(t, c, "INFO", "commandstats").(string)
		for _, line := range strings.Split(info, "\r\n") {
			for _, f := range []string{"cmdstat_subscribe:calls=", "cmdstat_ssubscribe:calls="} {
				if rest, ok := strings.CutPrefix(line, f); ok {
					n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
					require.NoError(t, err)
					subscribes += n
				}
			}
		}
	}
	return ids, subscribes
}

// Consecutive waits of a Locker on a key keep its subscription: from the
// second wait on, the same pub/sub connection serves them and nothing is
// subscribed (no SUBSCRIBE or SSUBSCRIBE), and every wait still ends on the
// release notice (the waiter's backoff is an hour). After the linger the
// subscription closes by itself. On one server and on a 3-master cluster.
func TestConsecutiveWaitsKeepTheSubscription(t *testing.T) {
	srv := redistest.Start(t)
	cl := redistest.StartCluster(t)
	var masters []driver.Client
	for _, n := range cl.Nodes() {
		masters = append(masters, locktest.GoRedis(t, n))
	}
	for _, tc := range []struct {
		name    string
		c       driver.Client
		servers []driver.Client
	}{
		{"goredis", locktest.GoRedis(t, srv), []driver.Client{locktest.GoRedis(t, srv)}},
		{"redigo", locktest.Redigo(t, srv), []driver.Client{locktest.GoRedis(t, srv)}},
		{"cluster", locktest.GoRedisCluster(t, cl), masters},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			holders := modern.New(tc.c)
			waiter := modern.New(tc.c, modern.WithBackoff(lockbridge.LinearBackoff(time.Hour, time.Hour)))
			var ids []string
			var subs int
			for round := 0; round < 6; round++ {
				held, err := holders.TryLock(ctx, key, time.Minute)
				require.NoError(t, err)
				got := make(chan lockbridge.Lock, 1)
				go func() {
					wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
					lk, err := waiter.Lock(wctx, key, time.Minute)
					assert.NoError(t, err, "round %d: the release notice woke the waiter", round)
					got <- lk
				}()
				eventually(t, func() bool { return modern.HubWaiters(waiter, key) == 1 }, "the waiter waits")
				require.NoError(t, held.Unlock(ctx))
				lk := <-got
				require.NotNil(t, lk)
				require.NoError(t, lk.Unlock(ctx))
				if round == 0 {
					ids, subs = subscriptions(t, tc.servers)
					require.Len(t, ids, 1, "one pub/sub connection")
				}
			}
			ids2, subs2 := subscriptions(t, tc.servers)
			assert.Equal(t, ids, ids2, "the same pub/sub connection for 5 more waits")
			assert.Equal(t, subs, subs2, "no SUBSCRIBE or SSUBSCRIBE for 5 more waits")
			assert.True(t, modern.HubOpen(waiter), "lingers")
			lingerEnds(t, waiter, "no waiter for a linger")
			require.NoError(t, waiter.Close())
		})
	}
}

// WithNotifyLinger(0) closes the subscription as the last waiter returns;
// Close ends a linger at once; a negative linger is invalid.
func TestNotifyLingerOption(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	for _, linger := range []time.Duration{0, time.Hour} {
		held, err := modern.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		waiter := modern.New(tg.Client, modern.WithNotifyLinger(linger))
		got := make(chan lockbridge.Lock, 1)
		go func() {
			lk, err := waiter.Lock(ctx, key, time.Minute)
			assert.NoError(t, err)
			got <- lk
		}()
		eventually(t, func() bool { return modern.HubWaiters(waiter, key) == 1 }, "the waiter waits")
		require.NoError(t, held.Unlock(ctx))
		lk := <-got
		require.NoError(t, lk.Unlock(ctx))
		if linger == 0 {
			assert.False(t, modern.HubOpen(waiter), "no linger: closed with the last waiter")
			continue
		}
		assert.True(t, modern.HubOpen(waiter))
		require.NoError(t, waiter.Close())
		assert.False(t, modern.HubOpen(waiter), "Close ends the linger")
		require.NoError(t, waiter.Close(), "twice")
		// After Close, Lock polls.
		lk, err = waiter.Lock(ctx, key, time.Minute)
		require.NoError(t, err)
		require.NoError(t, lk.Unlock(ctx))
		assert.False(t, modern.HubOpen(waiter))
	}
	_, err := modern.New(tg.Client, modern.WithNotifyLinger(-time.Second)).TryLock(ctx, key, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
	assert.NoError(t, (*modern.Locker)(nil).Close())
}

// tries is a backoff that allows n attempts, d apart.
type tries struct {
	n int
	d time.Duration
}

func (b tries) Delay(n int) (time.Duration, bool) { return b.d, n < b.n }

// Waiters of several Lockers (each on a client of its own, as processes
// are) contending for one key, with notifications and an hour's backoff:
// only release notices, and the ordering's own delays, let a waiter in.
// They order their attempts (see elderFirst) and keep their subscriptions
// between waits, and still no waiter misses a release — every call gets the
// lock — and the guard never sees two holders. On one server and on a
// cluster.
func TestLockersTakeTurns(t *testing.T) {
	srv := redistest.Start(t)
	cl := redistest.StartCluster(t)
	for _, tc := range []struct {
		name string
		c    func() driver.Client
	}{
		{"goredis", func() driver.Client { return locktest.GoRedis(t, srv) }},
		{"cluster", func() driver.Client { return locktest.GoRedisCluster(t, cl) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			guard := locktest.NewGuard(tc.c(), key)
			const lockers, each, cycles = 4, 2, 25
			done := make(chan error, lockers*each)
			for i := 0; i < lockers; i++ {
				l := modern.New(tc.c(), modern.WithBackoff(lockbridge.LinearBackoff(time.Hour, time.Hour)))
				t.Cleanup(func() { assert.NoError(t, l.Close()) })
				for g := 0; g < each; g++ {
					go func() {
						for n := 0; n < cycles; n++ {
							wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
							lk, err := l.Lock(wctx, key, time.Minute)
							cancel()
							if err != nil {
								done <- err
								return
							}
							guard.Hold(t, 200*time.Microsecond)
							if err := lk.Unlock(ctx); err != nil {
								done <- err
								return
							}
						}
						done <- nil
					}()
				}
			}
			for i := 0; i < lockers*each; i++ {
				require.NoError(t, <-done, "a waiter missed a release")
			}
			assert.Equal(t, int64(lockers*each*cycles), guard.Entries())
			assert.Zero(t, guard.Violations())
		})
	}
}
