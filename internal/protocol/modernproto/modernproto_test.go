package modernproto

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// TestScriptsPinned pins the assembled scripts: modern and redlock send
// exactly these (and so share one script cache entry per script on a
// server). Changing a script changes the wire, which docs/protocol.md must
// follow.
func TestScriptsPinned(t *testing.T) {
	for _, c := range []struct {
		name, sha string
		got       interface{ Hash() string }
	}{
		{"modern/acquire.lua", "c88d5b8233eabe847508bfc22760d7415e18d8f1", AcquireScript},
		{"modern/release.lua", "befd0567ebab81ec7383e9b1e06800d9b55c193c", ReleaseScript},
		{"modern/refresh.lua", "732260163c59ef0525fb0680c1838370e57a94fa", RefreshScript},
		{"modern/ttl.lua", "fc78ab49abe7386596e2fd7b82f3d8aa7fd7fa09", TTLScript},
	} {
		assert.Equal(t, c.sha, c.got.Hash(), c.name)
	}
	assert.Equal(t, "modern/acquire.lua", AcquireScript.Name())
	assert.True(t, strings.HasSuffix(AcquireScript.Source(), "return modern_acquire(KEYS[1], token, ARGV[2], KEYS[2])\n"))
}

func TestNewToken(t *testing.T) {
	a, err := NewToken()
	require.NoError(t, err)
	b, err := NewToken()
	require.NoError(t, err)
	assert.Len(t, a, 22)
	assert.NotEqual(t, a, b)
	raw, err := base64.RawURLEncoding.DecodeString(a)
	require.NoError(t, err)
	assert.Len(t, raw, TokenBytes)
}

func TestNewNames(t *testing.T) {
	n, ok := NewNames("order:42", false)
	require.True(t, ok)
	assert.Equal(t, Names{Key: "order:42", Channel: "{order:42}:released"}, Names{Key: n.Key, Fence: n.Fence,
		Channel: n.Channel})
	assert.Equal(t, []string{"order:42"}, n.acquire)
	assert.Equal(t, []string{"order:42", "{order:42}:released"}, n.release)

	n, ok = NewNames("{order}:42", true)
	require.True(t, ok)
	assert.Equal(t, "{order}:42:fence", n.Fence)
	assert.Equal(t, "{order}:42:released", n.Channel)
	assert.Equal(t, []string{"{order}:42", "{order}:42:fence"}, n.acquire)

	// A stray '}': no channel, and no fence counter in the key's slot.
	n, ok = NewNames("a}b", false)
	require.True(t, ok)
	assert.Empty(t, n.Channel)
	assert.Equal(t, []string{"a}b"}, n.release)
	_, ok = NewNames("a}b", true)
	assert.False(t, ok)
}

// TestNode runs each call's replies against a real redis-server.
func TestNode(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	nd := NewNode("test", c)
	assert.Equal(t, c, nd.Client())
	ctx := context.Background()
	n, _ := NewNames("k", true)

	ok, fence, err := nd.Acquire(ctx, &n, "tok", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.InDelta(t, time.Now().UnixMicro(), fence, float64(time.Hour.Microseconds()),
		"the first fence is the server's TIME in µs")

	ok, left, err := nd.Acquire(ctx, &n, "other", time.Minute)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.InDelta(t, 60000, left, 1000)

	code, ms, err := nd.PTTL(ctx, &n, "tok")
	require.NoError(t, err)
	assert.EqualValues(t, Ours, code)
	assert.InDelta(t, 60000, ms, 1000)

	code, err = nd.Refresh(ctx, &n, "other", time.Second)
	require.NoError(t, err)
	assert.EqualValues(t, Taken, code)
	code, err = nd.Refresh(ctx, &n, "tok", 2*time.Minute)
	require.NoError(t, err)
	assert.EqualValues(t, Ours, code)
	_, ms, _ = nd.PTTL(ctx, &n, "tok")
	assert.Greater(t, ms, int64(60000))

	code, err = nd.Release(ctx, &n, "other")
	require.NoError(t, err)
	assert.EqualValues(t, Taken, code)
	code, err = nd.Release(ctx, &n, "tok")
	require.NoError(t, err)
	assert.EqualValues(t, Ours, code)
	code, err = nd.Release(ctx, &n, "tok")
	require.NoError(t, err)
	assert.EqualValues(t, Absent, code)
	code, _, err = nd.PTTL(ctx, &n, "tok")
	require.NoError(t, err)
	assert.EqualValues(t, Absent, code)

	// Errors carry the package prefix and wrap the Redis error.
	_, err = c.Do(ctx, "HSET", "k", "f", "v")
	require.NoError(t, err)
	_, err = nd.Refresh(ctx, &n, "tok", time.Minute)
	assert.ErrorContains(t, err, `test: refresh "k": `)
	_, err = nd.Release(ctx, &n, "tok")
	assert.ErrorContains(t, err, "WRONGTYPE")

	// A reply of the wrong shape is an error, never a code.
	_, err = nd.code("x", int64(7))
	assert.EqualError(t, err, "test: x: unexpected reply 7")
	_, _, ok = pair([]any{int64(1)})
	assert.False(t, ok)
}

// TestScriptArgumentsStrict: every script refuses an argument outside its
// exact form with an error reply, and changes nothing.
func TestScriptArgumentsStrict(t *testing.T) {
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "held", "tok", "PX", "60000")
	require.NoError(t, err)
	long := strings.Repeat("t", MaxTokenLen+1)
	ttls := []string{"", "0", "-1", "1 ", " 1", `"1"`, "true", "1.5", "+1", "01", "1e3", "0x10", "99999999999999999"}
	for _, c2 := range []struct {
		name string
		s    *driver.Script
		keys []string
		args [][]any // each a full ARGV, one of them bad
	}{
		{"acquire", AcquireScript, []string{"free", "{free}:fence"}, append(
			[][]any{{"", "1000"}, {long, "1000"}, {"tok"}},
			badAt(1, []any{"tok", "1000"}, ttls)...)},
		{"refresh", RefreshScript, []string{"held"}, append(
			[][]any{{"", "1000"}, {long, "1000"}, {"tok"}},
			badAt(1, []any{"tok", "1000"}, ttls)...)},
		{"release", ReleaseScript, []string{"held", "{held}:released"}, [][]any{
			{"", "PUBLISH"}, {long, "PUBLISH"}, {"tok"}, {"tok", "publish"}, {"tok", "PUBLISH "}, {"tok", `"PUBLISH"`}, {"tok",
				"1"},
		}},
		{"ttl", TTLScript, []string{"held"}, [][]any{{""}, {long}, {}}},
	} {
		for _, args := range c2.args {
			_, err := c.Eval(ctx, c2.s, c2.keys, args...)
			require.Error(t, err, "%s %q", c2.name, args)
			assert.Contains(t, err.Error(), "ERR lockbridge: bad argument", "%s %q", c2.name, args)
		}
	}
	// Nothing was written: the free key is free, no counter, held untouched.
	n, err := c.Do(ctx, "EXISTS", "free", "{free}:fence")
	require.NoError(t, err)
	assert.EqualValues(t, 0, n)
	v, _, _ := c.Get(ctx, "held")
	assert.Equal(t, "tok", v)
	ms, _ := c.Do(ctx, "PTTL", "held")
	assert.Greater(t, ms.(int64), int64(50000))
}

// badAt returns good with its element i replaced by each of bad.
func badAt(i int, good []any, bad []string) [][]any {
	var out [][]any
	for _, b := range bad {
		a := append([]any(nil), good...)
		a[i] = b
		out = append(out, a)
	}
	return out
}
