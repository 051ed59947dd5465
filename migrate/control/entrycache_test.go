package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// Status parses an entry again when its bytes change under the same id:
// the parse cache never serves the entry of an earlier reading. Here a
// member's entry is rewritten from legacy to dual-write (and then to bytes
// that do not parse), each between two Status calls of one controller.
func TestStatusSeesAnEntryRewrittenInPlace(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl := initNS(t, tg.Client, t.Name())
	k, err := migrateproto.NewKeys(t.Name())
	require.NoError(t, err)
	s := store{c: tg.Client, k: k}
	e := migrateproto.Entry{V: migrateproto.Version, Seq: 1, ID: "a", Phase: "legacy", Host: "h", PID: 1}
	_, err = s.heartbeat(ctx, e, time.Minute, 0)
	require.NoError(t, err)
	member := func() Member {
		st, err := ctl.Status(ctx)
		require.NoError(t, err)
		for _, m := range st.Members {
			if m.ID == "a" {
				return m
			}
		}
		t.Fatalf("member a missing from %+v", st.Members)
		return Member{}
	}
	first := member()
	require.NoError(t, first.Invalid)
	assert.Equal(t, migrate.PhaseLegacy, first.Phase)
	assert.Equal(t, migrate.PhaseLegacy, member().Phase, "the same bytes, read again")

	e.Seq, e.Phase = 2, "dual-write"
	_, err = s.heartbeat(ctx, e, time.Minute, 0)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseDualWrite, member().Phase, "the rewritten entry, not the cached one")

	locktest.Do(t, tg.Client, "HSET", k.Clients, "a", `{"v":3,"id":"a"}`)
	m := member()
	assert.Error(t, m.Invalid, "bytes that no longer parse are invalid, whatever parsed before")
	assert.Zero(t, m.Phase)
}

// The cache keeps only the last reading's entries, and a nil cache parses.
func TestEntryCacheKeepsTheLastReading(t *testing.T) {
	raw := `{"v":3,"seq":1,"id":"a","phase":"legacy","host":"h","pid":1,"ns_init":0,"gen":0}`
	var ec entryCache
	got := ec.members(map[string]string{"a": raw, "b": "not json"})
	assert.Equal(t, migrate.PhaseLegacy, got["a"].Phase)
	assert.Error(t, got["b"].Invalid)
	ec.members(map[string]string{"a": raw})
	assert.Len(t, ec.m, 1, "an entry gone from the registry is dropped")
	var none *entryCache
	assert.Equal(t, got["a"], none.members(map[string]string{"a": raw})["a"])
}
