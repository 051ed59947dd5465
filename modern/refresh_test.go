package modern_test

import (
	"context"
	"fmt"
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

// autoRefreshHolds: a 300 ms lease, auto-refreshed, is still ours after 2 s.
func autoRefreshHolds(t *testing.T, c driver.Client) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	lk, err := modern.New(c, modern.WithAutoRefresh()).TryLock(ctx, key, 300*time.Millisecond)
	require.NoError(t, err)
	first := lk.ExpiresAt()
	time.Sleep(2 * time.Second)
	v, ok := locktest.Get(t, c, key)
	require.True(t, ok, "the key is still there after more than six leases")
	assert.Equal(t, lk.Token(), v)
	assert.Greater(t, locktest.PTTL(t, c, key), int64(0))
	assert.NoError(t, lk.Err())
	assert.True(t, lk.ExpiresAt().After(first.Add(time.Second)), "the local lease moved along")
	select {
	case <-lk.Done():
		t.Fatal("Done closed while held")
	default:
	}
	require.NoError(t, lk.Unlock(ctx))
	assert.NoError(t, lk.Err())
	_, ok = locktest.Get(t, c, key)
	assert.False(t, ok)
}

// autoRefreshLostOnDelete: deleting the key from outside closes Done with
// ErrLost at the next refresh.
func autoRefreshLostOnDelete(t *testing.T, c driver.Client) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	lk, err := modern.New(c, modern.WithAutoRefresh()).TryLock(ctx, key, 300*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(150 * time.Millisecond) // a refresh or so in
	locktest.Do(t, c, "DEL", key)
	deleted := time.Now()
	require.True(t, waitDone(t, lk, 5*time.Second), "Done closes once the key is gone")
	t.Logf("Done closed %v after the DEL (refresh period 100ms)", time.Since(deleted).Round(time.Millisecond))
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
	var nh *lockbridge.NotHeldError
	require.ErrorAs(t, lk.Err(), &nh, "a refresh found it gone: %v", lk.Err())
	assert.Equal(t, lockbridge.ReasonGone, nh.Reason)
	assert.True(t, strings.HasPrefix(lk.Err().Error(), "modern: lock lost: "), lk.Err().Error())
	err = lk.Unlock(ctx)
	assert.ErrorIs(t, err, lockbridge.ErrNotHeld)
	assert.ErrorIs(t, lk.Err(), lockbridge.ErrLost, "Err stays lost")
}

func TestAutoRefresh(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		t.Run("holds", func(t *testing.T) { t.Parallel(); autoRefreshHolds(t, tg.Client) })
		t.Run("lost on delete", func(t *testing.T) { t.Parallel(); autoRefreshLostOnDelete(t, tg.Client) })
		t.Run("lost when taken", func(t *testing.T) {
			t.Parallel()
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			lk, err := modern.New(tg.Client, modern.WithAutoRefresh()).TryLock(ctx, key, 300*time.Millisecond)
			require.NoError(t, err)
			locktest.Do(t, tg.Client, "SET", key, "intruder", "PX", 60000)
			require.True(t, waitDone(t, lk, 5*time.Second))
			var nh *lockbridge.NotHeldError
			require.ErrorAs(t, lk.Err(), &nh)
			assert.Equal(t, lockbridge.ReasonTaken, nh.Reason)
			v, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, "intruder", v)
			assert.Greater(t, locktest.PTTL(t, tg.Client, key), int64(50000), "the refresher never touches another's lease")
		})
	})
}

// The server stops or hangs: the lock is declared lost before its lease
// ends, by the local clock.
func TestAutoRefreshLostWhenRedisGoes(t *testing.T) {
	clients := map[string]func(testing.TB, *redistest.Server) driver.Client{
		"goredis": locktest.GoRedis,
		"redigo":  locktest.Redigo,
	}
	for name, newClient := range clients {
		name, newClient := name, newClient
		for _, fault := range []string{"stop", "pause"} {
			fault := fault
			t.Run(name+"/"+fault, func(t *testing.T) {
				t.Parallel()
				srv := redistest.Start(t)
				c := newClient(t, srv)
				ctx := locktest.Ctx(t)
				lk, err := modern.New(c, modern.WithAutoRefresh()).TryLock(ctx, "k", 300*time.Millisecond)
				require.NoError(t, err)
				time.Sleep(120 * time.Millisecond) // one refresh in
				var leaseEnd time.Time
				if fault == "stop" {
					srv.Stop()
				} else {
					srv.Pause()
					t.Cleanup(srv.Resume)
				}
				leaseEnd = lk.ExpiresAt() // no refresh can succeed from here on
				require.True(t, waitDone(t, lk, 5*time.Second), "Done closes")
				closed := time.Now()
				t.Logf("Done closed %v before the local lease end", leaseEnd.Sub(closed).Round(time.Millisecond))
				assert.True(t, closed.Before(leaseEnd), "Done closed %v after the lease ended", closed.Sub(leaseEnd))
				require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
				assert.False(t, strings.Contains(fmt.Sprint(lk.Err()), "not held"), "the cause is the Redis error: %v", lk.Err())
				uctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				assert.Error(t, lk.Unlock(uctx))
			})
		}
	}
}

// Unlock stops the refresher: no refresh reaches Redis afterwards.
func TestUnlockStopsRefresh(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := locktest.Ctx(t)
		key := locktest.Key(t, "k")
		lk, err := modern.New(tg.Client, modern.WithAutoRefresh()).TryLock(ctx, key, 60*time.Millisecond)
		require.NoError(t, err)
		time.Sleep(50 * time.Millisecond) // a refresh in
		require.NoError(t, lk.Unlock(ctx))
		before := scriptCalls(t, tg.Client)
		time.Sleep(100 * time.Millisecond) // five refresh periods
		assert.Equal(t, before, scriptCalls(t, tg.Client), "no script ran after Unlock")
		assert.NoError(t, lk.Err())
	})
}

// scriptCalls counts EVAL and EVALSHA calls so far. The server is the test's
// own; calls from the other adapter's subtest are over by then.
func scriptCalls(t *testing.T, c driver.Client) string {
	t.Helper()
	info := locktest.Do(t, c, "INFO", "commandstats").(string)
	var out []string
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "cmdstat_eval") {
			calls, _, _ := strings.Cut(line, ",usec=")
			out = append(out, strings.TrimSpace(calls))
		}
	}
	return strings.Join(out, " ")
}
