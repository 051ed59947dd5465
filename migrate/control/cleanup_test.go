package control

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// atPhase initialises namespace ns and forces it to p.
func atPhase(t *testing.T, ctl *Controller, p migrate.Phase) {
	t.Helper()
	ctx := context.Background()
	_, err := ctl.Init(ctx, ctl.s.c.Cluster()) // a test's new cluster: forced
	require.NoError(t, err)
	for cur := migrate.PhaseLegacy; cur < p; cur++ {
		_, err := ctl.Advance(ctx, true)
		require.NoError(t, err)
	}
}

// sight records a legacy sighting at the server's now minus ago.
func sight(t *testing.T, s store, ago time.Duration) {
	t.Helper()
	_, err := s.c.Do(context.Background(), "HSET", s.k.Sighting, "at", strconv.FormatInt(serverNow(t,
		s.c)-ago.Milliseconds(), 10), "key", "orders-1", "count", "3")
	require.NoError(t, err)
}

func exists(t *testing.T, s store, key string) bool {
	t.Helper()
	n, err := s.c.Do(context.Background(), "EXISTS", key)
	require.NoError(t, err)
	return n == int64(1)
}

func TestCleanupRefuses(t *testing.T) {
	quiet := time.Minute
	tg := locktest.Single(t)[0]
	for name, tc := range map[string]struct {
		phase   migrate.Phase
		ran     time.Duration // since the phase was set
		clients func(t *testing.T, s store)
		want    string
	}{
		"not at modern":         {phase: migrate.PhaseDualRead, ran: time.Hour, want: "at dual-read, not modern"},
		"quiet period not over": {phase: migrate.PhaseModern, ran: 10 * time.Second, want: "less than the quiet period"},
		"a client lags": {phase: migrate.PhaseModern, ran: time.Hour, want: "a step is still rolling out",
			clients: func(t *testing.T, s store) {
				beat(t, s, "lagging", migrate.PhaseDualRead, time.Minute)
			}},
		"a client holds a dual-read lock": {phase: migrate.PhaseModern, ran: time.Hour, want: "a step is still rolling out",
			clients: func(t *testing.T, s store) {
				beat(t, s, "holder", migrate.PhaseModern, time.Minute, migrate.PhaseDualRead, migrate.PhaseModern)
			}},
		"an entry that does not parse": {phase: migrate.PhaseModern, ran: time.Hour, want: "a step is still rolling out",
			clients: func(t *testing.T, s store) {
				_, err := s.c.Do(context.Background(), "HSET", s.k.Clients, "junk", "{")
				require.NoError(t, err)
			}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ctl, err := New(tg.Client, name, WithQuietPeriod(quiet), WithLivenessMargin(time.Second),
				WithInitSilence(time.Millisecond))
			require.NoError(t, err)
			atPhase(t, ctl, tc.phase)
			backdate(t, ctl.s, tc.ran)
			sight(t, ctl.s, 2*time.Hour)
			beat(t, ctl.s, "dead", migrate.PhaseModern, time.Second)
			kill(t, ctl.s, "dead", time.Hour)
			if tc.clients != nil {
				tc.clients(t, ctl.s)
			}
			for _, dry := range []bool{true, false} {
				_, err := ctl.Cleanup(ctx, dry)
				var re *cleanupRefusedError
				require.ErrorAs(t, err, &re, "dry run %v", dry)
				assert.ErrorIs(t, err, ErrUnsafeStep)
				assert.ErrorContains(t, err, tc.want)
			}
			assert.True(t, exists(t, ctl.s, ctl.s.k.Sighting), "the sighting stays")
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			ids := map[string]bool{}
			for _, m := range st.Members {
				ids[m.ID] = true
			}
			assert.True(t, ids["dead"], "the dead entry stays")
		})
	}
}

func TestCleanupRemovesEvidenceAtModern(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		ctl, err := New(tg.Client, t.Name(), WithQuietPeriod(time.Minute), WithLivenessMargin(time.Second),
			WithInitSilence(time.Millisecond))
		require.NoError(t, err)
		s := ctl.s
		atPhase(t, ctl, migrate.PhaseModern)
		backdate(t, s, time.Hour)
		sight(t, s, 2*time.Hour)
		beat(t, s, "live", migrate.PhaseModern, time.Minute)
		beat(t, s, "dead", migrate.PhaseModern, time.Second)
		kill(t, s, "dead", time.Hour)

		plan, err := ctl.Cleanup(ctx, true)
		require.NoError(t, err)
		assert.True(t, plan.DryRun)
		assert.Equal(t, []string{"dead"}, plan.Forgotten)
		assert.Equal(t, "orders-1", plan.Sighting.Key)
		assert.True(t, exists(t, s, s.k.Sighting), "a dry run removes nothing")

		done, err := ctl.Cleanup(ctx, false)
		require.NoError(t, err)
		assert.Equal(t, []string{"dead"}, done.Forgotten)
		assert.Equal(t, "orders-1", done.Sighting.Key)
		assert.False(t, exists(t, s, s.k.Sighting))
		st, err := ctl.Status(ctx)
		require.NoError(t, err)
		require.Len(t, st.Members, 1)
		assert.Equal(t, "live", st.Members[0].ID, "a live client's entry stays")
		assert.Equal(t, migrate.PhaseModern, st.Phase)

		// The end state is marked, even for a namespace whose steps wrote
		// no mark (a release before marks).
		_, err = tg.Client.Del(ctx, s.k.Mark)
		require.NoError(t, err)
		_, err = ctl.Cleanup(ctx, false)
		require.NoError(t, err)
		st, err = ctl.Status(ctx)
		require.NoError(t, err)
		assert.Equal(t, mark{phase: migrate.PhaseModern, highest: migrate.PhaseModern, at: st.mark.at,
			instance: st.mark.instance, gen: st.mark.gen}, st.mark)
		assert.WithinDuration(t, st.Now, st.mark.at, time.Second)
		assert.Positive(t, st.mark.instance, "the namespace's instance, kept for a restore")

		// A sighting whose time does not parse is kept.
		_, err = tg.Client.Do(ctx, "HSET", s.k.Sighting, "at", "soon", "key", "orders-2", "count", "1")
		require.NoError(t, err)
		done, err = ctl.Cleanup(ctx, false)
		require.NoError(t, err)
		assert.Contains(t, done.SightingKept, "unreadable")
		assert.True(t, exists(t, s, s.k.Sighting))
		_, err = tg.Client.Do(ctx, "DEL", s.k.Sighting)
		require.NoError(t, err)

		// A young sighting is kept.
		sight(t, s, 10*time.Second)
		done, err = ctl.Cleanup(ctx, false)
		require.NoError(t, err)
		assert.Contains(t, done.SightingKept, "less than the quiet period")
		assert.True(t, exists(t, s, s.k.Sighting))
	})
}

// TestCleanupScriptChecksAgain: what changed between the reading and the
// script is not removed — a phase set meanwhile, a phase no longer modern,
// a newer sighting.
func TestCleanupScriptChecksAgain(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl, err := New(tg.Client, "again", WithQuietPeriod(time.Minute), WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	s := ctl.s
	atPhase(t, ctl, migrate.PhaseModern)
	backdate(t, s, time.Hour)
	sight(t, s, 2*time.Hour)
	since, ok, err := tg.Client.Get(ctx, s.k.Since)
	require.NoError(t, err)
	require.True(t, ok)
	at, err := tg.Client.Do(ctx, "HGET", s.k.Sighting, "at")
	require.NoError(t, err)
	keys := []string{s.k.Phase, s.k.Since, s.k.Clients, s.k.Expiry, s.k.Seen, s.k.Sighting, s.k.Meta, s.k.Mark}
	run := func(since, quiet, at string, replid ...string) []any {
		r, err := tg.Client.Eval(ctx, migrateproto.CleanupScript, keys, since, quiet, "0", at, strings.Join(replid, ""))
		require.NoError(t, err)
		return r.([]any)
	}
	older, _ := strconv.ParseInt(since, 10, 64)
	assert.Equal(t, int64(-2), run(strconv.FormatInt(older-1, 10), "60000", at.(string))[0], "phase set since the reading")
	assert.Equal(t, int64(-3), run(since, "7200000", at.(string))[0], "quiet period not over")
	assert.Equal(t, int64(-4), run(since, "60000", at.(string), "0123456789abcdef")[0], "another replication id")
	newer, _ := strconv.ParseInt(at.(string), 10, 64)
	assert.Equal(t, []any{int64(1), int64(0)}, run(since, "60000", strconv.FormatInt(newer-1, 10)),
		"another sighting than the one read")
	assert.True(t, exists(t, s, s.k.Sighting))
	_, err = tg.Client.Do(ctx, "SET", s.k.Phase, "dual-read")
	require.NoError(t, err)
	assert.Equal(t, int64(-1), run(since, "60000", at.(string))[0], "not modern")
	assert.True(t, exists(t, s, s.k.Sighting))
	for _, bad := range [][]any{{"", "0", "0", "", ""}, {since, "-1", "0", "", ""}, {since, "0", "x", "", ""},
		{since, "0", "0", ""}} {
		_, err := tg.Client.Eval(ctx, migrateproto.CleanupScript, keys, bad...)
		assert.ErrorContains(t, err, "lockbridge: bad argument")
	}
}
