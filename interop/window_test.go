package interop

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/legacy"
)

// waitFor polls cond every 2 ms until it holds; it fails the test when it
// does not within d (a step that never comes; not a timing assertion).
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestInteropOwnerWindow: a real Java loser's GETSET overwrites a Go
// holder's value, and the Go holder's release still frees the lock (the
// owner window), so the Java loser gets it next.
//
// The Java worker talks to Redis through a proxy. The key holds an expired
// value E. The Java locker's GET reads E; when the proxy reads its GETSET it
// starts delaying frames by 300 ms, and Go takes the expired lock over (W)
// meanwhile; the Java GETSET then lands, writes the Java expiry X over W
// and returns W ≠ E: the Java side lost, and the key holds X, a few
// milliseconds from W (the Java side read its clock just before).
func TestInteropOwnerWindow(t *testing.T) {
	for _, js := range []javaSide{javaJedisLock, javaCallbackLettuceString} {
		js := js
		t.Run(js.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			p, err := legacyproto.NewProfile(profileRaw...)
			require.NoError(t, err)
			const lease = 5 * time.Second
			expired := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
			require.NoError(t, e.raw.Set(ctx, lockName, expired, 0).Err())

			proxy := faultproxy.Start(t, e.srv.Addr())
			isGetSet := faultproxy.Command("GETSET")
			getsets := proxy.Count(func(words []string) bool {
				if !isGetSet(words) {
					return false
				}
				proxy.Delay(300 * time.Millisecond) // this GETSET and what follows
				return true
			})
			flags := javaFlags{"mode": "once", "name": lockName, "lease-ms": strconv.FormatInt(lease.Milliseconds(), 10),
				"wait-ms": "60000", "poll-ms": "100"}
			for k, v := range js.flags {
				flags[k] = v
			}
			j := startJavaAt(t, e, proxy.Addr(), flags)

			waitFor(t, time.Minute, "the Java GETSET", func() bool { return getsets() >= 1 })
			lk := legacy.New(e.lock)
			l, err := lk.TryLock(ctx, lockName, lease)
			require.NoError(t, err, "Go takes the expired lock over before the Java GETSET lands")
			w, err := e.raw.Get(ctx, lockName).Result()
			require.NoError(t, err)
			var x string
			waitFor(t, 10*time.Second, "the Java GETSET to land", func() bool {
				x, err = e.raw.Get(ctx, lockName).Result()
				return err == nil && x != w
			})
			xv, err := p.DecodeValue(x)
			require.NoError(t, err, "the Java loser wrote its own expiry")
			wv, err := p.DecodeValue(w)
			require.NoError(t, err)
			t.Logf("Go wrote %d, the Java loser overwrote it with %d (%+d ms)", wv, xv, xv-wv)
			select {
			case line := <-j.lines:
				t.Fatalf("the Java locker should have lost its GETSET, said %q", line)
			default:
			}

			require.NoError(t, l.Unlock(ctx), "Go's release frees the lock in spite of the overwrite")
			proxy.Delay(0)
			j.expect("acquired", time.Minute)
			j.send("release")
			j.expect("released", time.Minute)
			n, err := e.raw.Exists(ctx, lockName).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "the Java winner released")
		})
	}
}
