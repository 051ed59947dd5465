package legacy_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// asyncClient is a driver.Client wrapper that returns when ctx ends while
// the command is still being sent on a goroutine of its own — the pattern
// the go-redis adapter's Conn.Do uses one layer down. Nothing in
// driver.Client's contract forbids it from using args after Eval returns.
type asyncClient struct {
	driver.Client
	gate chan struct{}
	sent chan []any
}

func (c *asyncClient) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	if s.Name() != "legacy/scripts/release.lua" {
		return c.Client.Eval(ctx, s, keys, args...)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-c.gate // a slow writer
		snap := append([]any(nil), args...)
		_, _ = c.Client.Eval(context.Background(), s, keys, args...)
		c.sent <- snap
	}()
	select {
	case <-done:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// An Unlock whose context ends while the release is still being written:
// the release that then goes out must be the one Unlock asked for, not a
// buffer the Lock has since cleared.
func TestReview3ReleaseArgsUsedAfterReturn(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	ac := &asyncClient{Client: tg.Client, gate: make(chan struct{}), sent: make(chan []any, 1)}
	lk := legacy.New(ac)
	l, err := lk.TryLock(ctx, locktest.Key(t, "retain"), time.Minute)
	require.NoError(t, err)
	uctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	err = l.Unlock(uctx)
	cancel()
	require.Error(t, err)
	close(ac.gate)
	args := <-ac.sent
	for i, a := range args {
		assert.NotNil(t, a, "ARGV[%d] of the release in flight was cleared under it: %v", i+1, args)
	}
}
