package drivertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Factory makes the clients under test.
type Factory struct {
	// New returns a client for the single redis-server at addr. It should
	// close the client in t.Cleanup.
	New func(t *testing.T, addr string) driver.Client
	// NewCluster returns a client for the Redis Cluster whose nodes are at
	// addrs; nil when the adapter has no cluster client.
	NewCluster func(t *testing.T, addrs []string) driver.Client
}

// A JDK-serialized java.lang.String key, as Spring's default RedisTemplate
// writes "lock:order": binary bytes a client must pass through untouched.
const jdkKey = "\xac\xed\x00\x05t\x00\x0alock:order"

// A value with a NUL, a high byte and invalid UTF-8.
const binaryValue = "a\x00b\xff\xfe\r\n"

var (
	echoScript = driver.NewScript("drivertest/echo.lua",
		"-- returns KEYS[1], ARGV[1], an integer, a nested array and a status\n"+
			"return {KEYS[1], ARGV[1], 42, {'x', 7}, redis.status_reply('OK')}")
	nilScript = driver.NewScript("drivertest/nil.lua", "-- returns nil\nreturn false")
	getScript = driver.NewScript("drivertest/get.lua", "-- returns GET KEYS[1]\nreturn redis.call('GET', KEYS[1])")
	twoKeys   = driver.NewScript("drivertest/twokeys.lua",
		"-- sets both keys, returns the number set\nredis.call('SET', KEYS[1], ARGV[1]) redis.call('SET', KEYS[2], ARGV[1]) return 2")
	publishScript = driver.NewScript("drivertest/publish.lua",
		"-- publishes ARGV[2] on KEYS[1] with the command ARGV[1]; returns the receivers\n"+
			"return redis.call(ARGV[1], KEYS[1], ARGV[2])")
)

// Run runs the whole suite.
func Run(t *testing.T, f Factory) {
	t.Run("Single", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		c := f.New(t, srv.Addr())
		runCommon(t, c, false)
		t.Run("LiteralCommands", func(t *testing.T) { literalCommands(t, c) })
		t.Run("ScriptFlushFallback", func(t *testing.T) { scriptFlush(t, c, c) })
	})
	t.Run("Faults", func(t *testing.T) {
		t.Parallel()
		faults(t, f)
	})
	t.Run("NoResend", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		p := faultproxy.Start(t, srv.Addr())
		noResend(t, f.New(t, p.Addr()), p)
	})
	t.Run("ErrorClasses", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		errorClasses(t, f.New(t, srv.Addr()))
	})
	if f.NewCluster != nil {
		t.Run("Cluster", func(t *testing.T) {
			t.Parallel()
			cl := redistest.StartCluster(t)
			c := f.NewCluster(t, cl.Addrs())
			require.True(t, c.Cluster(), "a cluster client must report Cluster()")
			runCommon(t, c, true)
			t.Run("KeysOnDifferentSlots", func(t *testing.T) { clusterSlots(t, c) })
			t.Run("IdleShardConnectionsClose", func(t *testing.T) {
				var nodes []driver.Client
				for _, n := range cl.Nodes() {
					nodes = append(nodes, f.New(t, n.Addr()))
				}
				idleShards(t, c, nodes)
			})
			t.Run("ScriptFlushFallback", func(t *testing.T) {
				// SCRIPT FLUSH on every node, then EVALSHA must fall back.
				for _, n := range cl.Nodes() {
					nc := f.New(t, n.Addr())
					_, err := nc.Do(context.Background(), "SCRIPT", "FLUSH")
					require.NoError(t, err)
				}
				scriptFlush(t, c, nil)
			})
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// k makes a key unique to the running test.
func k(t *testing.T, name string) string { return t.Name() + ":" + name }

func runCommon(t *testing.T, c driver.Client, cluster bool) {
	t.Run("NilReplies", func(t *testing.T) {
		ctx := ctx(t)
		v, ok, err := c.Get(ctx, k(t, "missing"))
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, "", v)

		old, ok, err := c.GetSet(ctx, k(t, "fresh"), "1")
		require.NoError(t, err, "a nil GETSET reply is not an error")
		assert.False(t, ok)
		assert.Equal(t, "", old)

		r, err := c.Eval(ctx, nilScript, []string{k(t, "x")})
		require.NoError(t, err)
		assert.Nil(t, r)

		r, err = c.Eval(ctx, getScript, []string{k(t, "missing")})
		require.NoError(t, err)
		assert.Nil(t, r)

		deleted, err := c.Del(ctx, k(t, "missing"))
		require.NoError(t, err)
		assert.False(t, deleted)
	})

	t.Run("ReplyTypes", func(t *testing.T) {
		r, err := c.Eval(ctx(t), echoScript, []string{k(t, "key")}, "arg")
		require.NoError(t, err)
		assert.Equal(t, []any{k(t, "key"), "arg", int64(42), []any{"x", int64(7)}, "OK"}, r)

		r, err = c.Do(ctx(t), "SET", k(t, "s"), "v")
		require.NoError(t, err)
		assert.Equal(t, "OK", r)
		r, err = c.Do(ctx(t), "INCR", k(t, "n"))
		require.NoError(t, err)
		assert.Equal(t, int64(1), r)
		r, err = c.Do(ctx(t), "GET", k(t, "s"))
		require.NoError(t, err)
		assert.Equal(t, "v", r, "bulk strings come back as string, never []byte")

		_, err = c.Do(ctx(t), "HSET", k(t, "h"), "f1", "v1", "f2", "v2")
		require.NoError(t, err)
		r, err = c.Do(ctx(t), "HGETALL", k(t, "h"))
		require.NoError(t, err)
		flat, ok := r.([]any)
		require.True(t, ok, "a map reply comes back as a flat array (RESP2 form), got %T", r)
		require.Len(t, flat, 4)
		got := map[any]any{flat[0]: flat[1], flat[2]: flat[3]}
		assert.Equal(t, map[any]any{"f1": "v1", "f2": "v2"}, got)
	})

	t.Run("JavaCommands", func(t *testing.T) {
		ctx := ctx(t)
		key := k(t, "lock")
		ok, err := c.SetNX(ctx, key, "100")
		require.NoError(t, err)
		assert.True(t, ok)
		ok, err = c.SetNX(ctx, key, "200")
		require.NoError(t, err)
		assert.False(t, ok)

		old, ok, err := c.GetSet(ctx, key, "300")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "100", old)
		v, ok, err := c.Get(ctx, key)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "300", v)

		deleted, err := c.Del(ctx, key)
		require.NoError(t, err)
		assert.True(t, deleted)
		_, ok, err = c.Get(ctx, key)
		require.NoError(t, err)
		assert.False(t, ok)
	})

	t.Run("SetNXPX", func(t *testing.T) {
		ctx := ctx(t)
		key := k(t, "lock")
		ok, err := c.SetNXPX(ctx, key, "tok", 5*time.Second)
		require.NoError(t, err)
		assert.True(t, ok)
		ok, err = c.SetNXPX(ctx, key, "other", 5*time.Second)
		require.NoError(t, err)
		assert.False(t, ok)
		pttl, err := c.Do(ctx, "PTTL", key)
		require.NoError(t, err)
		assert.Greater(t, pttl.(int64), int64(4000))
		assert.LessOrEqual(t, pttl.(int64), int64(5000))
		v, _, err := c.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, "tok", v)

		_, err = c.SetNXPX(ctx, k(t, "zero"), "x", time.Microsecond)
		assert.Error(t, err, "a ttl below 1 ms cannot be sent as PX")
	})

	t.Run("BinarySafe", func(t *testing.T) {
		ctx := ctx(t)
		key := jdkKey
		if cluster {
			key = jdkKey + t.Name()
		}
		t.Cleanup(func() { _, _ = c.Del(context.Background(), key) })
		ok, err := c.SetNX(ctx, key, binaryValue)
		require.NoError(t, err)
		require.True(t, ok)
		v, ok, err := c.Get(ctx, key)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, binaryValue, v)
		old, _, err := c.GetSet(ctx, key, "\xac\xed\x00\x05")
		require.NoError(t, err)
		assert.Equal(t, binaryValue, old)
		r, err := c.Eval(ctx, echoScript, []string{key}, binaryValue)
		require.NoError(t, err)
		assert.Equal(t, key, r.([]any)[0])
		assert.Equal(t, binaryValue, r.([]any)[1])
		r, err = c.Do(ctx, "STRLEN", key)
		require.NoError(t, err)
		assert.Equal(t, int64(4), r)
		deleted, err := c.Del(ctx, key)
		require.NoError(t, err)
		assert.True(t, deleted)
	})

	t.Run("WrongType", func(t *testing.T) {
		ctx := ctx(t)
		key := k(t, "list")
		_, err := c.Do(ctx, "RPUSH", key, "a")
		require.NoError(t, err)
		check := func(err error) {
			t.Helper()
			require.Error(t, err)
			var re driver.ReplyError
			require.True(t, errors.As(err, &re), "want a driver.ReplyError in %v", err)
			assert.Equal(t, "WRONGTYPE", re.Prefix())
			assert.True(t, driver.HasPrefix(err, "WRONGTYPE"))
		}
		_, _, err = c.Get(ctx, key)
		check(err)
		_, _, err = c.GetSet(ctx, key, "1")
		check(err)
		_, err = c.Eval(ctx, getScript, []string{key})
		check(err)
		ok, err := c.SetNX(ctx, key, "1")
		require.NoError(t, err, "SETNX on an existing key of another type just fails")
		assert.False(t, ok)
	})

	t.Run("CancelledContext", func(t *testing.T) {
		cctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := c.Get(cctx, k(t, "x"))
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
		_, err = c.Eval(cctx, echoScript, []string{k(t, "x")}, "a")
		assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
		_, err = c.Subscribe(cctx, k(t, "ch"))
		assert.True(t, errors.Is(err, context.Canceled), "got %v", err)

		dctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		_, err = c.SetNX(dctx, k(t, "x"), "1")
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
		// and the client still works afterwards
		_, _, err = c.Get(ctx(t), k(t, "x"))
		require.NoError(t, err)
	})

	t.Run("PubSub", func(t *testing.T) { pubSub(t, c, cluster) })
	t.Run("IdleSubscriptionSurvives", func(t *testing.T) {
		t.Parallel()
		ctx := ctx(t)
		ch := "{" + k(t, "idle") + "}:released"
		sub, err := c.Subscribe(ctx, ch)
		require.NoError(t, err)
		defer sub.Close()
		time.Sleep(time.Second) // longer than any read timeout a Factory sets
		publish := "PUBLISH"
		if cluster {
			publish = "SPUBLISH"
		}
		_, err = c.Eval(ctx, publishScript, []string{ch}, publish, "late")
		require.NoError(t, err)
		select {
		case m, ok := <-sub.Messages():
			require.True(t, ok, "the idle subscription ended: %v", sub.Err())
			assert.Equal(t, "late", m.Payload)
		case <-time.After(5 * time.Second):
			t.Fatal("no message on an idle subscription")
		}
	})
}

func pubSub(t *testing.T, c driver.Client, cluster bool) {
	ctx := ctx(t)
	publish := "PUBLISH"
	if cluster {
		publish = "SPUBLISH"
	}
	ch1, ch2 := "{"+k(t, "a")+"}:released", "{"+k(t, "b")+"}:released"
	sub, err := c.Subscribe(ctx, ch1)
	require.NoError(t, err)
	defer sub.Close()

	send := func(ch, payload string) int64 {
		t.Helper()
		n, err := c.Eval(ctx, publishScript, []string{ch}, publish, payload)
		require.NoError(t, err)
		return n.(int64)
	}
	recv := func() driver.Message {
		t.Helper()
		select {
		case m, ok := <-sub.Messages():
			require.True(t, ok, "messages closed: %v", sub.Err())
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("no message within 5s")
		}
		return driver.Message{}
	}

	// Subscribe has returned, so the subscription is active: no message lost.
	assert.Equal(t, int64(1), send(ch1, "hello\x00"))
	assert.Equal(t, driver.Message{Channel: ch1, Payload: "hello\x00"}, recv())

	require.NoError(t, sub.Subscribe(ctx, ch2))
	assert.Equal(t, int64(1), send(ch2, "two"))
	assert.Equal(t, driver.Message{Channel: ch2, Payload: "two"}, recv())

	require.NoError(t, sub.Unsubscribe(ctx, ch1))
	require.Eventually(t, func() bool { return send(ch1, "gone") == 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, int64(1), send(ch2, "still"))
	m := recv()
	for m.Payload == "gone" { // published while the unsubscribe was on its way
		assert.Equal(t, ch1, m.Channel)
		m = recv()
	}
	assert.Equal(t, driver.Message{Channel: ch2, Payload: "still"}, m)

	require.NoError(t, sub.Close())
	for range sub.Messages() { // drain what arrived before the unsubscribe took
	}
	assert.NoError(t, sub.Err())
	assert.Error(t, sub.Subscribe(ctx, ch1), "subscribing after Close fails")
}

// idleShards checks that a sharded subscription closes the connection of a
// slot once its last channel is unsubscribed, counting SSUBSCRIBE
// connections on every node with CLIENT LIST.
func idleShards(t *testing.T, c driver.Client, nodes []driver.Client) {
	ctx := ctx(t)
	shardConns := func() int {
		n := 0
		for _, nc := range nodes {
			r, err := nc.Do(ctx, "CLIENT", "LIST")
			require.NoError(t, err)
			for _, line := range strings.Split(r.(string), "\n") {
				for _, f := range strings.Fields(line) {
					if strings.HasPrefix(f, "ssub=") && f != "ssub=0" {
						n++
					}
				}
			}
		}
		return n
	}
	var chans []string
	for i := 0; i < 6; i++ {
		chans = append(chans, fmt.Sprintf("{%s:%d}:released", t.Name(), i))
	}
	sub, err := c.Subscribe(ctx, chans...)
	require.NoError(t, err)
	defer sub.Close()
	require.Greater(t, shardConns(), 1, "channels in several slots use several connections")
	require.NoError(t, sub.Unsubscribe(ctx, chans...))
	require.Eventually(t, func() bool { return shardConns() == 0 }, 5*time.Second, 10*time.Millisecond,
		"a slot's connection closes when its last channel leaves")
	require.NoError(t, sub.Subscribe(ctx, chans[0]), "and the subscription still works")
	require.Equal(t, 1, shardConns())
}

func literalCommands(t *testing.T, c driver.Client) {
	ctx := ctx(t)
	_, err := c.Do(ctx, "CONFIG", "RESETSTAT")
	require.NoError(t, err)
	key := k(t, "lock")
	_, err = c.SetNX(ctx, key, "1")
	require.NoError(t, err)
	_, _, err = c.GetSet(ctx, key, "2")
	require.NoError(t, err)
	_, _, err = c.Get(ctx, key)
	require.NoError(t, err)
	_, err = c.Del(ctx, key)
	require.NoError(t, err)
	_, err = c.SetNXPX(ctx, key, "3", time.Second)
	require.NoError(t, err)

	info, err := c.Do(ctx, "INFO", "commandstats")
	require.NoError(t, err)
	calls := commandCalls(info.(string))
	assert.Equal(t, 1, calls["setnx"], "SETNX goes on the wire literally")
	assert.Equal(t, 1, calls["getset"], "GETSET goes on the wire literally")
	assert.Equal(t, 1, calls["get"])
	assert.Equal(t, 1, calls["del"])
	assert.Equal(t, 1, calls["set"], "only SetNXPX sends SET")
}

// commandCalls parses INFO commandstats: "cmdstat_get:calls=1,usec=…".
func commandCalls(info string) map[string]int {
	calls := map[string]int{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(rest, "calls=%d", &n); err == nil {
			calls[strings.TrimPrefix(name, "cmdstat_")] = n
		}
	}
	return calls
}

// scriptFlush checks EVALSHA falls back to EVAL after SCRIPT FLUSH; flusher,
// when not nil, sends the flush.
func scriptFlush(t *testing.T, c, flusher driver.Client) {
	ctx := ctx(t)
	s := driver.NewScript("drivertest/flush.lua", "-- returns ARGV[1] and a marker\nreturn {ARGV[1], '"+t.Name()+"'}")
	key := k(t, "x")
	r, err := c.Eval(ctx, s, []string{key}, "first")
	require.NoError(t, err)
	assert.Equal(t, []any{"first", t.Name()}, r)
	if flusher != nil {
		_, err = flusher.Do(ctx, "SCRIPT", "FLUSH")
		require.NoError(t, err)
		exists, err := c.Do(ctx, "SCRIPT", "EXISTS", s.Hash())
		require.NoError(t, err)
		assert.Equal(t, []any{int64(0)}, exists)
	}
	r, err = c.Eval(ctx, s, []string{key}, "second")
	require.NoError(t, err, "EVALSHA must fall back to EVAL on NOSCRIPT")
	assert.Equal(t, []any{"second", t.Name()}, r)
	if flusher != nil {
		exists, err := c.Do(ctx, "SCRIPT", "EXISTS", s.Hash())
		require.NoError(t, err)
		assert.Equal(t, []any{int64(1)}, exists, "EVAL loaded the script again")
	}
}

func clusterSlots(t *testing.T, c driver.Client) {
	ctx := ctx(t)
	// Keys spread over all three masters.
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("%s:%d", k(t, "spread"), i)
		ok, err := c.SetNX(ctx, key, fmt.Sprint(i))
		require.NoError(t, err)
		require.True(t, ok)
		v, _, err := c.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(i), v)
	}
	tag := "{" + k(t, "tag") + "}"
	r, err := c.Eval(ctx, twoKeys, []string{tag + ":a", tag + ":b"}, "v")
	require.NoError(t, err, "a script whose keys share a slot runs")
	assert.Equal(t, int64(2), r)
	v, _, err := c.Get(ctx, tag+":b")
	require.NoError(t, err)
	assert.Equal(t, "v", v)

	_, err = c.Eval(ctx, twoKeys, []string{k(t, "slot-a"), k(t, "slot-b")}, "v")
	require.Error(t, err, "keys in different slots must be refused")
	assert.True(t, driver.HasPrefix(err, "CROSSSLOT"), "got %v", err)
}

func faults(t *testing.T, f Factory) {
	t.Run("ConnectionRefused", func(t *testing.T) {
		srv := redistest.Start(t)
		c := f.New(t, srv.Addr())
		srv.Stop()
		_, _, err := c.Get(ctx(t), "x")
		require.Error(t, err)
		var re driver.ReplyError
		assert.False(t, errors.As(err, &re), "a network error is not a reply error: %v", err)
		_, err = c.Subscribe(ctx(t), "ch")
		require.Error(t, err)
	})

	t.Run("ServerKilledMidTest", func(t *testing.T) {
		srv := redistest.Start(t)
		c := f.New(t, srv.Addr())
		ctx := ctx(t)
		ok, err := c.SetNX(ctx, "k", "1")
		require.NoError(t, err)
		require.True(t, ok)
		sub, err := c.Subscribe(ctx, "ch")
		require.NoError(t, err)
		defer sub.Close()

		srv.Kill()
		_, _, err = c.Get(ctx, "k")
		require.Error(t, err)
		assert.False(t, errors.Is(err, context.DeadlineExceeded), "failed fast, not by the deadline: %v", err)

		select {
		case _, open := <-sub.Messages():
			assert.False(t, open)
		case <-time.After(10 * time.Second):
			t.Fatal("the subscription did not notice the dead server")
		}
		assert.Error(t, sub.Err(), "a lost subscription says why")

		srv.Restart()
		require.Eventually(t, func() bool {
			_, _, err := c.Get(ctx, "k")
			return err == nil
		}, 10*time.Second, 20*time.Millisecond, "the client recovers when the server is back")
	})

	t.Run("HungServerHonoursDeadline", func(t *testing.T) {
		srv := redistest.Start(t)
		c := f.New(t, srv.Addr())
		_, _, err := c.Get(ctx(t), "warm")
		require.NoError(t, err)
		srv.Pause()
		defer srv.Resume()

		done := make(chan error, 1)
		go func() {
			dctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, _, err := c.Get(dctx, "k")
			done <- err
		}()
		select {
		case err := <-done:
			assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("a call to a hung server ignored its context deadline")
		}

		cctx, cancel := context.WithCancel(context.Background())
		go func() {
			_, err := c.Eval(cctx, echoScript, []string{"k"}, "a")
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("a call to a hung server ignored its context cancellation")
		}
	})
}

var deleteThenPublish = driver.NewScript("drivertest/delpub.lua",
	"-- deletes KEYS[1], then publishes on it; returns 1\n"+
		"redis.call('DEL', KEYS[1]) redis.call('PUBLISH', KEYS[1], 'x') return 1")

// errorClasses checks that the error replies the locks tell apart match
// their driver class with errors.Is, through the client's wrapping, and that
// a command an ACL denies inside a script is reported with the script's name
// and the commands it runs. It changes the server's default user and
// maxmemory: run it on a server of its own.
func errorClasses(t *testing.T, c driver.Client) {
	ctx := ctx(t)
	_, err := c.Do(ctx, "RPUSH", "list", "a")
	require.NoError(t, err)
	_, _, err = c.Get(ctx, "list")
	assert.ErrorIs(t, err, driver.ErrWrongType)
	assert.Equal(t, driver.ErrWrongType, driver.ClassOf(err))
	_, err = c.Eval(ctx, getScript, []string{"list"})
	assert.ErrorIs(t, err, driver.ErrWrongType)
	assert.NotErrorIs(t, err, driver.ErrNoPerm)

	_, err = c.Do(ctx, "ACL", "SETUSER", "default", "-publish")
	require.NoError(t, err)
	_, err = c.Eval(ctx, deleteThenPublish, []string{"k"})
	require.ErrorIs(t, err, driver.ErrNoPerm, "a command denied inside a script")
	assert.Contains(t, err.Error(), "drivertest/delpub.lua")
	assert.Contains(t, err.Error(), "DEL, PUBLISH", "the commands the script needs are named")
	_, err = c.Do(ctx, "PUBLISH", "ch", "x")
	assert.ErrorIs(t, err, driver.ErrNoPerm, "a command denied directly")
	_, err = c.Do(ctx, "ACL", "SETUSER", "default", "+@all")
	require.NoError(t, err)

	_, err = c.Do(ctx, "CONFIG", "SET", "maxmemory", "1")
	require.NoError(t, err)
	_, err = c.SetNX(ctx, "k", "1")
	assert.ErrorIs(t, err, driver.ErrOOM)
	_, err = c.Eval(ctx, twoKeys, []string{"a", "b"}, "1")
	assert.ErrorIs(t, err, driver.ErrOOM)
	_, err = c.Do(ctx, "CONFIG", "SET", "maxmemory", "0")
	require.NoError(t, err)
}

var incrScript = driver.NewScript("drivertest/incr.lua", "-- INCRs KEYS[1], returns the count\nreturn redis.call('INCR', KEYS[1])")

// noResend checks that a command whose reply is lost — the connection
// closes, or stays silent until a deadline — is sent once, ran once, and
// comes back as an error wrapping lockbridge.ErrUnknownOutcome: the adapter
// never sends it again.
func noResend(t *testing.T, c driver.Client, p *faultproxy.Proxy) {
	ctx := ctx(t)
	_, err := c.Eval(ctx, incrScript, []string{"warm"}) // loaded: EVALSHA runs it
	require.NoError(t, err)
	count := func(key string) string {
		v, _, err := c.Get(ctx, key)
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		name string
		then faultproxy.After
		call func(ctx context.Context) error
		cmd  faultproxy.Match
		key  string
	}{
		{"script, closed", faultproxy.Close, func(ctx context.Context) error {
			_, err := c.Eval(ctx, incrScript, []string{"n1"})
			return err
		}, faultproxy.Script(incrScript), "n1"},
		{"script, silent", faultproxy.Hang, func(ctx context.Context) error {
			_, err := c.Eval(ctx, incrScript, []string{"n2"})
			return err
		}, faultproxy.Script(incrScript), "n2"},
		{"SETNX, closed", faultproxy.Close, func(ctx context.Context) error {
			_, err := c.SetNX(ctx, "n3", "1")
			return err
		}, faultproxy.Command("SETNX"), "n3"},
		{"DEL, silent", faultproxy.Hang, func(ctx context.Context) error {
			_, err := c.Del(ctx, "n4")
			return err
		}, faultproxy.Command("DEL"), "n4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "DEL, silent" {
				_, err := c.SetNX(ctx, "n4", "1")
				require.NoError(t, err)
			}
			sent := p.Count(tc.cmd)
			p.DropReply(tc.cmd, 1, tc.then)
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			err := tc.call(cctx)
			cancel()
			require.Error(t, err)
			assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
			time.Sleep(100 * time.Millisecond) // a resend would have gone out by now
			assert.Equal(t, 1, sent(), "sent once, never again")
			switch tc.key {
			case "n4":
				assert.Equal(t, "", count("n4"), "the DEL ran")
			default:
				assert.Equal(t, "1", count(tc.key), "it ran once")
			}
		})
	}
}
