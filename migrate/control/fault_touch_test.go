package control

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
)

// A touch held up in the network lands after the follower's next
// heartbeat, which registered a longer hold for a longer lock: it must not
// shorten the entry's life. Before, a touch set the expiry to its own
// (shorter) hold whatever was stored — a touch was not judged by its seq as
// an entry is — so the controller counted the follower dead while its
// dual-read lock (modern key only) still had most of its ttl; cut off, it
// was rolled past to legacy, and a locker there took the legacy key beside
// it: two holders.
func TestFaultLateTouchKeepsTheLongerHold(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, direct, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualRead)

	p := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rc.Close()
	// The default phase lease (12 intervals): while it hears the notices
	// and its readings succeed, it reads only every 9 to 10 intervals.
	const interval = 300 * time.Millisecond
	const lease = migrate.DefaultPhaseLeaseIntervals * interval
	l := migrate.New(goredis.New(rc), migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(interval))
	defer func() {
		p.Down(false)
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = l.Close(cctx)
	}()
	beats := p.Count(faultproxy.Script(migrateproto.HeartbeatScript))
	ph, err := l.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualRead, ph)
	// Its loop listens to the notices and has read once more (three
	// heartbeats to start, one after subscribing).
	require.Eventually(t, func() bool { return listeners(t, direct, ctl.s.k) == 1 && beats() >= 4 }, 10*time.Second,
		10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)

	// The loop's next reading is a touch (nothing changed) with the short
	// hold of a follower that has taken no lock yet; the network holds it
	// up for a second, past the reading's deadline (one interval).
	const delay = time.Second
	before := beats()
	p.Delay(delay)
	require.Eventually(t, func() bool { return beats() > before }, 2*lease, time.Millisecond)
	sent := time.Now()
	p.Delay(0) // only the touch is held up

	// A lock of a longer ttl than any before: its reading writes the entry
	// (the touch's outcome is unknown) with the longer hold, and lands
	// first.
	name := locktest.Key(t, "orders")
	lk, err := l.TryLock(ctx, name, 20*time.Second)
	require.NoError(t, err)
	defer lk.Unlock(ctx)
	require.Equal(t, migrate.PhaseDualRead, heldPhase(lk))

	// The late touch lands; then the follower is cut off (a partition):
	// its lock lives on for its ttl.
	time.Sleep(time.Until(sent.Add(delay + 600*time.Millisecond)))
	p.Down(true)
	p.Cut()
	// Past the late touch's hold.
	time.Sleep(time.Until(sent.Add(delay + lease + 500*time.Millisecond)))
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	assert.True(t, st.Members[0].Live, "the entry lives for the hold of its lock (until %v), not the late touch's",
		st.Members[0].Expires)

	_, err = ctl.Step(ctx, migrate.PhaseDualRead, migrate.PhaseDualWrite, false)
	require.NoError(t, err, "dual-write excludes dual-read: one rollback is safe")
	_, back := ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseLegacy, false)
	other := migrate.New(direct, migrate.WithPhaseFrom(ns))
	defer other.Close(ctx)
	_, err = other.TryLock(ctx, name, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder beside the cut-off follower's dual-read lock")
	require.NoError(t, lk.Err(), "the follower's lock still holds")
	var ue *UnsafeStepError
	require.ErrorAs(t, back, &ue, "the follower's dual-read lock blocks the rollback to legacy")
	assert.Equal(t, []BlockerKind{blockIncompatible}, kinds(ue.Blockers))
}

// A heartbeat that did not land renews no phase lease. An entry under the
// locker's id with a seq above its own — not its write: its readings are
// one at a time, so a newer one of its own cannot have landed first — makes
// every heartbeat of the locker write nothing (a touch as an entry), so the
// registry no longer counts it once that entry's expiry passes. Before, the
// reading counted as good and renewed the lease: the locker went on locking
// in its phase unseen by the controller. Now it refuses, with a typed
// error, until the entry is gone (`lockbridge fleet forget`).
func TestFaultHeartbeatThatDidNotLandRenewsNoLease(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	l := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(30*time.Second))
	defer l.Close(ctx)
	lk, err := l.TryLock(ctx, locktest.Key(t, "warm"), time.Second)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))

	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	id := st.Members[0].ID
	k := ctl.s.k
	foreign := `{"v":3,"seq":9007199254740991,"id":"` + id + `","phase":"legacy","host":"h","pid":1,"ns_init":0,"gen":0}`
	locktest.Do(t, tg.Client, "HSET", k.Clients, id, foreign)
	exp := fmt.Sprint(locktest.Do(t, tg.Client, "ZSCORE", k.Expiry, id))

	// A longer ttl than any before: the lock call reads first.
	name := locktest.Key(t, "orders")
	_, err = l.TryLock(ctx, name, time.Minute)
	phaseErr(t, err, migrate.ReasonLeaseLapsed)
	assert.Equal(t, foreign, locktest.Do(t, tg.Client, "HGET", k.Clients, id), "its heartbeats wrote nothing")
	assert.Equal(t, exp, fmt.Sprint(locktest.Do(t, tg.Client, "ZSCORE", k.Expiry, id)), "and renewed nothing")

	ok, err := ctl.Forget(ctx, id, true)
	require.NoError(t, err)
	require.True(t, ok)
	lk, err = l.TryLock(ctx, name, time.Minute)
	require.NoError(t, err, "it locks again once its entry is its own")
	defer lk.Unlock(ctx)
	st, err = ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	assert.True(t, st.Members[0].Live)
	assert.True(t, st.Members[0].Expires.After(lk.ExpiresAt()), "counted beyond its lock's end")
}

// A full write of the follower's entry is held up in the network past its
// reading's deadline (its outcome unknown); the follower's next reading
// writes a newer entry, confirmed. The operator forgets the live client
// (`fleet forget --force`), and only then the old write lands: the registry
// holds an entry the client stopped reporting, older than its last
// confirmed one. The follower's next heartbeat would only touch (its entry
// has not changed since its confirmed write); a touch names the seq of that
// write, finds another there and writes nothing, so the follower sends its
// entry again. Before, a touch renewed whatever entry stood under the id
// with a lower seq, and so kept the old write alive, reporting a lock
// released long ago.
func TestFaultLateFullWriteAfterForgetIsNotTouched(t *testing.T) {
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, direct, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualRead)

	p := faultproxy.Start(t, srv.Addr())
	rc := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 500 * time.Millisecond})
	defer rc.Close()
	// A long interval: no reading of the loop's comes between the lock
	// calls' readings, which run when a lock's ttl is longer than any before.
	l := migrate.New(goredis.New(rc), migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(time.Minute))
	defer func() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = l.Close(cctx)
	}()
	k := ctl.s.k
	beats := p.Count(faultproxy.Script(migrateproto.HeartbeatScript))
	_, err := l.Phase(ctx)
	require.NoError(t, err)
	// Its loop listens to the notices and has read once more (three
	// heartbeats to start, one after subscribing).
	require.Eventually(t, func() bool { return listeners(t, direct, k) == 1 && beats() >= 4 }, 10*time.Second,
		10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	a, err := l.TryLock(ctx, locktest.Key(t, "a"), time.Second)
	require.NoError(t, err)
	st, err := ctl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st.Members, 1)
	id := st.Members[0].ID

	// The next full write (reporting lock a) is held up for 2 s: past the
	// client's read timeout.
	var oldSeq atomic.Value
	p.Hold(func(w []string) bool {
		if faultproxy.Script(migrateproto.HeartbeatScript)(w) && len(w) > 11 && strings.HasPrefix(w[11], "{") {
			oldSeq.Store(w[9])
			return true
		}
		return false
	}, 2*time.Second)
	_, err = l.TryLock(ctx, locktest.Key(t, "b"), 2*time.Second)
	require.Error(t, err, "the reading's outcome is unknown")
	require.NotNil(t, oldSeq.Load(), "the full write was held up")

	// A newer entry (no lock held), confirmed; then the operator forgets
	// the client, and the old write lands.
	require.NoError(t, a.Unlock(ctx))
	c, err := l.TryLock(ctx, locktest.Key(t, "c"), 3*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.Unlock(ctx))
	confirmed := entrySeq(t, locktest.Do(t, direct, "HGET", k.Clients, id))
	ok, err := ctl.Forget(ctx, id, true)
	require.NoError(t, err)
	require.True(t, ok)
	require.Eventually(t, func() bool {
		v, err := direct.Do(ctx, "HGET", k.Clients, id)
		return err == nil && v != nil && fmt.Sprint(entrySeq(t, v)) == oldSeq.Load()
	}, 5*time.Second, 10*time.Millisecond, "the old write landed after the forget")

	// The next reading: the entry has not changed since the confirmed
	// write, so it touches.
	d, err := l.TryLock(ctx, locktest.Key(t, "d"), 4*time.Second)
	require.NoError(t, err)
	defer d.Unlock(ctx)
	v := locktest.Do(t, direct, "HGET", k.Clients, id)
	assert.Greater(t, entrySeq(t, v), confirmed, "the follower wrote its entry again; the registry holds %s", v)
	assert.NotContains(t, fmt.Sprint(v), "held_oldest", "no lock released long ago is reported")
}

// entrySeq is the seq of a registry entry (a protocol 3 entry's JSON).
func entrySeq(t *testing.T, v any) int64 {
	t.Helper()
	var e migrateproto.Entry
	require.NoError(t, json.Unmarshal([]byte(fmt.Sprint(v)), &e), "entry %v", v)
	return e.Seq
}
