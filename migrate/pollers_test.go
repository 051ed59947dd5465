package migrate_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// After meeting a legacy-only holder (a Java service's lock), a dual-write
// Lock defers to the pollers: a Go holder's release notice does not wake
// it, it waits a poller's pause.
func TestPollersDeferAfterALegacySighting(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	const poll = 400 * time.Millisecond
	polite := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseDualWrite), migrate.WithPollers(poll))
	other := migrate.New(tg.Client, migrate.WithPhase(migrate.PhaseDualWrite), migrate.WithPollers(0))

	// A Java holder: polite meets it.
	w, ok, err := javareplay.Lock(ctx, tg.Client, key, time.Minute, time.Now)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = polite.TryLock(ctx, key, time.Second)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained)
	require.NoError(t, javareplay.Unlock(ctx, tg.Client, key, w, time.Now))

	// A Go holder releases while polite waits: polite is not woken at once.
	held, err := other.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	got := make(chan time.Time, 1)
	go func() {
		lk, err := polite.Lock(ctx, key, time.Minute)
		if assert.NoError(t, err) {
			at := time.Now()
			assert.NoError(t, lk.Unlock(ctx))
			got <- at
		}
		close(got)
	}()
	time.Sleep(50 * time.Millisecond) // polite's first attempt fails
	released := time.Now()
	require.NoError(t, held.Unlock(ctx))
	at, ok := <-got
	require.True(t, ok)
	assert.GreaterOrEqual(t, at.Sub(released), poll/2-50*time.Millisecond, "woken by the release notice")
}
