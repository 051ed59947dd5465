package modernproto

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/locktest"
	"github.com/lockbridge/lockbridge/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScriptsPinned pins the assembled scripts: modern and redlock send
// exactly these (and so share one script cache entry per script on a
// server). The SHA1s are those modern sent before the scripts moved here;
// changing a script changes the wire, which docs/protocol.md must follow.
func TestScriptsPinned(t *testing.T) {
	for _, c := range []struct {
		name, sha string
		got       interface{ Hash() string }
	}{
		{"modern/acquire.lua", "4f4092a582f88dd8e91e24d1b4516e925b515854", AcquireScript},
		{"modern/release.lua", "b68a1bc388d2bdf3985e3c0f44a35ce005953cfd", ReleaseScript},
		{"modern/refresh.lua", "376128b3101ab05099184069a13855d87edb4a30", RefreshScript},
		{"modern/ttl.lua", "f215d254f4380ef543e1420dd3971194960ec9cd", TTLScript},
	} {
		assert.Equal(t, c.sha, c.got.Hash(), c.name)
	}
	assert.Equal(t, "modern/acquire.lua", AcquireScript.Name())
	assert.True(t, strings.HasSuffix(AcquireScript.Source(), "return modern_acquire(KEYS[1], ARGV[1], ARGV[2], KEYS[2])\n"))
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
	assert.Equal(t, Names{Key: "order:42", Channel: "{order:42}:released"}, Names{Key: n.Key, Fence: n.Fence, Channel: n.Channel})
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
	assert.EqualValues(t, 1, fence)

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
