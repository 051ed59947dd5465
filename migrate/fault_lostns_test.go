package migrate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/modern"
)

// flushNamespace deletes every key NamespaceKeys names, as an operator's
// cleanup of the namespace would; lock keys stay.
func flushNamespace(t *testing.T, c driver.Client, ns string) {
	t.Helper()
	keys, err := NamespaceKeys(ns)
	require.NoError(t, err)
	for _, k := range keys {
		_, err := c.Del(context.Background(), k)
		require.NoError(t, err)
	}
}

// noSecondHolder asserts that a locker started now (an older build rolled
// back, a new instance) does not get name while another holds it: it is
// refused, never granted.
func noSecondHolder(t *testing.T, c driver.Client, ns, name string) {
	t.Helper()
	ctx := context.Background()
	fresh := New(c, WithPhaseFrom(ns))
	defer func() { _ = fresh.Close(ctx) }()
	lk, err := fresh.TryLock(ctx, name, time.Second)
	if err == nil {
		p := lk.(interface{ Phase() Phase }).Phase()
		_ = lk.Unlock(ctx)
		t.Fatalf("two holders: a locker started after init took %q in %v while the first holder still holds it", name, p)
	}
	assert.True(t, errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, ErrPhaseUnknown), "refused, typed: %v", err)
}

// initAfterLoss runs init on a namespace that lost its keys: it may refuse,
// or restore the phase the namespace had (modern here), never another.
func initAfterLoss(t *testing.T, ctl *Controller) error {
	t.Helper()
	_, err := ctl.Init(context.Background(), false)
	if err == nil {
		p, perr := ctl.Phase(context.Background())
		require.NoError(t, perr)
		assert.Equal(t, PhaseModern, p, "init restores only the phase the namespace had")
	}
	return err
}

// A namespace at modern loses its keys (an operator's flush); a follower
// still holds a lock on its modern key. Before its heartbeat re-registers
// it, `phase init` must not start the namespace at legacy: a locker
// started afterwards would read legacy and take the legacy key beside the
// modern holder.
func TestFaultInitAfterLostNamespaceBesideModernHolder(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, PhaseModern)
	// A slow heartbeat: the window between the flush and its re-registering
	// is the one the review found (init within 1.2 s of the flush).
	holder := New(tg.Client, WithPhaseFrom(ns), WithPhaseInterval(time.Minute))
	defer func() { _ = holder.Close(ctx) }()
	name := locktest.Key(t, "k")
	lk, err := holder.TryLock(ctx, name, 20*time.Second)
	require.NoError(t, err)
	defer func() { _ = lk.Unlock(ctx) }()
	require.Equal(t, PhaseModern, lk.(interface{ Phase() Phase }).Phase())

	flushNamespace(t, tg.Client, ns)
	_ = initAfterLoss(t, ctl)
	noSecondHolder(t, tg.Client, ns, name)
}

// At the end state the migrate lockers are retired and services lock with
// a plain modern.Locker on the derived key: nothing heartbeats. A flush of
// the namespace must not let `phase init` start it at legacy, whenever it
// runs: a migrate Locker of an older build rolled back would then take the
// legacy key beside the modern holder.
func TestFaultInitAfterLostNamespaceAtTheEndState(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, PhaseModern)
	name := locktest.Key(t, "k")
	_, key, err := New(tg.Client, WithPhase(PhaseModern)).Keys(name)
	require.NoError(t, err)
	lk, err := modern.New(tg.Client).TryLock(ctx, key, 20*time.Second)
	require.NoError(t, err)
	defer func() { _ = lk.Unlock(ctx) }()

	flushNamespace(t, tg.Client, ns)
	_ = initAfterLoss(t, ctl)
	noSecondHolder(t, tg.Client, ns, name)
}
