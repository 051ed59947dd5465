package migrate

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
)

func TestFollower(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		n := initNS(t, tg.Client, t.Name())
		k := n.k

		// A long interval: only the pub/sub notice can make it move quickly.
		f := newFollower(tg.Client, k, time.Hour, 2*time.Hour)
		p, _, err := f.phase(ctx, 0, nil)
		require.NoError(t, err)
		assert.Equal(t, PhaseLegacy, p)

		ms := n.members(t)
		require.Len(t, ms, 1, "the follower heartbeats on first use")
		assert.Equal(t, f.id, ms[0].ID)
		assert.Equal(t, PhaseLegacy.String(), ms[0].Phase)

		walk(t, n, PhaseDualWrite)
		require.Eventually(t, func() bool { p, _, _ := f.phase(ctx, 0, nil); return p == PhaseDualWrite },
			5*time.Second, 5*time.Millisecond, "the phase-change notice moves the follower")
		require.Eventually(t, func() bool {
			ms := n.members(t)
			return len(ms) == 1 && ms[0].Phase == PhaseDualWrite.String()
		}, 5*time.Second, 5*time.Millisecond, "and its heartbeat says so")

		require.NoError(t, f.close(ctx))
		assert.Empty(t, n.members(t), "a closed locker leaves the registry")
		_, _, err = f.phase(ctx, 0, nil)
		assert.Error(t, err)
	})
}

func TestFollowerMovesOnePhaseAtATime(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	n := initNS(t, tg.Client, t.Name())
	k := n.k
	// A lease of 3 intervals: it reads at every interval (with a longer one
	// it would read only on a notice, or as its lease needs).
	f := newFollower(tg.Client, k, 20*time.Millisecond, 60*time.Millisecond)
	defer f.close(ctx)
	p, _, err := f.phase(ctx, 0, nil)
	require.NoError(t, err)
	require.Equal(t, PhaseLegacy, p)

	// An operator forces the stored phase two steps ahead.
	_, err = tg.Client.Do(ctx, "SET", k.Phase, "dual-read")
	require.NoError(t, err)
	var seen []Phase
	require.Eventually(t, func() bool {
		p, _, _ := f.phase(ctx, 0, nil)
		if len(seen) == 0 || seen[len(seen)-1] != p {
			seen = append(seen, p)
		}
		return p == PhaseDualRead
	}, 5*time.Second, time.Millisecond)
	assert.Equal(t, []Phase{PhaseLegacy, PhaseDualWrite, PhaseDualRead}, seen, "never skips a phase")
}

// failOnce fails the first heartbeat script and forwards everything else.
type failOnce struct {
	driver.Client
	failed atomic.Bool
}

func (f *failOnce) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	if s == migrateproto.HeartbeatScript && f.failed.CompareAndSwap(false, true) {
		return nil, errors.New("connection reset by peer")
	}
	return f.Client.Eval(ctx, s, keys, args...)
}

// A first heartbeat that fails must not leave the follower half-started:
// answering the cached phase forever, following and heartbeating nothing —
// a client the controller cannot see, stuck in its phase.
func TestFollowerStartsAfterAFailedFirstHeartbeat(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	n := initNS(t, tg.Client, t.Name())
	k := n.k
	f := newFollower(&failOnce{Client: tg.Client}, k, 10*time.Millisecond, time.Hour)
	defer f.close(ctx)
	_, _, err := f.phase(ctx, 0, nil)
	require.Error(t, err, "the first heartbeat failed")
	p, _, err := f.phase(ctx, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, PhaseLegacy, p)

	_, err = tg.Client.Do(ctx, "SET", k.Phase, "dual-write")
	require.NoError(t, err)
	require.Eventually(t, func() bool { p, _, _ := f.phase(ctx, 0, nil); return p == PhaseDualWrite }, 5*time.Second,
		5*time.Millisecond,
		"the follower follows")
	require.Len(t, n.members(t), 1, "and heartbeats")
}
