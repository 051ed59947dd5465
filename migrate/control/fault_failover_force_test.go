package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// A forced step taken after a failover (overriding the history blocker
// among others) records the server's new replication id without stamping
// "restored": the next unforced step, moments later, sees no failover and
// no restore, and steps on the absence of evidence the failover lost.
func TestFaultForcedStepAfterAFailoverKeepsTheRestoreWait(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl := initNS(t, tg.Client, t.Name(), WithQuietPeriod(time.Millisecond))
	walk(t, ctl, migrate.PhaseDualRead)
	backdate(t, ctl.s, time.Hour)
	locktest.Do(t, tg.Client, "HSET", ctl.s.k.Meta, "replid", "0123456789abcdef") // as after a failover
	waiting, err := New(tg.Client, t.Name(), WithQuietPeriod(time.Millisecond), WithInitSilence(time.Minute))
	require.NoError(t, err)
	st, err := waiting.Status(ctx)
	require.NoError(t, err)
	require.True(t, st.moved)
	// The operator forces a rollback (say, over a blocker it knows is stale).
	_, err = waiting.Rollback(ctx, true)
	require.NoError(t, err)
	st, err = waiting.Status(ctx)
	require.NoError(t, err)
	assert.Contains(t, kinds(st.Blockers), blockRestored, "the failover is still to be waited for: %+v", st.Blockers)
	_, err = waiting.Rollback(ctx, false)
	assert.ErrorIs(t, err, ErrUnsafeStep, "an unforced rollback right after the failover steps on lost evidence")
}
