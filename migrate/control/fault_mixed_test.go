package control

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// v2Heartbeat is the registry heartbeat of protocol 2, frozen
// (testdata/v2): what a follower of the previous release sends.
func v2Heartbeat(t *testing.T) *driver.Script {
	t.Helper()
	src, err := os.ReadFile("../../testdata/v2/migrate_heartbeat.lua")
	require.NoError(t, err)
	s := driver.NewScript("v2/migrate_heartbeat.lua", string(src))
	require.Equal(t, "757cc275f505bbbb3bc6fc39e5947b69c27db12e", s.Hash(), "the frozen script is the one protocol 2 sent")
	return s
}

// v2Beat replays one heartbeat of a protocol-2 follower: its entry and its
// hold, as that release sent them; it returns the phase it read.
func v2Beat(t *testing.T, c driver.Client, k migrateproto.Keys, s *driver.Script, id string, p migrate.Phase, seq int64,
	hold time.Duration) string {
	t.Helper()
	e := `{"v":2,"id":"` + id + `","phase":"` + p.String() + `","host":"old","pid":2,"ns_init":0,"gen":0,"seq":` +
		strconv.FormatInt(seq, 10) + `}`
	r, err := c.Eval(context.Background(), s, []string{k.Phase, k.Meta, k.Clients, k.Expiry, k.Seen}, id, e,
		strconv.FormatInt(hold.Milliseconds(), 10))
	require.NoError(t, err)
	a := r.([]any)
	require.Len(t, a, 4, "protocol 2's reply")
	return a[0].(string)
}

// A rolling upgrade to protocol 3 with a protocol-2 follower still running
// (docs/safety.md, "Upgrades of lockbridge itself"): the protocol-2 follower
// reads the phase and heartbeats as before, beside protocol-3 lockers and
// controller; the controller reports its live entry as an old-protocol
// blocker and refuses every step (and rollback) until it has expired — it
// never judges it as a protocol-3 member — and then steps. Without the rule
// the step would be taken with a follower of another protocol in the fleet.
func TestFaultMixedVersionFleetRefused(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	k := ctl.s.k
	v2 := v2Heartbeat(t)

	// A protocol-3 locker beside it.
	l := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(50*time.Millisecond))
	defer l.Close(ctx)
	p, err := l.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseLegacy, p)

	// The protocol-2 follower reads the phase and heartbeats as it did.
	require.Equal(t, "legacy", v2Beat(t, tg.Client, k, v2, "old-1", migrate.PhaseLegacy, 1, 700*time.Millisecond))
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	var old *Member
	for i := range st.Members {
		if st.Members[i].ID == "old-1" {
			old = &st.Members[i]
		}
	}
	require.NotNil(t, old, "the protocol-2 entry is read")
	assert.Equal(t, 2, old.Protocol)
	assert.NoError(t, old.Invalid, "it parses (as protocol 2)")
	assert.True(t, old.Live)
	assert.Contains(t, kinds(st.Blockers), blockOldProtocol)
	assert.False(t, st.Safe())
	_, err = ctl.Advance(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep, "no step beside a live protocol-2 follower")
	walk(t, ctl, migrate.PhaseDualWrite) // forced: the rollback is refused too
	require.Equal(t, "dual-write", v2Beat(t, tg.Client, k, v2, "old-1", migrate.PhaseDualWrite, 2, 700*time.Millisecond))
	_, err = ctl.Rollback(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep)

	// It stops; once its hold has passed by the server's clock, its entry
	// no longer blocks, and the fleet (the protocol-3 locker, at dual-write)
	// steps.
	require.Eventually(t, func() bool {
		p, err := l.Phase(ctx)
		return err == nil && p == migrate.PhaseDualWrite
	}, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && !containsKind(st.Blockers, blockOldProtocol)
	}, 5*time.Second, 20*time.Millisecond, "the expired protocol-2 entry stops blocking")
	_, err = ctl.Rollback(ctx, false)
	require.NoError(t, err)
}

func containsKind(bs []Blocker, k BlockerKind) bool {
	for _, b := range bs {
		if b.Kind == k {
			return true
		}
	}
	return false
}

// heartbeat.lua of protocol 3: a full write lands unless a newer seq is
// stored; a touch renews only the stored entry's expiry, and only when that
// entry is the one it names (by seq), writing nothing when there is none or
// another; no JSON is decoded, the entry checked by its prefix.
func TestHeartbeatTouchAndSeq(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	k, err := migrateproto.NewKeys(t.Name())
	require.NoError(t, err)
	s := store{c: tg.Client, k: k}
	e := migrateproto.Entry{V: migrateproto.Version, Seq: 5, ID: "a", Phase: "legacy", Host: "h", PID: 1}

	r, err := s.heartbeat(ctx, e, time.Minute, 4)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), r.Written, "a touch without an entry")
	n, err := tg.Client.Do(ctx, "EXISTS", k.Clients, k.Expiry, k.Seen)
	require.NoError(t, err)
	assert.Equal(t, int64(0), n, "writes nothing")

	r, err = s.heartbeat(ctx, e, time.Minute, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(1), r.Written)
	stored := locktest.Do(t, tg.Client, "HGET", k.Clients, "a")
	assert.Equal(t, `{"v":3,"seq":5,"id":"a","phase":"legacy","host":"h","pid":1,"ns_init":0,"gen":0}`, stored)

	older := e
	older.Seq, older.Phase = 4, "dual-write"
	r, err = s.heartbeat(ctx, older, time.Minute, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(0), r.Written, "a late, older entry")
	assert.Equal(t, stored, locktest.Do(t, tg.Client, "HGET", k.Clients, "a"), "the newer entry stands")

	exp := fmt.Sprint(locktest.Do(t, tg.Client, "ZSCORE", k.Expiry, "a"))
	time.Sleep(5 * time.Millisecond)
	touch := e
	touch.Seq = 6
	r, err = s.heartbeat(ctx, touch, 2*time.Minute, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(1), r.Written)
	assert.Equal(t, stored, locktest.Do(t, tg.Client, "HGET", k.Clients, "a"), "a touch leaves the entry")
	later := fmt.Sprint(locktest.Do(t, tg.Client, "ZSCORE", k.Expiry, "a"))
	a, _ := strconv.ParseFloat(exp, 64)
	b, _ := strconv.ParseFloat(later, 64)
	assert.GreaterOrEqual(t, b-a, float64(time.Minute/time.Millisecond), "the touch renews the expiry with its hold")

	// A late touch: one sent before the stored entry (a lower seq) writes
	// nothing; one with a shorter hold than the stored expiry's leaves it.
	touch.Seq = 4
	r, err = s.heartbeat(ctx, touch, time.Second, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(0), r.Written, "a touch sent before the stored entry")
	touch.Seq = 7
	r, err = s.heartbeat(ctx, touch, time.Second, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(1), r.Written)
	assert.Equal(t, later, fmt.Sprint(locktest.Do(t, tg.Client, "ZSCORE", k.Expiry, "a")),
		"a touch never shortens the stored expiry")

	// A touch naming another entry than the stored one (the client's last
	// confirmed write was seq 6, and an older one of seq 5 stands, landed
	// late after a forget): nothing written, answered as for no entry.
	seen := fmt.Sprint(locktest.Do(t, tg.Client, "ZSCORE", k.Seen, "a"))
	touch.Seq = 8
	r, err = s.heartbeat(ctx, touch, 3*time.Minute, 6)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), r.Written, "a touch of another entry")
	assert.Equal(t, stored, locktest.Do(t, tg.Client, "HGET", k.Clients, "a"))
	assert.Equal(t, later, fmt.Sprint(locktest.Do(t, tg.Client, "ZSCORE", k.Expiry, "a")), "its expiry is not renewed")
	assert.Equal(t, seen, fmt.Sprint(locktest.Do(t, tg.Client, "ZSCORE", k.Seen, "a")), "nor its heartbeat time")
}

// The controller reads the registry in SCAN chunks: a registry larger than
// many chunks is read whole (every member, the one lagging behind among
// them), and an expiry whose entry was deleted by hand — the two sets'
// sizes then differ — is found and blocks, as one read whole would.
func TestStatusReadsTheRegistryInChunks(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ctl := initNS(t, tg.Client, t.Name())
	n := 3*scanCount + 50
	for i := 0; i < n; i++ {
		beat(t, ctl.s, fmt.Sprintf("m-%04d", i), migrate.PhaseLegacy, time.Minute)
	}
	beat(t, ctl.s, "m-0007", migrate.PhaseDualWrite, time.Minute)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	assert.Len(t, st.Members, n)
	assert.Equal(t, n-1, st.Live[migrate.PhaseLegacy])
	require.Len(t, st.Blockers, 1)
	assert.Equal(t, BlockClientPhase, st.Blockers[0].Kind)
	assert.Equal(t, "m-0007", st.Blockers[0].Member)

	beat(t, ctl.s, "m-0007", migrate.PhaseLegacy, time.Minute)
	locktest.Do(t, tg.Client, "HDEL", ctl.s.k.Clients, "m-0100")
	st, err = ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Blockers, 1, "%v", st.Blockers)
	assert.Equal(t, blockInvalidEntry, st.Blockers[0].Kind)
	assert.Equal(t, "m-0100", st.Blockers[0].Member)
	_, err = ctl.Advance(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep)
}
