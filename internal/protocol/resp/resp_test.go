package resp_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplies(t *testing.T) {
	srv := redistest.Start(t)
	c, err := resp.Dial(srv.Addr(), 2*time.Second)
	require.NoError(t, err)
	defer c.Close()

	for _, tc := range []struct {
		args []string
		want any
	}{
		{[]string{"PING"}, "PONG"},
		{[]string{"SET", "k", "a\r\nb"}, "OK"},
		{[]string{"GET", "k"}, "a\r\nb"},
		{[]string{"GET", "missing"}, nil},
		{[]string{"INCR", "n"}, int64(1)},
		{[]string{"RPUSH", "l", "x", "y"}, int64(2)},
		{[]string{"LRANGE", "l", "0", "-1"}, []any{"x", "y"}},
	} {
		got, err := c.Do(tc.args...)
		require.NoError(t, err, tc.args)
		assert.Equal(t, tc.want, got, tc.args)
	}
	_, err = c.Do("GET", "l")
	var re resp.Error
	require.True(t, errors.As(err, &re))
	assert.Contains(t, string(re), "WRONGTYPE")

	info, err := c.Do("INFO", "server")
	require.NoError(t, err)
	assert.NotEmpty(t, resp.ParseInfo(info.(string))["redis_version"])
}
