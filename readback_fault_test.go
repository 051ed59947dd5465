package lockbridge_test

import (
	"context"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redisson"
)

// An acquire whose reply never came is settled by reading the token back on
// another connection — but only a positive read settles it. Here the acquire
// is held on its way (a proxy keeps its bytes past the client's read
// timeout, and forwards them after the client closed the connection): the
// read-back overtakes it and finds no token, and then the acquire runs. The
// caller must get an unknown outcome naming the token, never
// ErrNotObtained; the token the late acquire leaves has no holder and ends
// by its own ttl (docs/safety.md, Rule 2).
func TestFaultAcquireOvertakenByItsReadBack(t *testing.T) {
	const (
		timeout = 300 * time.Millisecond
		hold    = 1500 * time.Millisecond
		ttl     = 30 * time.Second
	)
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: timeout})
	defer rdb.Close()
	c := goredis.New(rdb)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		l       lockbridge.Locker
		stored  func(key string) string // the key the acquire writes its token to
		acquire string
	}{
		"modern":            {modern.New(c, modern.WithFencing()), func(k string) string { return k }, "EVALSHA"},
		"modern-unfenced":   {modern.New(c), func(k string) string { return k }, "SET"},
		"migrate-dual-read": {migrate.New(c, migrate.WithPhase(migrate.PhaseDualRead)), modernKey, "EVALSHA"},
		"migrate-modern":    {migrate.New(c, migrate.WithPhase(migrate.PhaseModern)), modernKey, "SET"},
		"redisson":          {redisson.New(c), func(k string) string { return k }, "EVALSHA"},
	} {
		t.Run(name, func(t *testing.T) {
			warmUp(t, tc.l) // the scripts are loaded: EVALSHA runs them at once
			key := "overtaken:" + name
			p.Hold(faultproxy.Command(tc.acquire), hold)
			lk, aerr := tc.l.TryLock(ctx, key, ttl)
			if aerr == nil {
				_ = lk.Unlock(ctx)
			}
			require.Error(t, aerr, "the acquire was held past the read timeout")
			assert.ErrorIs(t, aerr, lockbridge.ErrUnknownOutcome, "a negative read-back does not settle it")
			assert.NotErrorIs(t, aerr, lockbridge.ErrNotObtained)

			// The held acquire reaches the server after the read, and runs.
			require.Eventually(t, func() bool {
				n, err := direct.Do(ctx, "EXISTS", tc.stored(key))
				return err == nil && n == int64(1)
			}, 5*time.Second, 10*time.Millisecond, "the held acquire ran late")
			pttl, err := direct.Do(ctx, "PTTL", tc.stored(key))
			require.NoError(t, err)
			assert.LessOrEqual(t, pttl, ttl.Milliseconds(), "the late acquire's lock ends by its own ttl")
			assert.Positive(t, pttl)
			if name != "redisson" { // a hash field, not a string token
				v, ok, err := direct.Get(ctx, tc.stored(key))
				require.NoError(t, err)
				require.True(t, ok)
				assert.Contains(t, aerr.Error(), v, "the error names the token, so it can be cleaned up by it")
			}
		})
	}
}
