package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
)

func nilReplies(t *testing.T, c driver.Client, cluster bool) {
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
}

func replyTypes(t *testing.T, c driver.Client, cluster bool) {
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
}

func javaCommands(t *testing.T, c driver.Client, cluster bool) {
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
}

func setNXPX(t *testing.T, c driver.Client, cluster bool) {
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
}

func binarySafe(t *testing.T, c driver.Client, cluster bool) {
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
}

func wrongType(t *testing.T, c driver.Client, cluster bool) {
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
}

func cancelledContext(t *testing.T, c driver.Client, cluster bool) {
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
}

func idleSubscriptionSurvives(t *testing.T, c driver.Client, cluster bool) {
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
	s := driver.NewScript("adaptertest/flush.lua", "-- returns ARGV[1] and a marker\nreturn {ARGV[1], '"+t.Name()+"'}")
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
