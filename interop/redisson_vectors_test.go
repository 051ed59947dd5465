package interop

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

// redissonVectors is testdata/vectors/redisson.json: Redisson's RLock on
// the wire. The Java tests (RedissonVectorsTest) check it against Redisson
// itself; TestRedissonVectors against the Go package; the interop tests
// against both on live servers.
type redissonVectors struct {
	About string `json:"about"`
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
	FairWaitMS       int64             `json:"fair_wait_ms"`
	FieldPattern     string            `json:"field_pattern"`
	RequestIDPattern string            `json:"request_id_pattern"`
	UnlockMessage    string            `json:"unlock_message"`
	PublishCommand   map[string]string `json:"publish_command"`
	Holds            []struct {
		Holds int    `json:"holds"`
		Value string `json:"value"`
	} `json:"holds"`
	Watchdog struct {
		TimeoutMS    int64 `json:"timeout_ms"`
		RenewEveryMS int64 `json:"renew_every_ms"`
	} `json:"watchdog"`
	Scripts []struct {
		Name     string `json:"name"`
		File     string `json:"file"`
		Redisson string `json:"redisson"`
	} `json:"scripts"`
}

func loadRedissonVectors(t *testing.T) *redissonVectors {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, "redisson.json"))
	require.NoError(t, err)
	var v redissonVectors
	require.NoError(t, json.Unmarshal(b, &v))
	return &v
}

// The Go package derives the names, fields and messages the vectors pin,
// and ships the scripts they list (each file assembled with args.lua
// first: lockbridge's own argument checks).
func TestRedissonVectors(t *testing.T) {
	v := loadRedissonVectors(t)
	require.NotEmpty(t, v.Names)
	for _, n := range v.Names {
		assert.Equal(t, n.Channel, redisson.ChannelName(n.Name))
		assert.Equal(t, n.LatchPrefix+"0123", redisson.LatchName(n.Name, "0123"))
		assert.Equal(t, n.Key, n.Name)
		assert.Equal(t, n.WaiterChan+"f:1", redisson.WaiterChannel(n.Name, "f:1"))
		assert.Equal(t, redisson.QueuePrefix, strings.SplitN(n.Queue, ":", 2)[0])
		assert.Equal(t, redisson.TimeoutPrefix, strings.SplitN(n.Timeouts, ":", 2)[0])
		assert.Equal(t, strings.TrimPrefix(n.Channel, redisson.ChannelPrefix), strings.TrimPrefix(n.Queue, redisson.QueuePrefix), "the same name part")
		assert.Equal(t, strings.TrimPrefix(n.Channel, redisson.ChannelPrefix), strings.TrimPrefix(n.Timeouts, redisson.TimeoutPrefix))
		assert.Equal(t, strings.TrimPrefix(n.Channel, redisson.ChannelPrefix), strings.TrimPrefix(n.Token, redisson.TokenPrefix))
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
