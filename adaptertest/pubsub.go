package adaptertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
)

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
