package main

// The embedded Redis (miniredis) is only the demo's default, but the demo
// runs every lock package on it: this checks, through both adapters, that
// each package's basic cycle and every command and script feature the locks
// use works there.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/redigoadapter"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/lockbridge/lockbridge/modern"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// embeddedClients starts an embedded Redis and returns a go-redis and a
// redigo client on it.
func embeddedClients(t *testing.T) (*embedded, map[string]driver.Client) {
	t.Helper()
	em, err := startEmbedded()
	require.NoError(t, err)
	t.Cleanup(em.close)
	gr := goredislib.NewClient(&goredislib.Options{Addr: em.addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = gr.Close() })
	addr := em.addr()
	pool := &redis.Pool{MaxIdle: 8, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", addr)
	}}
	t.Cleanup(func() { _ = pool.Close() })
	return em, map[string]driver.Client{"goredis": goredis.New(gr), "redigo": redigoadapter.New(pool)}
}

func eachEmbedded(t *testing.T, fn func(t *testing.T, em *embedded, c driver.Client)) {
	em, cs := embeddedClients(t)
	for _, name := range []string{"goredis", "redigo"} {
		c := cs[name]
		t.Run(name, func(t *testing.T) {
			em.m.FlushAll()
			fn(t, em, c)
		})
	}
}

func TestEmbeddedLegacyCycle(t *testing.T) {
	eachEmbedded(t, func(t *testing.T, em *embedded, c driver.Client) {
		ctx := context.Background()
		for _, mode := range []legacyproto.Mode{legacyproto.ModeAtomic, legacyproto.ModeClassic} {
			for _, kc := range []legacy.KeyCodec{legacy.KeyRaw, legacy.KeyJavaString} {
				for _, vc := range legacy.ValueCodecs() {
					l := legacy.New(c, legacyproto.WithMode(mode), legacy.WithKeyCodec(kc), legacy.WithValueCodec(vc))
					name := "cycle:" + mode.String() + ":" + kc.String() + ":" + vc.String()
					lk, err := l.TryLock(ctx, name, 5*time.Second)
					require.NoError(t, err, name)
					_, err = l.TryLock(ctx, name, 5*time.Second)
					require.ErrorIs(t, err, lockbridge.ErrNotObtained, name)
					require.NoError(t, lk.Refresh(ctx, 5*time.Second), name)
					require.NoError(t, lk.Unlock(ctx), name)
					lk, err = l.TryLock(ctx, name, 5*time.Second)
					require.NoError(t, err, name)
					require.NoError(t, lk.Unlock(ctx), name)
				}
			}
		}
		// An expired value is taken over; the Java seed sees the Go holder.
		l := legacy.New(c)
		require.NoError(t, em.m.Set("legacy:expired", "1000"))
		lk, err := l.TryLock(ctx, "legacy:expired", time.Second)
		require.NoError(t, err)
		_, ok, err := javareplay.Lock(ctx, c, "legacy:expired", time.Second, nil)
		require.NoError(t, err)
		assert.False(t, ok, "the seed must see the Go holder")
		require.NoError(t, lk.Unlock(ctx))
		exp, ok, err := javareplay.Lock(ctx, c, "legacy:expired", time.Second, nil)
		require.NoError(t, err)
		require.True(t, ok)
		_, err = l.TryLock(ctx, "legacy:expired", time.Second)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		require.NoError(t, javareplay.Unlock(ctx, c, "legacy:expired", exp, nil))
		// A foreign value is reported, never taken.
		require.NoError(t, em.m.Set("legacy:foreign", "uuid:123"))
		_, err = l.TryLock(ctx, "legacy:foreign", time.Second)
		var fe *legacy.ForeignValueError
		require.ErrorAs(t, err, &fe)
	})
}

func TestEmbeddedModernCycle(t *testing.T) {
	eachEmbedded(t, func(t *testing.T, em *embedded, c driver.Client) {
		ctx := context.Background()
		l := modern.New(c, modern.WithFencing())
		lk, err := l.TryLock(ctx, "modern:a", time.Second)
		require.NoError(t, err)
		m := lk.(*modern.Lock)
		first := m.Fence()
		assert.Greater(t, first, int64(0))
		ttl, err := m.TTL(ctx)
		require.NoError(t, err)
		assert.InDelta(t, float64(time.Second), float64(ttl), float64(100*time.Millisecond))
		_, err = l.TryLock(ctx, "modern:a", time.Second)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		require.NoError(t, m.Refresh(ctx, 2*time.Second))

		// The release script publishes on the release channel (PUBLISH via
		// redis.pcall inside the script) and a plain SUBSCRIBE sees it.
		sub, err := c.Subscribe(ctx, "{modern:a}:released")
		require.NoError(t, err)
		defer sub.Close()
		require.NoError(t, m.Unlock(ctx))
		select {
		case msg := <-sub.Messages():
			assert.Equal(t, "released", msg.Payload)
		case <-time.After(2 * time.Second):
			t.Fatal("no release notification")
		}

		// A waiter wakes on the release.
		lk, err = l.TryLock(ctx, "modern:a", 10*time.Second)
		require.NoError(t, err)
		assert.Greater(t, lk.(*modern.Lock).Fence(), first)
		go func() { time.Sleep(50 * time.Millisecond); _ = lk.Unlock(ctx) }()
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		lk2, err := l.Lock(wctx, "modern:a", time.Second)
		require.NoError(t, err)
		require.NoError(t, lk2.Unlock(ctx))

		// PX leases end by the wall clock, as on a real server.
		_, err = l.TryLock(ctx, "modern:px", 50*time.Millisecond)
		require.NoError(t, err)
		time.Sleep(80 * time.Millisecond)
		lk, err = l.TryLock(ctx, "modern:px", time.Second)
		require.NoError(t, err, "the first lease must have ended")
		require.NoError(t, lk.Unlock(ctx))

		// Auto-refresh keeps a short lease alive.
		ar := modern.New(c, modern.WithAutoRefresh())
		lk, err = ar.TryLock(ctx, "modern:auto", 60*time.Millisecond)
		require.NoError(t, err)
		time.Sleep(200 * time.Millisecond)
		require.NoError(t, lk.Err())
		require.NoError(t, lk.Unlock(ctx))
	})
}

func TestEmbeddedScriptsAfterFlush(t *testing.T) {
	eachEmbedded(t, func(t *testing.T, em *embedded, c driver.Client) {
		ctx := context.Background()
		l := modern.New(c)
		lk, err := l.TryLock(ctx, "flush:a", time.Second)
		require.NoError(t, err)
		_, err = c.Do(ctx, "SCRIPT", "FLUSH")
		require.NoError(t, err)
		require.NoError(t, lk.Unlock(ctx), "EVALSHA falls back to EVAL on NOSCRIPT")
		r, err := c.Do(ctx, "EVALSHA", "0000000000000000000000000000000000000000", 0)
		assert.Nil(t, r)
		assert.True(t, driver.HasPrefix(err, "NOSCRIPT"), "%v", err)
		// TIME inside a script, after redis.replicate_commands.
		r, err = c.Do(ctx, "EVAL",
			"redis.replicate_commands() local t = redis.call('TIME') redis.call('SET', KEYS[1], t[1]) return t", 1, "time:a")
		require.NoError(t, err)
		ts := r.([]any)
		require.Len(t, ts, 2)
		assert.NotEmpty(t, ts[0])
		// Binary keys and values survive.
		bin := "\xac\xed\x00\x05t\x00\x03k\xffy"
		ok, err := c.SetNX(ctx, bin, "\x00\x01")
		require.NoError(t, err)
		require.True(t, ok)
		v, ok, err := c.Get(ctx, bin)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "\x00\x01", v)
		old, ok, err := c.GetSet(ctx, bin, "x")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "\x00\x01", old)
	})
}

func TestEmbeddedMigrateCycle(t *testing.T) {
	eachEmbedded(t, func(t *testing.T, em *embedded, c driver.Client) {
		ctx := context.Background()
		const ns = "emb"
		// The embedded server cannot report its eviction policy; it never
		// evicts. The quiet period outlasts the test: the step past
		// dual-write below is refused by the sighting, however slow the run.
		ctl, err := control.New(c, ns, control.WithQuietPeriod(time.Minute),
			control.WithInitSilence(time.Millisecond),
			control.WithMaxmemoryPolicy("noeviction"))
		require.NoError(t, err)
		_, err = ctl.Init(ctx, false)
		require.NoError(t, err)
		for _, p := range []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
			migrate.PhaseModern} {
			l := migrate.New(c, migrate.WithPhase(p), migrate.WithNamespace(ns), migrate.WithPhaseInterval(20*time.Millisecond))
			name := "mig:" + p.String()
			lk, err := l.TryLock(ctx, name, time.Second)
			require.NoError(t, err, p)
			_, err = l.TryLock(ctx, name, time.Second)
			require.ErrorIs(t, err, lockbridge.ErrNotObtained, p)
			require.NoError(t, lk.Refresh(ctx, time.Second), p)
			require.NoError(t, lk.Unlock(ctx), p)
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			require.Len(t, st.Members, 1, "the registry (HSET/HGETALL) holds the locker")
			assert.Equal(t, p, st.Members[0].Phase)
			require.NoError(t, l.Close(ctx))
			st, err = ctl.Status(ctx)
			require.NoError(t, err)
			for _, m := range st.Members { // a heartbeat that got no reply in time: left dead, never live
				require.False(t, m.Live, "Close removes the entry (HDEL), or leaves it dead: %+v", m)
			}
		}

		// A dual-write locker meeting a seed holder records a sighting.
		dw := migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite), migrate.WithNamespace(ns))
		defer dw.Close(ctx)
		exp, ok, err := javareplay.Lock(ctx, c, "mig:seen", 5*time.Second, nil)
		require.NoError(t, err)
		require.True(t, ok)
		_, err = dw.TryLock(ctx, "mig:seen", time.Second)
		require.ErrorIs(t, err, lockbridge.ErrNotObtained)
		require.NoError(t, javareplay.Unlock(ctx, c, "mig:seen", exp, nil))
		st, err := ctl.Status(ctx)
		require.NoError(t, err)
		assert.Equal(t, "mig:seen", st.Sighting.Key)
		require.NoError(t, dw.Close(ctx))

		// The controller steps and refuses on the embedded Redis too.
		step, err := ctl.Advance(ctx, false)
		require.NoError(t, err)
		assert.Equal(t, migrate.PhaseDualWrite, step.To)
		_, err = ctl.Advance(ctx, false)
		var ue *control.UnsafeStepError
		require.True(t, errors.As(err, &ue), "%v", err)
		_, err = ctl.Rollback(ctx, false)
		require.NoError(t, err)
		p, err := ctl.Phase(ctx)
		require.NoError(t, err)
		assert.Equal(t, migrate.PhaseLegacy, p)

		// A follower reads the phase and hears the change notice.
		f := migrate.New(c, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(time.Hour))
		defer f.Close(ctx)
		p, err = f.Phase(ctx)
		require.NoError(t, err)
		require.Equal(t, migrate.PhaseLegacy, p)
		require.Eventually(t, func() bool {
			args := []any{"PUBSUB", "NUMSUB"}
			for i := 0; i < 64; i++ { // the sharded notice channels of protocol 3
				args = append(args, fmt.Sprintf("lockbridge:{%s}:phase-changed:%d", ns, i))
			}
			r, err := c.Do(ctx, args...)
			a, _ := r.([]any)
			var n int64
			for i := 1; i < len(a); i += 2 {
				v, _ := a[i].(int64)
				n += v
			}
			return err == nil && n == 1
		}, 5*time.Second, 5*time.Millisecond, "the follower subscribes to the phase notices")
		_, err = ctl.Advance(ctx, true)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			p, _ := f.Phase(ctx)
			return p == migrate.PhaseDualWrite
		}, 5*time.Second, 10*time.Millisecond, "the PUBLISHed phase notice reaches the follower")
	})
}
