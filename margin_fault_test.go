package lockbridge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
)

// The margin of the loss signal: a holder with auto-refresh cut off from
// Redis right after its acquire (every refresh fails) has its Done closed
// before another client can get the lock, at leases of 240 ms, 600 ms and
// 1.2 s — the timer closes it ttl/12 before the local lease end, which is
// the acquire's send time plus the ttl, so before the server's expiry,
// which runs from the acquire's arrival. Three rounds per lease for every
// kind with an auto-refresh: the other client polls every 5 ms, and each
// round asks whether Done had closed when its successful attempt was sent.
func TestFaultDoneBeforeTheServerExpiryWhenCutOff(t *testing.T) {
	for _, ttl := range []time.Duration{240 * time.Millisecond, 600 * time.Millisecond, 1200 * time.Millisecond} {
		ttl := ttl
		t.Run(ttl.String(), func(t *testing.T) {
			t.Parallel()
			for _, k := range leaseKinds() {
				if !k.auto {
					continue
				}
				t.Run(k.name, func(t *testing.T) {
					r := newRig(t, k, "goredis", true)
					ctx := context.Background()
					for round := 0; round < 3; round++ {
						key := locktest.Key(t, fmt.Sprint("k", round))
						for _, p := range r.proxies {
							p.Down(false)
						}
						lk, err := r.a.TryLock(ctx, key, ttl)
						require.NoError(t, err)
						for _, p := range r.proxies {
							p.Down(true) // new connections refused
							p.Cut()      // and the open ones closed: every refresh fails
						}
						assert.True(t, takeover(t, lk, r.b, key), "round %d: another client got the lock while Done was open", round)
						assert.ErrorContains(t, lk.Err(), "lost")
					}
				})
			}
		})
	}
}
