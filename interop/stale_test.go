package interop

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
)

// TestInteropStaleJavaRelease: a Java holder whose lease ran out, and whose
// lock Go then took over, releases late. ShedLock's unlock is a plain DEL:
// it deletes the Go holder's key, and the Go holder learns it only at its
// own release (ErrNotHeld) or refresh. RedisLockRegistry's release checks
// its client id: the Go holder's key stays, and Spring's unlock throws.
func TestInteropStaleJavaRelease(t *testing.T) {
	cases := []struct {
		java      javaSide
		key       string
		deletesGo bool
	}{
		{java: javaShedLock, key: "job-lock:default:" + lockName, deletesGo: true},
		{java: javaIntegration, key: "locks:" + lockName},
	}
	for _, c := range cases {
		c := c
		t.Run(c.java.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			flags := javaFlags{"mode": "once", "name": lockName, "lease-ms": "300", "wait-ms": "10000"}
			for k, v := range c.java.flags {
				flags[k] = v
			}
			j := startJava(t, e, flags)
			j.expect("acquired", time.Minute)

			g := modernSide(c.key)
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			l, err := g.mk(e.lock).Lock(wctx, c.key, 10*time.Second)
			require.NoError(t, err, "Go takes the lock once the Java lease ran out")
			token, err := e.raw.Get(ctx, c.key).Result()
			require.NoError(t, err)

			j.send("release") // the Java holder, late
			line := j.next(time.Minute)
			t.Logf("the late Java release said %q", line)

			n, err := e.raw.Exists(ctx, c.key).Result()
			require.NoError(t, err)
			if c.deletesGo {
				assert.Equal(t, "released", line)
				assert.Zero(t, n, "ShedLock's DEL removed the Go holder's key")
				assert.ErrorIs(t, l.Unlock(ctx), lockbridge.ErrNotHeld, "the Go holder finds its lock gone")
				return
			}
			assert.Contains(t, line, "release-error", "Spring's unlock refuses a lock that is no longer its own")
			now, err := e.raw.Get(ctx, c.key).Result()
			require.NoError(t, err)
			assert.Equal(t, token, now, "the Go holder's key is untouched")
			require.NoError(t, l.Unlock(ctx))
		})
	}
}
