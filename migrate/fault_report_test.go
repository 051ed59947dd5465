package migrate

import (
	"context"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// A refresh sent just before the give-up point, slowed on its way (200 ms
// each way), lands while the server still holds the lock — the server's
// lease ran from the acquire's arrival, later than its send — and extends
// it by a whole ttl; its reply comes after the give-up, so the lock has
// ended here. Until that refresh's lease has surely ended on the server,
// the heartbeats must keep reporting the lock: otherwise the controller
// may step past its phase while the server still holds it.
func TestFaultLateRefreshStaysReportedUntilTheServerLeaseEnds(t *testing.T) {
	for _, ph := range []Phase{PhaseDualRead, PhaseModern} {
		t.Run(ph.String(), func(t *testing.T) {
			srv := redistest.Start(t)
			direct := locktest.GoRedis(t, srv)
			ctx := context.Background()
			ns := t.Name()
			ctl := initNS(t, direct, ns)
			walk(t, ctl, ph)
			p := faultproxy.Start(t, srv.Addr())
			rc := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 5 * time.Second})
			defer rc.Close()
			l := New(goredis.New(rc), WithPhaseFrom(ns), WithPhaseInterval(2*time.Second))
			defer l.Close(ctx)
			_, err := l.Phase(ctx)
			require.NoError(t, err)
			name := locktest.Key(t, "k")
			_, modernKey, err := l.Keys(name)
			require.NoError(t, err)

			const ttl = time.Second
			p.Delay(200 * time.Millisecond)
			start := time.Now()
			lk, err := l.TryLock(ctx, name, ttl)
			require.NoError(t, err)
			time.Sleep(time.Until(start.Add(ttl - ttl/12 - 40*time.Millisecond)))
			_ = lk.Refresh(ctx, ttl) // lands while the server holds; answered after the give-up
			p.Delay(0)
			for time.Since(start) < 3*ttl {
				report := l.held.report()
				if pttl := locktest.PTTL(t, direct, modernKey); pttl > 0 {
					assert.NotZero(t, report.newest, "the server holds the lock for %v more, and the heartbeat would not report it",
						time.Duration(pttl)*time.Millisecond)
					assert.GreaterOrEqual(t, report.left, time.Duration(pttl)*time.Millisecond-50*time.Millisecond,
						"the reported hold covers the server's lease")
				} else {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
