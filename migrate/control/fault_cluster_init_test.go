package control

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

// Review (issue 25, Redis Cluster). At the documented end state — the
// migrate lockers retired, services on a plain modern.Locker (auto-refresh)
// on the derived key — nothing heartbeats; the namespace's mark
// (lockbridge-mark:{ns}) is the only thing that keeps `phase init` from
// starting legacy again. In a cluster the mark shares the {ns} slot, so a
// restart without persistence of the namespace's node (a fault inside the
// failure model, docs/safety.md) takes the namespace's keys and the mark
// together, while the lock keys on the other nodes — and their holders —
// live on. Init then waits the init silence (set here as the docs say:
// phase lease + longest lease + liveness margin), sees no trace and starts
// legacy; a locker of an older build rolled back reads legacy and takes
// the legacy key beside the modern holder, whose Done is still open.
// On a single server the same restart also empties the lock keys, so the
// holder learns it lost the lock; in a cluster the topology changes the
// answer, and the fault matrix's "mark gone: init waits the silence" cell
// (Restart, no persistence × controller) does not say so.
func TestFaultClusterEndStateNamespaceNodeRestartInitsLegacyBesideAHolder(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := locktest.GoRedisCluster(t, cl)
	ctx := context.Background()
	const ns = "endstate"
	nsNode := keyslot.Of("lockbridge:{"+ns+"}:phase") * 3 / 16384
	markKey, err := MarkKey(ns)
	require.NoError(t, err)
	require.Equal(t, nsNode, keyslot.Of(markKey)*3/16384, "the mark lives on the namespace's node")
	name := ""
	for i := 0; name == ""; i++ { // a lock served by another node
		if k := "orders:" + strconv.Itoa(i+100); keyslot.Of(k)*3/16384 != nsNode &&
			keyslot.Of("{"+k+"}:modern")*3/16384 != nsNode {
			name = k
		}
	}
	ctl := initNS(t, c, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseModern)
	_, modernKey, err := migrate.New(c, migrate.WithPhase(migrate.PhaseModern)).Keys(name)
	require.NoError(t, err)

	// The end state: a plain modern holder on the derived key, auto-refreshed.
	const ttl = time.Second
	holder, err := modern.New(c, modern.WithAutoRefresh()).TryLock(ctx, modernKey, ttl)
	require.NoError(t, err)
	defer func() { _ = holder.Unlock(ctx) }()

	// The namespace's node restarts without persistence.
	node := cl.Nodes()[nsNode]
	node.Kill()
	node.Restart()
	require.Eventually(t, func() bool {
		_, _, err := c.Get(ctx, markKey)
		return err == nil
	}, 20*time.Second, 50*time.Millisecond)

	silence := migrate.DefaultPhaseLeaseIntervals*migrate.DefaultPhaseInterval + ttl + DefaultLivenessMargin
	waiter, err := New(c, ns, WithInitSilence(silence))
	require.NoError(t, err)
	ictx, cancel := context.WithTimeout(ctx, silence+10*time.Second)
	defer cancel()
	_, initErr := waiter.Init(ictx, false)
	select {
	case <-holder.Done():
		t.Fatalf("setup: the holder lost its lock: %v", holder.Err())
	default:
	}
	if initErr != nil {
		var ue *UnsafeStepError
		require.ErrorAs(t, initErr, &ue)
		assert.Equal(t, blockNoMark, ue.Blockers[0].Kind, "%v", initErr)
		return
	}
	p, err := waiter.Phase(ctx)
	require.NoError(t, err)
	t.Logf("init succeeded after %v of silence: the namespace is at %v", silence, p)

	// An older build rolled back (a migrate locker following the namespace).
	old := migrate.New(c, migrate.WithPhaseFrom(ns))
	defer func() { _ = old.Close(ctx) }()
	lk, err := old.TryLock(ctx, name, time.Second)
	if err == nil {
		defer func() { _ = lk.Unlock(ctx) }()
		select {
		case <-holder.Done():
		default:
			t.Fatalf("two holders: a locker started after init took %q in %v while the end-state modern holder still holds %q "+
				"(its Done open, PTTL %d ms)",
				name, lk.(interface{ Phase() migrate.Phase }).Phase(), modernKey, locktest.PTTL(t, c, modernKey))
		}
	}
}
