package redisson_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/redisson"
)

// redissonVectors is the part of testdata/vectors/redisson.json (Redisson's
// RLock on the wire, which the Java tests check against Redisson itself)
// that the Go package derives.
type redissonVectors struct {
	Names []struct {
		Name        string `json:"name"`
		Key         string `json:"key"`
		Channel     string `json:"channel"`
		LatchPrefix string `json:"latch_prefix"`
		Queue       string `json:"fair_queue"`
		Timeouts    string `json:"fair_timeouts"`
		WaiterChan  string `json:"waiter_channel_prefix"`
		Token       string `json:"fenced_token"`
	} `json:"names"`
	FairWaitMS    int64  `json:"fair_wait_ms"`
	FieldPattern  string `json:"field_pattern"`
	UnlockMessage string `json:"unlock_message"`
	Watchdog      struct {
		TimeoutMS    int64 `json:"timeout_ms"`
		RenewEveryMS int64 `json:"renew_every_ms"`
	} `json:"watchdog"`
	Scripts []struct {
		Name string `json:"name"`
		File string `json:"file"`
	} `json:"scripts"`
}

// The Go package derives the names, fields and messages the vectors pin,
// and ships the scripts they list (each file assembled with args.lua
// first: lockbridge's own argument checks).
func TestRedissonVectors(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "redisson.json"))
	require.NoError(t, err)
	var v redissonVectors
	require.NoError(t, json.Unmarshal(b, &v))
	require.NotEmpty(t, v.Names)
	for _, n := range v.Names {
		assert.Equal(t, n.Channel, redisson.ChannelName(n.Name))
		assert.Equal(t, n.LatchPrefix+"0123", redisson.LatchName(n.Name, "0123"))
		assert.Equal(t, n.Key, n.Name)
		assert.Equal(t, n.WaiterChan+"f:1", redisson.WaiterChannel(n.Name, "f:1"))
		assert.Equal(t, redisson.QueuePrefix, strings.SplitN(n.Queue, ":", 2)[0])
		assert.Equal(t, redisson.TimeoutPrefix, strings.SplitN(n.Timeouts, ":", 2)[0])
		assert.Equal(t, strings.TrimPrefix(n.Channel, redisson.ChannelPrefix),
			strings.TrimPrefix(n.Queue, redisson.QueuePrefix), "the same name part")
		assert.Equal(t, strings.TrimPrefix(n.Channel, redisson.ChannelPrefix),
			strings.TrimPrefix(n.Timeouts, redisson.TimeoutPrefix))
		assert.Equal(t, strings.TrimPrefix(n.Channel, redisson.ChannelPrefix),
			strings.TrimPrefix(n.Token, redisson.TokenPrefix))
	}
	assert.Equal(t, time.Duration(v.FairWaitMS)*time.Millisecond, redisson.DefaultFairWait)
	assert.Equal(t, v.UnlockMessage, redisson.UnlockMessage)
	assert.Equal(t, time.Duration(v.Watchdog.TimeoutMS)*time.Millisecond, redisson.DefaultWatchdogTimeout)
	assert.Equal(t, v.Watchdog.TimeoutMS/3, v.Watchdog.RenewEveryMS)
	assert.Regexp(t, v.FieldPattern, redisson.New(nil).NewOwner().Field(), "a Go field (nil client: the id is still made)")
	got := map[string]string{}
	for _, s := range redisson.Scripts() {
		require.Contains(t, s.Source(), "local function arg_count(", "%s checks its arguments", s.Name())
		got[strings.TrimSuffix(strings.TrimPrefix(s.Name(), "redisson/scripts/"), ".lua")] = s.Name()
	}
	want := map[string]string{}
	for _, s := range v.Scripts {
		want[s.Name] = s.File
		b, err := os.ReadFile(filepath.Join("..", s.File))
		require.NoError(t, err)
		assert.NotEmpty(t, b, s.File)
	}
	assert.Equal(t, want, got)
}
