package faultproxy_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/resp"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func direct(t *testing.T, srv *redistest.Server, args ...string) any {
	t.Helper()
	c, err := resp.Dial(srv.Addr(), 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	v, err := c.Do(args...)
	require.NoError(t, err)
	return v
}

func TestPassesThrough(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: p.Addr(), Protocol: proto, MaxRetries: -1})
		ctx := context.Background()
		require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
		assert.Equal(t, "v", c.Get(ctx, "k").Val())
		require.NoError(t, c.HSet(ctx, "h", "a", "1", "b", "2").Err())
		assert.Equal(t, map[string]string{"a": "1", "b": "2"}, c.HGetAll(ctx, "h").Val(), "RESP%d maps", proto)
		cmds, err := c.Pipelined(ctx, func(pp redis.Pipeliner) error {
			pp.Incr(ctx, "n")
			pp.Incr(ctx, "n")
			pp.Get(ctx, "missing")
			return nil
		})
		require.ErrorIs(t, err, redis.Nil)
		assert.Len(t, cmds, 3)
		require.NoError(t, c.Close())
	}
}

// The dropped command runs on the server; the client sees its connection
// end, or waits until its own timeout.
func TestDropReply(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	ctx := context.Background()

	t.Run("Close", func(t *testing.T) {
		c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1})
		defer c.Close()
		p.DropReply(faultproxy.Command("SET"), 1, faultproxy.Close)
		err := c.Set(ctx, "close", "1", 0).Err()
		require.Error(t, err)
		assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF), "%v", err)
		assert.Equal(t, "1", direct(t, srv, "GET", "close"), "the command ran")
		require.NoError(t, c.Set(ctx, "close", "2", 0).Err(), "once: the next SET passes")
		assert.Equal(t, 1, p.Dropped())
	})

	t.Run("Hang", func(t *testing.T) {
		c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 200 * time.Millisecond})
		defer c.Close()
		p.DropReply(faultproxy.Command("INCR"), 1, faultproxy.Hang)
		err := c.Incr(ctx, "hang").Err()
		var ne interface{ Timeout() bool }
		require.ErrorAs(t, err, &ne)
		assert.True(t, ne.Timeout())
		assert.Equal(t, "1", direct(t, srv, "GET", "hang"))
	})

	t.Run("Script", func(t *testing.T) {
		s := driver.NewScript("t.lua", "return redis.call('INCR', KEYS[1])")
		c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1})
		defer c.Close()
		require.NoError(t, c.Do(ctx, "SCRIPT", "LOAD", s.Source()).Err())
		sent := p.Count(faultproxy.Script(s))
		p.DropReply(faultproxy.Script(s), 1, faultproxy.Close)
		require.Error(t, c.Do(ctx, "EVALSHA", s.Hash(), "1", "script").Err())
		assert.Equal(t, "1", direct(t, srv, "GET", "script"))
		assert.Equal(t, 1, sent())
		v, err := c.Do(ctx, "EVALSHA", s.Hash(), "1", "script").Result()
		require.NoError(t, err)
		assert.Equal(t, int64(2), v)
		assert.Equal(t, 2, sent())
	})

	t.Run("Pipeline", func(t *testing.T) {
		// The second command's reply is the one dropped: the first's was
		// passed on before the connection closed.
		c, err := resp.Dial(p.Addr(), 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		p.DropReply(faultproxy.Command("DECR"), 1, faultproxy.Close)
		v, err := c.Do("INCR", "pipe")
		require.NoError(t, err)
		assert.Equal(t, int64(1), v)
		_, err = c.Do("DECR", "pipe")
		require.Error(t, err)
		assert.Equal(t, "0", direct(t, srv, "GET", "pipe"))
	})
}

func TestCutAndDown(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	require.NoError(t, c.Ping(ctx).Err())
	// Cut a command in flight: it is held back by the delay meanwhile.
	p.Delay(time.Second)
	go func() { time.Sleep(100 * time.Millisecond); p.Cut() }()
	require.Error(t, c.Ping(ctx).Err(), "the connection was cut under the command")
	p.Delay(0)
	require.NoError(t, c.Ping(ctx).Err(), "a new connection gets through")
	p.Down(true)
	require.Error(t, c.Ping(ctx).Err())
	require.Error(t, c.Ping(ctx).Err(), "new connections are closed at once")
	p.Down(false)
	require.NoError(t, c.Ping(ctx).Err())
}

func TestRetarget(t *testing.T) {
	srvs := redistest.StartN(t, 2)
	p := faultproxy.Start(t, srvs[0].Addr())
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	require.NoError(t, c.Set(ctx, "k", "first", 0).Err())
	p.Retarget(srvs[1].Addr())
	// The pooled connection was cut (the client may notice before using
	// it); the next command reaches the new server.
	_ = c.Ping(ctx).Err()
	require.NoError(t, c.Set(ctx, "k", "second", 0).Err())
	assert.Equal(t, "first", direct(t, srvs[0], "GET", "k"))
	assert.Equal(t, "second", direct(t, srvs[1], "GET", "k"))
}

func TestDelay(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx).Err())
	p.Delay(300 * time.Millisecond)
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	assert.Error(t, c.Set(tctx, "late", "1", 0).Err(), "the reply comes after the client gave up")
	p.Delay(0)
	require.Eventually(t, func() bool { return direct(t, srv, "GET", "late") == "1" }, 5*time.Second, 10*time.Millisecond,
		"the delayed command still ran")
}
