package modern_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/modern"
)

// slowPoll is a backoff that never retries within a test's life (a waiter
// sleeps the holder's remaining lease, a minute in these tests): whatever
// gets a waiter going again within the test is a wake, not its poll.
var slowPoll = modern.WithBackoff(lockbridge.LinearBackoff(time.Hour, time.Hour))

// queueUp starts n Lock calls of l on key, one after the other, each in line
// before the next starts; each sends its index on got once it holds the
// lock, releases it after a short hold and sends its error on done.
func queueUp(t *testing.T, ctx context.Context, l *modern.Locker, key string, n int, got chan<- int,
	done chan<- error) {
	t.Helper()
	before := modern.Waiting(l, key)
	for i := 0; i < n; i++ {
		go func(i int) {
			lk, err := l.Lock(ctx, key, time.Minute)
			if err != nil {
				done <- err
				return
			}
			got <- i
			time.Sleep(time.Millisecond)
			done <- lk.Unlock(context.Background())
		}(i)
		eventually(t, func() bool { return modern.Waiting(l, key) == before+i+1 }, "waiter in line")
	}
}

// A Locker's waiters on one key get the lock in the order they called Lock,
// whether release notices are on or off: a release by the same Locker wakes
// the next in line itself (with them off and a backoff that would sleep past
// the test, nothing else could), and the next in line starts the moment the
// one before it has the lock.
func TestLockWaitersServedInOrder(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		for _, tc := range []struct {
			name string
			opts []modern.Option
		}{
			{"notifications", nil},
			{"no notifications, slow poll", []modern.Option{modern.WithNotifications(false), slowPoll}},
			{"pollers", []modern.Option{modern.WithPollers(20 * time.Millisecond)}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := locktest.Ctx(t)
				key := locktest.Key(t, "k")
				l := modern.New(tg.Client, tc.opts...)
				holder, err := l.TryLock(ctx, key, time.Minute)
				require.NoError(t, err)
				const n = 6
				got, done := make(chan int, n), make(chan error, n)
				queueUp(t, ctx, l, key, n, got, done)
				require.NoError(t, holder.Unlock(ctx))
				for i := 0; i < n; i++ {
					require.NoError(t, <-done)
				}
				close(got)
				var order []int
				for i := range got {
					order = append(order, i)
				}
				assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, order)
				assert.Zero(t, modern.WaitingKeys(l), "the line ended with its last waiter")
				lingerEnds(t, l, "the subscription closed with the line")
			})
		}
	})
}

// A waiter whose context ends leaves the line, from its middle or its head,
// and the next one goes on: the line never stalls behind a waiter that left.
func TestLockWaiterLeavesTheLine(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		l := modern.New(tg.Client, modern.WithNotifications(false), slowPoll)
		holder, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)

		type result struct {
			lk  lockbridge.Lock
			err error
		}
		var cancels []context.CancelFunc
		var results []chan result
		for i := 0; i < 3; i++ {
			wctx, cancel := context.WithCancel(ctx)
			cancels = append(cancels, cancel)
			r := make(chan result, 1)
			results = append(results, r)
			go func() {
				lk, err := l.Lock(wctx, key, time.Minute)
				r <- result{lk, err}
			}()
			eventually(t, func() bool { return modern.Waiting(l, key) == i+1 }, "waiter in line")
		}
		defer func() {
			for _, c := range cancels {
				c()
			}
		}()

		cancels[1]() // the middle one
		r := <-results[1]
		require.ErrorIs(t, r.err, lockbridge.ErrNotObtained)
		require.ErrorIs(t, r.err, context.Canceled)
		assert.Equal(t, 2, modern.Waiting(l, key))

		cancels[0]() // the head
		r = <-results[0]
		require.ErrorIs(t, r.err, lockbridge.ErrNotObtained)
		require.ErrorIs(t, r.err, context.Canceled)
		assert.Equal(t, 1, modern.Waiting(l, key))

		// The last one is the head now; the holder's release wakes it.
		require.NoError(t, holder.Unlock(ctx))
		r = <-results[2]
		require.NoError(t, r.err)
		assert.Zero(t, modern.WaitingKeys(l))
		require.NoError(t, r.lk.Unlock(ctx))
	})
}

// TryLock does not queue: with a line of waiters asleep and the key free
// (released by another Locker, which wakes nobody here with notifications
// off), TryLock takes it; its release then wakes the line's head.
func TestTryLockDoesNotQueue(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		holder, err := modern.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		l := modern.New(tg.Client, modern.WithNotifications(false), slowPoll)
		const n = 2
		got, done := make(chan int, n), make(chan error, n)
		queueUp(t, ctx, l, key, n, got, done)
		require.NoError(t, holder.Unlock(ctx))

		lk, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err, "TryLock takes a free key past the line")
		assert.Equal(t, n, modern.Waiting(l, key), "the line still waits")
		assert.Empty(t, got)
		require.NoError(t, lk.Unlock(ctx))
		for i := 0; i < n; i++ {
			require.NoError(t, <-done)
		}
		assert.Equal(t, 0, <-got)
		assert.Equal(t, 1, <-got)
	})
}

// A lock found lost wakes the line too: a Refresh that finds the key gone
// sends the head to the key at once.
func TestLostLockWakesTheLine(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		l := modern.New(tg.Client, modern.WithNotifications(false), slowPoll)
		holder, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		got, done := make(chan int, 1), make(chan error, 1)
		queueUp(t, ctx, l, key, 1, got, done)
		locktest.Do(t, tg.Client, "DEL", key) // the lease gone behind the holder's back
		require.ErrorIs(t, holder.Refresh(ctx, time.Minute), lockbridge.ErrNotHeld)
		require.NoError(t, <-done)
		assert.Equal(t, 0, <-got)
	})
}

// Exclusion stays the server's: many goroutines on two Lockers (one
// client each) contend for one key, counted by a guard that is not the
// lock.
func TestLineExclusion(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		guard := locktest.NewGuard(tg.Client, key)
		lockers := []*modern.Locker{
			modern.New(tg.Client),
			modern.New(locktest.GoRedis(t, tg.Server), modern.WithNotifications(false)),
		}
		const goroutines, cycles = 12, 15
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func(l *modern.Locker) {
				defer wg.Done()
				for i := 0; i < cycles; i++ {
					lk, err := l.Lock(ctx, key, time.Minute)
					if !assert.NoError(t, err) {
						return
					}
					guard.Hold(t, 200*time.Microsecond)
					assert.NoError(t, lk.Unlock(ctx))
				}
			}(lockers[g%2])
		}
		wg.Wait()
		assert.Zero(t, guard.Violations())
		assert.EqualValues(t, goroutines*cycles, guard.Entries())
		for _, l := range lockers {
			assert.Zero(t, modern.WaitingKeys(l))
		}
	})
}

// A waiter of another process (another Locker, on a client of its own) is
// not starved by a busy line of this one: it gets the lock every time. Its
// waits are logged (speed is for the benchmarks).
func TestLineLetsOutsidersIn(t *testing.T) {
	srv := locktest.Single(t)[0].Server
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	insider := modern.New(locktest.GoRedis(t, srv))
	outsider := modern.New(locktest.GoRedis(t, srv))
	guard := locktest.NewGuard(locktest.GoRedis(t, srv), key)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				lk, err := insider.Lock(ctx, key, time.Minute)
				if !assert.NoError(t, err) {
					return
				}
				guard.Hold(t, time.Millisecond)
				assert.NoError(t, lk.Unlock(ctx))
			}
		}()
	}
	eventually(t, func() bool { return modern.Waiting(insider, key) >= 4 }, "a busy line")
	var waits []time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		lk, err := outsider.Lock(ctx, key, time.Minute)
		require.NoError(t, err, "outsider attempt %d", i)
		waits = append(waits, time.Since(start))
		guard.Hold(t, time.Millisecond)
		require.NoError(t, lk.Unlock(ctx))
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, guard.Violations())
	slices.Sort(waits)
	t.Logf("outsider's waits among 6 insiders: median %v, max %v; %d cycles in all",
		waits[len(waits)/2], waits[len(waits)-1], guard.Entries())
	assert.Zero(t, modern.WaitingKeys(insider))
}

// Lines do not outlive their waiters: Lock calls on many keys that end by
// their context, and others that get their lock, leave no line, no
// registration and no goroutine behind (TestMain checks the goroutines).
func TestLinesEndWithTheirWaiters(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		other := modern.New(tg.Client)
		l := modern.New(tg.Client)
		const keys = 200
		var held []lockbridge.Lock
		for i := 0; i < keys; i++ {
			lk, err := other.TryLock(ctx, locktest.Key(t, fmt.Sprint(i)), time.Minute)
			require.NoError(t, err)
			held = append(held, lk)
		}
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		errs := make(chan error, 2*keys)
		for i := 0; i < 2*keys; i++ {
			wg.Add(1)
			go func(key string, ctx context.Context) {
				defer wg.Done()
				lk, err := l.Lock(ctx, key, time.Minute)
				if err == nil {
					err = lk.Unlock(context.Background())
				}
				errs <- err
			}(locktest.Key(t, fmt.Sprint(i%keys)), map[bool]context.Context{true: wctx, false: ctx}[i < keys])
		}
		eventually(t, func() bool { return modern.WaitingKeys(l) == keys }, "every key has a line")
		cancel() // half the waiters give up
		for _, lk := range held[:keys/2] {
			require.NoError(t, lk.Unlock(ctx)) // the other half get half the keys
		}
		for _, lk := range held[keys/2:] {
			require.NoError(t, lk.Unlock(ctx)) // and then the rest
		}
		wg.Wait()
		close(errs)
		var ok, gaveUp int
		for err := range errs {
			if err == nil {
				ok++
				continue
			}
			// Given up while waiting (not obtained), or while an attempt
			// was on its way (an unknown outcome: it may still land).
			if !errors.Is(err, lockbridge.ErrUnknownOutcome) {
				require.ErrorIs(t, err, lockbridge.ErrNotObtained)
			}
			require.ErrorIs(t, err, context.Canceled)
			gaveUp++
		}
		assert.Equal(t, 2*keys, ok+gaveUp)
		assert.GreaterOrEqual(t, ok, keys, "every waiter whose context lived got its lock")
		assert.Zero(t, modern.WaitingKeys(l), "no line left")
		lingerEnds(t, l, "no subscription left")
	})
}

// Releases by other processes reach the line through its subscription,
// which stays with the line from one head to the next: each head, woken by
// nothing but the release notice (a backoff that would sleep past the
// test), gets the lock in turn.
func TestLineWokenByOthersReleases(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		ch, ok := notify.Channel(key)
		require.True(t, ok)
		holder, err := modern.New(tg.Client).TryLock(ctx, key, time.Minute)
		require.NoError(t, err)
		l := modern.New(tg.Client, slowPoll)
		const n = 4
		type got struct {
			i  int
			lk lockbridge.Lock
		}
		gots, errs := make(chan got, n), make(chan error, n)
		for i := 0; i < n; i++ {
			go func(i int) {
				lk, err := l.Lock(ctx, key, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				gots <- got{i, lk}
			}(i)
			eventually(t, func() bool { return modern.Waiting(l, key) == i+1 }, "waiter in line")
		}
		require.NoError(t, holder.Unlock(ctx)) // another Locker's release: a notice only
		for i := 0; i < n; i++ {
			var g got
			select {
			case g = <-gots:
			case err := <-errs:
				require.NoError(t, err)
			}
			assert.Equal(t, i, g.i)
			if i == n-1 {
				require.NoError(t, g.lk.Unlock(ctx))
				break
			}
			// Let the next head make its attempt, then free the key as
			// another process's release does: DEL, then the notice.
			time.Sleep(20 * time.Millisecond)
			locktest.Do(t, tg.Client, "DEL", key)
			locktest.Do(t, tg.Client, "PUBLISH", ch, notify.Payload)
		}
		assert.Zero(t, modern.WaitingKeys(l))
		lingerEnds(t, l, "the subscription closed")
	})
}

// The next in line does not attempt while the waiter before it holds the
// lock (the attempt would find the key taken): it waits for the holder's
// release — and, should the holder never release, no longer than the
// holder's lease, after which it gets the lock as any waiter would.
func TestNextInLineWaitsForTheHolder(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		l := modern.New(tg.Client, modern.WithNotifications(false), slowPoll)
		blocker, err := l.TryLock(ctx, key, time.Minute)
		require.NoError(t, err)

		// first waits in line, then holds for 300 ms and never releases.
		first := make(chan lockbridge.Lock, 1)
		go func() {
			lk, err := l.Lock(ctx, key, 300*time.Millisecond)
			assert.NoError(t, err)
			first <- lk
		}()
		eventually(t, func() bool { return modern.Waiting(l, key) == 1 }, "first in line")
		second := make(chan error, 1)
		go func() {
			lk, err := l.Lock(ctx, key, time.Minute)
			if err == nil {
				err = lk.Unlock(ctx)
			}
			second <- err
		}()
		eventually(t, func() bool { return modern.Waiting(l, key) == 2 }, "second in line")
		before := calls(t, tg.Client, "set")
		require.NoError(t, blocker.Unlock(ctx))
		lk := <-first
		// Until the first's lease ends, the second sends nothing.
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, before+1, calls(t, tg.Client, "set"), "only the first's acquire: the second waits for its release")
		assert.Equal(t, 1, modern.Waiting(l, key))
		// The first never releases: its lease ends, and the second, whose
		// backoff is an hour, gets the lock then.
		require.NoError(t, <-second)
		_ = lk
	})
}
