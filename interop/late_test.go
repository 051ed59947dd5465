package interop

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/legacy"
)

// TestInteropJavaLateSETNX: the Java lockers compute their expiry
// (System.currentTimeMillis() + lease + 1) before the SETNX round trip. When
// that SETNX reaches Redis later than the lease — a JVM pause, a slow
// network — the Java side acquires a lock whose stored expiry has already
// passed, and every contender that judges expiry by the protocol's rule may
// take it over at once: here a Go locker with the default profile does, and
// both believe they hold the lock. A skew margin (legacy.WithSkewMargin)
// longer than such delays makes the Go side wait them out.
func TestInteropJavaLateSETNX(t *testing.T) {
	for _, margin := range []time.Duration{0, 3 * time.Second} {
		margin := margin
		t.Run("margin-"+margin.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			proxy := faultproxy.Start(t, e.srv.Addr())
			isSetNX := faultproxy.Command("SETNX")
			proxy.Count(func(words []string) bool {
				if isSetNX(words) {
					proxy.Delay(1500 * time.Millisecond) // this SETNX and its reply
				}
				return false
			})
			flags := javaFlags{"mode": "once", "name": lockName, "lease-ms": "1000", "wait-ms": "20000", "poll-ms": "100"}
			for k, v := range javaCallbackLettuceString.flags {
				flags[k] = v
			}
			j := startJavaAt(t, e, proxy.Addr(), flags)

			var stored string
			waitFor(t, time.Minute, "the Java SETNX to land", func() bool {
				v, err := e.raw.Get(ctx, lockName).Result()
				stored = v
				return err == nil
			})
			p, err := legacyproto.NewProfile()
			require.NoError(t, err)
			v, err := p.DecodeValue(stored)
			require.NoError(t, err)
			assert.Less(t, v, time.Now().UnixMilli(), "the Java expiry had passed when its SETNX landed")

			lk := legacy.New(e.lock, legacy.WithSkewMargin(margin))
			l, err := lk.TryLock(ctx, lockName, 10*time.Second)
			at := j.expect("acquired", time.Minute)
			t.Logf("Java stored %d, acquired at %s", v, at)
			if margin == 0 {
				require.NoError(t, err, "Go takes over the expired value: both hold the lock")
				require.NoError(t, l.Unlock(ctx))
			} else {
				require.ErrorIs(t, err, lockbridge.ErrNotObtained, "the margin waits out the late SETNX")
			}
			j.send("release")
			j.expect("released", time.Minute)
		})
	}
}
