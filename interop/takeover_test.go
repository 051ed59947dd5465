package interop

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// takeoverCase is a Java locker and the Go locker that takes the same lock;
// profile is the legacy profile of both (nil: a SET NX PX lock, modern).
type takeoverCase struct {
	java    javaSide
	goes    goSide
	profile []legacy.Option
}

func takeoverCases() []takeoverCase {
	return []takeoverCase{
		{java: javaCallbackLettuceString, goes: legacySide("legacy-atomic", legacyproto.ModeAtomic, profileRaw),
			profile: profileRaw},
		{java: javaOpsJedisJDK, goes: legacySide("legacy-atomic-jdk", legacyproto.ModeAtomic, profileJDK),
			profile: profileJDK},
		{java: javaJedisLock, goes: legacySide("legacy-classic", legacyproto.ModeClassic, profileRaw), profile: profileRaw},
		{java: javaCallbackLettuceString, goes: migrateSide(migrate.PhaseDualWrite, profileRaw), profile: profileRaw},
		{java: javaJedisLock, goes: migrateSide(migrate.PhaseDualWrite, profileRaw), profile: profileRaw},
		{java: javaIntegration, goes: modernSide("locks:" + lockName)},
		{java: javaShedLock, goes: modernSide("job-lock:default:" + lockName)},
	}
}

// storedKey is the Redis key of the case's lock.
func (c takeoverCase) storedKey(t *testing.T) string {
	if c.profile == nil {
		return c.goes.key
	}
	p, err := legacyproto.NewProfile(c.profile...)
	require.NoError(t, err)
	k, err := p.EncodeKey(lockName)
	require.NoError(t, err)
	return k
}

// expiry decodes the stored legacy value of the case's key.
func (c takeoverCase) expiry(t *testing.T, e *env) int64 {
	t.Helper()
	p, err := legacyproto.NewProfile(c.profile...)
	require.NoError(t, err)
	s, err := e.raw.Get(context.Background(), c.storedKey(t)).Result()
	require.NoError(t, err)
	v, err := p.DecodeValue(s)
	require.NoError(t, err)
	return v
}

// TestInteropCrashTakeover: a Java holder killed with SIGKILL is taken over
// by Go only once its lease is over, and a Go holder that vanishes is taken
// over by the Java locker only once its lease is over.
func TestInteropCrashTakeover(t *testing.T) {
	const lease = 1500 * time.Millisecond
	for _, c := range takeoverCases() {
		c := c
		t.Run(c.java.name+"+"+c.goes.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			t.Run("java-crashes", func(t *testing.T) {
				e := newEnv(t)
				flags := javaFlags{"mode": "once", "name": lockName, "lease-ms": strconv.FormatInt(lease.Milliseconds(), 10),
					"wait-ms": "10000", "poll-ms": "10"}
				for k, v := range c.java.flags {
					flags[k] = v
				}
				j := startJava(t, e, flags)
				j.expect("acquired", time.Minute)
				javaValue, err := e.raw.Get(ctx, c.storedKey(t)).Result()
				require.NoError(t, err)
				var javaExpiry int64
				if c.profile != nil {
					javaExpiry = c.expiry(t, e)
				}
				j.kill()

				lk := c.goes.mk(e.lock)
				_, err = lk.TryLock(ctx, c.goes.key, lease)
				require.ErrorIs(t, err, lockbridge.ErrNotObtained, "the dead Java holder's lease still runs")
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				l, err := lk.Lock(wctx, c.goes.key, lease)
				require.NoError(t, err)
				took := time.Now()
				if c.profile != nil {
					p, _ := legacyproto.NewProfile(c.profile...)
					assert.True(t, p.Expired(javaExpiry, took), "Go took over only after the Java expiry %d (now %d)", javaExpiry,
						took.UnixMilli())
				}
				now, err := e.raw.Get(ctx, c.storedKey(t)).Result()
				require.NoError(t, err)
				assert.NotEqual(t, javaValue, now, "Go's value replaced the dead holder's")
				require.NoError(t, l.Unlock(ctx))
			})
			t.Run("go-crashes", func(t *testing.T) {
				e := newEnv(t)
				lk := c.goes.mk(e.lock)
				_, err := lk.TryLock(ctx, c.goes.key, lease) // never released: the holder is gone
				require.NoError(t, err)
				goValue, err := e.raw.Get(ctx, c.storedKey(t)).Result()
				require.NoError(t, err)
				var goExpiry int64
				if c.profile != nil {
					goExpiry = c.expiry(t, e)
				}
				flags := javaFlags{"mode": "once", "name": lockName, "lease-ms": strconv.FormatInt(lease.Milliseconds(), 10),
					"wait-ms": "30000", "poll-ms": "10"}
				for k, v := range c.java.flags {
					flags[k] = v
				}
				j := startJava(t, e, flags)
				at, err := strconv.ParseInt(j.expect("acquired", time.Minute), 10, 64)
				require.NoError(t, err)
				if c.profile != nil {
					assert.Greater(t, at, goExpiry, "Java took over only after Go's expiry")
				} else {
					pttl, err := e.raw.PTTL(ctx, c.storedKey(t)).Result()
					require.NoError(t, err)
					assert.Positive(t, pttl, "the Java lock has its own lease")
				}
				now, err := e.raw.Get(ctx, c.storedKey(t)).Result()
				require.NoError(t, err)
				assert.NotEqual(t, goValue, now, "the Java value replaced the vanished Go holder's")
				j.send("release")
				j.expect("released", time.Minute)
			})
		})
	}
}
