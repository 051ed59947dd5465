package javareplay_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder forwards to a real client, records the Java commands, and runs
// a hook just before a GETSET goes out.
type recorder struct {
	driver.Client
	mu           sync.Mutex
	cmds         []string
	beforeGetSet func()
}

func (r *recorder) rec(cmd string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, cmd)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cmds
	r.cmds = nil
	return c
}

func (r *recorder) SetNX(ctx context.Context, k, v string) (bool, error) {
	r.rec("SETNX " + k + " " + v)
	return r.Client.SetNX(ctx, k, v)
}

func (r *recorder) Get(ctx context.Context, k string) (string, bool, error) {
	r.rec("GET " + k)
	return r.Client.Get(ctx, k)
}

func (r *recorder) GetSet(ctx context.Context, k, v string) (string, bool, error) {
	r.rec("GETSET " + k + " " + v)
	if f := r.beforeGetSet; f != nil {
		r.beforeGetSet = nil
		f()
	}
	return r.Client.GetSet(ctx, k, v)
}

func (r *recorder) Del(ctx context.Context, k string) (bool, error) {
	r.rec("DEL " + k)
	return r.Client.Del(ctx, k)
}

func stored(t *testing.T, c driver.Client, key string) (string, bool) {
	t.Helper()
	v, ok, err := c.Get(context.Background(), key)
	require.NoError(t, err)
	return v, ok
}

func at(ms int64) func() time.Time { return func() time.Time { return time.UnixMilli(ms) } }

func TestSeed(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		r := &recorder{Client: tg.Client}

		t.Run("SetNX", func(t *testing.T) {
			key := locktest.Key(t, "k")
			w, ok, err := javareplay.Lock(ctx, r, key, time.Second, at(1699999999000))
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, int64(1700000000001), w, "now + lease + 1, in ms")
			assert.Equal(t, []string{"SETNX " + key + " 1700000000001"}, r.take())
			v, _ := stored(t, tg.Client, key)
			assert.Equal(t, "1700000000001", v)
			ttl, err := tg.Client.Do(ctx, "PTTL", key)
			require.NoError(t, err)
			assert.Equal(t, int64(-1), ttl, "no TTL")
		})

		t.Run("LiveNotTaken", func(t *testing.T) {
			key := locktest.Key(t, "k")
			for _, live := range []string{"1700000000000", "1700000000001"} {
				_, err := tg.Client.Do(ctx, "SET", key, live)
				require.NoError(t, err)
				_, ok, err := javareplay.Lock(ctx, r, key, time.Second, at(1700000000000))
				require.NoError(t, err)
				assert.False(t, ok)
				assert.Equal(t, []string{"SETNX " + key + " 1700000001001", "GET " + key}, r.take())
				v, _ := stored(t, tg.Client, key)
				assert.Equal(t, live, v)
			}
		})

		t.Run("ExpiredTakenOver", func(t *testing.T) {
			key := locktest.Key(t, "k")
			_, err := tg.Client.Do(ctx, "SET", key, "1699999999999")
			require.NoError(t, err)
			w, ok, err := javareplay.Lock(ctx, r, key, time.Second, at(1700000000000))
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, []string{"SETNX " + key + " 1700000001001", "GET " + key, "GETSET " + key + " 1700000001001"},
				r.take())
			v, _ := stored(t, tg.Client, key)
			assert.Equal(t, fmt.Sprint(w), v)
		})

		t.Run("Phantom", func(t *testing.T) {
			key := locktest.Key(t, "k")
			_, err := tg.Client.Do(ctx, "SET", key, "1")
			require.NoError(t, err)
			r.beforeGetSet = func() { _, _ = tg.Client.Del(ctx, key) }
			w, ok, err := javareplay.Lock(ctx, r, key, time.Second, at(1700000000000))
			require.NoError(t, err)
			assert.False(t, ok, "a nil GETSET: the seed reports failure")
			r.take()
			v, present := stored(t, tg.Client, key)
			assert.True(t, present)
			assert.Equal(t, fmt.Sprint(w), v, "yet its value stays: the phantom")
		})

		t.Run("LoserOverwrites", func(t *testing.T) {
			key := locktest.Key(t, "k")
			_, err := tg.Client.Do(ctx, "SET", key, "1")
			require.NoError(t, err)
			r.beforeGetSet = func() { _, _ = tg.Client.Do(ctx, "SET", key, "1700000005000") } // a winner
			w, ok, err := javareplay.Lock(ctx, r, key, time.Second, at(1700000000000))
			require.NoError(t, err)
			assert.False(t, ok)
			r.take()
			v, _ := stored(t, tg.Client, key)
			assert.Equal(t, fmt.Sprint(w), v, "the loser's GETSET overwrote the winner's value")
		})

		t.Run("NumberFormatException", func(t *testing.T) {
			key := locktest.Key(t, "k")
			for _, v := range []string{"uuid:1", "1.0", "", " 1"} {
				_, err := tg.Client.Do(ctx, "SET", key, v)
				require.NoError(t, err)
				_, ok, err := javareplay.Lock(ctx, r, key, time.Second, nil)
				assert.False(t, ok)
				var nfe *javareplay.NumberFormatError
				require.ErrorAs(t, err, &nfe, "%q", v)
				assert.Equal(t, v, nfe.Input)
				assert.Contains(t, err.Error(), "NumberFormatException")
				r.take()
			}
			// Acquire throws too, rather than polling forever.
			_, err := javareplay.Acquire(ctx, r, key, time.Second, nil)
			assert.ErrorAs(t, err, new(*javareplay.NumberFormatError))
			r.take()
		})

		t.Run("UnlockTimeChecked", func(t *testing.T) {
			key := locktest.Key(t, "k")
			_, err := tg.Client.Do(ctx, "SET", key, "someone else's")
			require.NoError(t, err)
			require.NoError(t, javareplay.Unlock(ctx, r, key, 1700000000001, at(1700000000001)))
			assert.Empty(t, r.take(), "not before W: no DEL")
			require.NoError(t, javareplay.Unlock(ctx, r, key, 1700000000001, at(1700000000000)))
			assert.Equal(t, []string{"DEL " + key}, r.take(), "DEL, whatever the key holds")
			_, present := stored(t, tg.Client, key)
			assert.False(t, present)
		})

		t.Run("Acquire", func(t *testing.T) {
			key := locktest.Key(t, "k")
			w, ok, err := javareplay.Lock(ctx, tg.Client, key, 150*time.Millisecond, nil)
			require.NoError(t, err)
			require.True(t, ok)
			w2, err := javareplay.Acquire(ctx, tg.Client, key, time.Minute, nil)
			require.NoError(t, err)
			assert.Greater(t, time.Now().UnixMilli(), w, "after the first lease ended")
			v, _ := stored(t, tg.Client, key)
			assert.Equal(t, fmt.Sprint(w2), v)

			dctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
			defer cancel()
			_, err = javareplay.Acquire(dctx, tg.Client, key, time.Minute, nil)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			require.NoError(t, javareplay.Unlock(ctx, tg.Client, key, w2, nil))
		})

		t.Run("RedisErrors", func(t *testing.T) {
			key := locktest.Key(t, "list")
			_, err := tg.Client.Do(ctx, "RPUSH", key, "x")
			require.NoError(t, err)
			_, _, err = javareplay.Lock(ctx, tg.Client, key, time.Second, nil)
			assert.True(t, driver.HasPrefix(err, "WRONGTYPE"), "%v", err)
			assert.False(t, errors.As(err, new(*javareplay.NumberFormatError)))
		})
	})
}
