package migrate

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
)

// A ttl with a fraction of a millisecond (1.999 ms): the modern key's PX
// takes whole milliseconds, so the server keeps the key 1 ms, while the
// holder counted the whole 1.999 ms — its give-up point (ttl/12 before
// that end) fell some 0.8 ms after the key could expire. A second locker
// polls the key until it gets it; the moment its reply is back, the first
// holder's lease must have passed its give-up point (what closes Done),
// else both held the lock at once. The give-up point is read from the
// lease (ExpiresAt minus ttl/12), not from Done, so a late timer does not
// decide the outcome. For the acquire, and for a refresh to that ttl (a
// round whose refresh came back after its own give-up point is over, and
// skipped).
// Modern, which truncates the ttl to whole milliseconds, is the control.
func TestFaultSubMillisecondTTLOutlivesPX(t *testing.T) {
	tg := locktest.Single(t)[0]
	const ttl = 1999 * time.Microsecond
	const rounds = 40
	for _, p := range []Phase{PhaseDualRead, PhaseModern} {
		for _, op := range []string{"acquire", "refresh"} {
			t.Run(p.String()+"/"+op, func(t *testing.T) {
				ctx := faultCtx(t)
				a := New(tg.Client, WithPhase(p))
				b := New(tg.Client, WithPhase(p))
				overlaps, worst := 0, time.Duration(0)
				for i := 0; i < rounds; i++ {
					name := locktest.Key(t, fmt.Sprintf("k%d", i))
					first := ttl
					if op == "refresh" {
						first = time.Second
					}
					lk, err := a.TryLock(ctx, name, first)
					require.NoError(t, err)
					if op == "refresh" {
						if err := lk.Refresh(ctx, ttl); err != nil {
							// Its reply came after the new give-up point (a
							// loaded host): the lock is over, nothing to judge.
							require.ErrorIs(t, err, lockbridge.ErrNotHeld)
							continue
						}
					}
					for {
						lb, err := b.TryLock(ctx, name, time.Second)
						if err != nil {
							require.ErrorIs(t, err, lockbridge.ErrNotObtained)
							continue
						}
						// The give-up point of a's lease as a's last grant set it.
						if left := time.Until(lk.ExpiresAt().Add(-ttl / 12)); left > 0 {
							overlaps++
							worst = max(worst, left)
						}
						require.NoError(t, lb.Unlock(ctx))
						break
					}
				}
				assert.Zero(t, overlaps, "in %d of %d rounds the second locker got the lock while the first one's lease "+
					"still ran (by up to %v before its give-up point): the local lease counted the fraction of a "+
					"millisecond that PX drops", overlaps, rounds, worst)
			})
		}
	}
}
