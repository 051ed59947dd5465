package adaptertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

func faults(t *testing.T, f Factory) {
	t.Run("ConnectionRefused", func(t *testing.T) { connectionRefused(t, f) })
	t.Run("ServerKilledMidTest", func(t *testing.T) { serverKilled(t, f) })
	t.Run("HungServerHonoursDeadline", func(t *testing.T) { hungServer(t, f) })
}

// connectionRefused: a client whose server is gone fails with a network
// error, not a reply error, and so does Subscribe.
func connectionRefused(t *testing.T, f Factory) {
	srv := redistest.Start(t)
	c := f.New(t, srv.Addr())
	srv.Stop()
	_, _, err := c.Get(ctx(t), "x")
	require.Error(t, err)
	var re driver.ReplyError
	assert.False(t, errors.As(err, &re), "a network error is not a reply error: %v", err)
	_, err = c.Subscribe(ctx(t), "ch")
	require.Error(t, err)
}

// serverKilled: a server killed mid-test: calls fail fast, the subscription
// closes and says why, and the client recovers when the server is back.
func serverKilled(t *testing.T, f Factory) {
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
}

// hungServer: on a hung server a call ends at its context's deadline, and
// at its cancellation.
func hungServer(t *testing.T, f Factory) {
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
}

var deleteThenPublish = driver.NewScript("adaptertest/delpub.lua",
	"-- deletes KEYS[1], then publishes on it; returns 1\n"+
		"redis.call('DEL', KEYS[1]) redis.call('PUBLISH', KEYS[1], 'x') return 1")

// errorClasses checks that the error replies the locks tell apart match
// their driver class with errors.Is, through the client's wrapping, and that
// a command an ACL denies inside a script is reported with the script's name
// and the commands it runs. It changes the server's default user and
// maxmemory: run it on a server of its own.
