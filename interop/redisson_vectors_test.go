package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// redissonVectors is testdata/vectors/redisson.json: Redisson's RLock on
// the wire. The Java tests (RedissonVectorsTest) check it against Redisson
// itself; the redisson package's TestRedissonVectors against the Go
// package; the interop tests against both on live servers.
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

// redissonChannel is Redisson's unlock channel of lock name:
// "redisson_lock__channel:{name}", or without the braces when the name
// holds one (the vectors pin it; the interop tests name it themselves).
func redissonChannel(name string) string { return redissonName("redisson_lock__channel", name) }

// redissonLatches matches the unlock latches of lock name.
func redissonLatches(name string) string { return redissonName("redisson_unlock_latch", name) + ":*" }

func redissonName(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}
