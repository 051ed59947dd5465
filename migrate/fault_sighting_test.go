package migrate

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
)

// A sighting whose write failed is evidence not yet recorded: the next
// meeting with the legacy-only holder records it, even within the second
// in which a Locker records at most one. Here the first write fails (the
// sighting key holds a string: WRONGTYPE); once the key is fixed, the next
// failed attempt, at once, must record it — else the controller would see
// no legacy locker in a namespace that has one.
func TestFaultFailedSightingIsRecordedAtTheNextMeeting(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	name := locktest.Key(t, "k")
	l := New(tg.Client, WithPhase(PhaseDualWrite), WithNamespace(ns))
	defer l.Close(ctx)
	k, err := migrateproto.NewKeys(ns)
	require.NoError(t, err)
	n := testNS{c: tg.Client, k: k}

	// A Java holder: a live legacy value, no modern key.
	_, ok, err := javareplay.Lock(ctx, tg.Client, name, 10*time.Second, nil)
	require.NoError(t, err)
	require.True(t, ok)

	locktest.Do(t, tg.Client, "SET", k.Sighting, "not a hash")
	_, err = l.TryLock(ctx, name, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "a failed sighting does not fail the attempt")
	locktest.Do(t, tg.Client, "DEL", k.Sighting)
	_, count := n.sighting(t)
	require.Zero(t, count, "the first write failed")

	_, err = l.TryLock(ctx, name, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	key, count := n.sighting(t)
	assert.Equal(t, name, key, "the next meeting records the sighting the failed write dropped")
	assert.Equal(t, int64(1), count)
}
