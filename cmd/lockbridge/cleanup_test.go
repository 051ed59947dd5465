package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// srvMS is the server's clock in ms.
func srvMS(t *testing.T, c driver.Client) int64 {
	t.Helper()
	r, err := c.Do(context.Background(), "TIME")
	require.NoError(t, err)
	a := r.([]any)
	s, _ := strconv.ParseInt(a[0].(string), 10, 64)
	us, _ := strconv.ParseInt(a[1].(string), 10, 64)
	return s*1000 + us/1000
}

// cleanupFleet puts namespace ns at phase p, set ran ago by the server's
// clock, with a legacy sighting two hours old.
func cleanupFleet(t *testing.T, c driver.Client, ns string, p migrate.Phase, ran time.Duration) {
	t.Helper()
	ctx := context.Background()
	ctl, err := migrate.NewController(c, ns, migrate.WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	_, err = ctl.Init(ctx, c.Cluster()) // a test's new cluster: forced
	require.NoError(t, err)
	for cur := migrate.PhaseLegacy; cur < p; cur++ {
		_, err := ctl.Advance(ctx, true)
		require.NoError(t, err)
	}
	now := srvMS(t, c)
	_, err = c.Do(ctx, "SET", "lockbridge:{"+ns+"}:phase-since", strconv.FormatInt(now-ran.Milliseconds(), 10))
	require.NoError(t, err)
	_, err = c.Do(ctx, "HSET", "lockbridge:{"+ns+"}:legacy-sighting", "at",
		strconv.FormatInt(now-2*time.Hour.Milliseconds(), 10), "key", "orders:1", "count", "4")
	require.NoError(t, err)
}

// legacyValues writes leftover legacy keys, as a Java service writes them
// (expiry in ms, decimal, no TTL), by this host's clock.
func legacyValues(t *testing.T, c driver.Client) map[string]string {
	t.Helper()
	now := time.Now()
	vals := map[string]string{
		"old":     strconv.FormatInt(now.Add(-2*time.Hour).UnixMilli(), 10),
		"recent":  strconv.FormatInt(now.Add(-5*time.Minute).UnixMilli(), 10),
		"live":    strconv.FormatInt(now.Add(time.Minute).UnixMilli(), 10),
		"foreign": "held-by-someone",
	}
	for k, v := range vals {
		_, err := c.Do(context.Background(), "SET", k, v)
		require.NoError(t, err)
	}
	return vals
}

func TestCleanupRefusals(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()
	for _, tc := range []struct {
		ns    string
		phase migrate.Phase
		ran   time.Duration
		setup func(t *testing.T, ns string)
		want  string
	}{
		{ns: "dualread", phase: migrate.PhaseDualRead, ran: time.Hour, want: "the namespace is at dual-read, not modern"},
		{ns: "young", phase: migrate.PhaseModern, ran: time.Minute, want: "less than the quiet period 15m0s"},
		{ns: "lagging", phase: migrate.PhaseModern, ran: time.Hour, want: "a step is still rolling out",
			setup: func(t *testing.T, ns string) {
				// A live client still at dual-read.
				l := migrate.New(c, migrate.WithPhase(migrate.PhaseDualRead), migrate.WithNamespace(ns))
				t.Cleanup(func() { _ = l.Close(context.Background()) })
				_, err := l.Phase(ctx)
				require.NoError(t, err)
			}},
		{ns: "unknown", phase: migrate.PhaseModern, ran: time.Hour, want: "the phase is unknown", setup: func(t *testing.T,
			ns string) {
			_, err := c.Do(ctx, "DEL", "lockbridge:{"+ns+"}:phase")
			require.NoError(t, err)
		}},
	} {
		t.Run(tc.ns, func(t *testing.T) {
			cleanupFleet(t, c, tc.ns, tc.phase, tc.ran)
			if tc.setup != nil {
				tc.setup(t, tc.ns)
			}
			key := "refused:" + tc.ns
			_, err := c.Do(ctx, "SET", key, strconv.FormatInt(time.Now().Add(-2*time.Hour).UnixMilli(), 10))
			require.NoError(t, err)
			for _, dry := range []bool{true, false} {
				args := []string{"fleet", "cleanup", "--namespace", tc.ns, "--key", key}
				if dry {
					args = append(args, "--dry-run")
				}
				r := cli(t, "", env, args...)
				assert.Equal(t, 4, r.code, r.stderr)
				assert.Contains(t, r.stderr, tc.want)
				assert.Contains(t, r.stderr, "nothing removed")
				assert.Empty(t, r.stdout)
			}
			n, err := c.Do(ctx, "EXISTS", key, "lockbridge:{"+tc.ns+"}:legacy-sighting")
			require.NoError(t, err)
			assert.Equal(t, int64(2), n, "the legacy key and the sighting stay")
		})
	}
}

func TestCleanup(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()
	cleanupFleet(t, c, "orders", migrate.PhaseModern, time.Hour)
	vals := legacyValues(t, c)
	keys := []string{"--key", "old", "--key", "recent", "--key", "live", "--key", "foreign", "--key", "absent",
		"--key-codec", "raw"}

	// The dry run lists and removes nothing.
	r := cli(t, "", env, append([]string{"fleet", "cleanup", "--namespace", "orders", "--dry-run", "-o", "json"},
		keys...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &raw))
	documented(t, raw)
	var doc cleanupJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Equal(t, "lockbridge.cleanup/v1", doc.Schema)
	assert.True(t, doc.DryRun)
	assert.Equal(t, "remove", doc.Sighting.Action)
	actions := map[string]string{}
	for _, k := range doc.LegacyKeys {
		actions[k.Name] = k.Action
		if k.Action == "kept" {
			require.NotNil(t, k.Reason, k.Name)
		}
	}
	assert.Equal(t, map[string]string{"old": "remove", "recent": "kept", "live": "kept", "foreign": "kept"}, actions)
	for k, v := range vals {
		got, ok, err := c.Get(ctx, k)
		require.NoError(t, err)
		assert.True(t, ok, k)
		assert.Equal(t, v, got, k)
	}

	// The text run removes the expired key and the sighting only.
	r = cli(t, "", env, append([]string{"fleet", "cleanup", "--namespace", "orders"}, keys...)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `removed legacy key (raw key codec) "old" = "`+vals["old"]+`"`)
	assert.Regexp(t, `kept legacy key \(raw key codec\) "recent": expired 5m[0-9.]*s ago by the \S+ codec, less than the margin 1h0m0s`, r.stdout)
	assert.Contains(t, r.stdout, `kept legacy key (raw key codec) "live": live`)
	assert.Contains(t, r.stdout, `kept legacy key (raw key codec) "foreign": no legacy value codec parses it`)
	assert.Contains(t, r.stdout, `removed the legacy sighting: key "orders:1"`)
	n, err := c.Do(ctx, "EXISTS", "old", "recent", "live", "foreign", "lockbridge:{orders}:legacy-sighting")
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)

	// A shorter margin takes the recent one too.
	r = cli(t, "", env, "fleet", "cleanup", "--namespace", "orders", "--key", "recent", "--margin", "2m")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `removed legacy key (raw key codec) "recent"`)
	assert.Contains(t, r.stdout, "no legacy sighting recorded")
}

// TestCleanupChangedMeanwhile: a legacy key whose bytes changed between the
// listing and the delete (a Java GETSET took it over) is left alone.
func TestCleanupChangedMeanwhile(t *testing.T) {
	t.Parallel()
	c, _ := server(t)
	ctx := context.Background()
	old := strconv.FormatInt(time.Now().Add(-2*time.Hour).UnixMilli(), 10)
	_, err := c.Do(ctx, "SET", "k1", old)
	require.NoError(t, err)
	_, err = c.Do(ctx, "SET", "k2", old)
	require.NoError(t, err)
	ls, err := listLeftovers(ctx, c, cleanupOpts{names: []string{"k1", "k2"}, kc: "raw", margin: time.Hour}, time.Now())
	require.NoError(t, err)
	require.Len(t, ls, 2)
	require.True(t, ls[0].remove && ls[1].remove)
	taken := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	_, err = c.Do(ctx, "GETSET", "k2", taken)
	require.NoError(t, err)
	changed, err := removeLeftovers(ctx, c, ls)
	require.NoError(t, err)
	assert.Equal(t, 1, changed)
	assert.False(t, ls[1].remove)
	assert.Contains(t, ls[1].reason, "changed since it was listed")
	_, ok, err := c.Get(ctx, "k1")
	require.NoError(t, err)
	assert.False(t, ok, "k1 removed")
	got, ok, err := c.Get(ctx, "k2")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, taken, got, "the new holder's value stays")
}

// TestJudgeLeftover: which legacy values cleanup removes, by this host's
// clock and the margin.
func TestJudgeLeftover(t *testing.T) {
	now := time.Now()
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	sec := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	for _, tc := range []struct {
		name   string
		info   keyInfo
		remove bool
		reason string
	}{
		{"expired by more than the margin, ms", keyInfo{typ: "string", value: ms(-2 * time.Hour)}, true, ""},
		{"expired by more than the margin, s", keyInfo{typ: "string", value: sec(-2 * time.Hour)}, true, ""},
		{"expired by less than the margin", keyInfo{typ: "string", value: ms(-30 * time.Minute)}, false,
			"less than the margin 1h0m0s"},
		{"live", keyInfo{typ: "string", value: ms(time.Minute)}, false, "live by the"},
		{"far in the future", keyInfo{typ: "string", value: ms(24 * 365 * time.Hour)}, false, "live by the"},
		{"a small number", keyInfo{typ: "string", value: "5"}, false, "not a plausible lock expiry"},
		{"a token", keyInfo{typ: "string", value: "q8Xz1V9pXQ3b2mN0aLk7Rw"}, false, "no legacy value codec parses it"},
		{"empty", keyInfo{typ: "string", value: ""}, false, "no legacy value codec parses it"},
		{"a hash", keyInfo{typ: "hash"}, false, "a hash, not a lock"},
		{"a modern key", keyInfo{typ: "string", value: ms(-2 * time.Hour)}, false, "a key lockbridge writes"},
		{"a fence counter", keyInfo{typ: "string", value: ms(-2 * time.Hour)}, false, "a key lockbridge writes"},
		{"a namespace key", keyInfo{typ: "string", value: ms(-2 * time.Hour)}, false, "a key lockbridge writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := map[string]string{"a modern key": "{n}:modern", "a fence counter": "{n}:modern:fence",
				"a namespace key": "lockbridge:{orders}:phase-since"}[tc.name]
			if key == "" {
				key = "n"
			}
			l := judgeLeftover(legacyLeftover{name: "n", key: key, info: tc.info}, time.Hour, now)
			assert.Equal(t, tc.remove, l.remove, l.reason)
			assert.Contains(t, l.reason, tc.reason)
		})
	}
}
