package lockbridge_test

import (
	"context"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redisson"
	"github.com/lockbridge/lockbridge/redlock"
)

// An acquire whose caller gave up (its context ended with the command on
// its way) is undone by a release of its token — which settles it only if
// it found the token. Here the acquire is held in the network past the
// caller's end and past the undo (and the undo's second look): the undo
// finds nothing, and then the acquire runs and takes the lock, held by no
// one, for its whole ttl. The caller was told ErrNotObtained — the
// acquire "released" (modern's TryLock doc) — where nothing settled the
// outcome: as for a read-back that finds no token (TestFault-
// AcquireOvertakenByItsReadBack), the error must be an unknown outcome.
// (With a namespace, migrate also drops the acquire's reservation from
// its heartbeats on ErrNotObtained.)
func TestFaultGivenUpAcquireLandsAfterItsUndo(t *testing.T) {
	const (
		giveUp = 200 * time.Millisecond
		hold   = 1500 * time.Millisecond
		ttl    = 30 * time.Second
	)
	srv := redistest.Start(t)
	direct := locktest.GoRedis(t, srv)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
	defer rdb.Close()
	c := goredis.New(rdb)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		l       lockbridge.Locker
		stored  func(key string) string // the key the acquire writes its token to
		acquire string
	}{
		"modern":             {modern.New(c, modern.WithFencing()), func(k string) string { return k }, "EVALSHA"},
		"modern-unfenced":    {modern.New(c), func(k string) string { return k }, "SET"},
		"migrate-dual-write": {migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite)), modernKey, "EVALSHA"},
		"migrate-dual-read":  {migrate.New(c, migrate.WithPhase(migrate.PhaseDualRead)), modernKey, "EVALSHA"},
		"migrate-modern":     {migrate.New(c, migrate.WithPhase(migrate.PhaseModern)), modernKey, "SET"},
		"redisson":           {redisson.New(c), func(k string) string { return k }, "EVALSHA"},
	} {
		t.Run(name, func(t *testing.T) {
			warmUp(t, tc.l) // the scripts are loaded: EVALSHA runs them at once
			key := "givenup:" + name
			p.Hold(faultproxy.Command(tc.acquire), hold)
			cctx, cancel := context.WithTimeout(ctx, giveUp)
			lk, aerr := tc.l.TryLock(cctx, key, ttl)
			cancel()
			if aerr == nil {
				_ = lk.Unlock(ctx)
			}
			require.Error(t, aerr, "the acquire was held past the caller's end")
			require.ErrorIs(t, aerr, context.DeadlineExceeded)

			// The held acquire reaches the server after the undo, and runs.
			require.Eventually(t, func() bool {
				n, err := direct.Do(ctx, "EXISTS", tc.stored(key))
				return err == nil && n == int64(1)
			}, 5*time.Second, 10*time.Millisecond, "the held acquire ran late")
			assert.ErrorIs(t, aerr, lockbridge.ErrUnknownOutcome, "an undo that found nothing does not settle it")
			assert.NotErrorIs(t, aerr, lockbridge.ErrNotObtained, "the lock was taken after the caller was told not")
		})
	}
}

// The same for a Redlock round, whose nodes give up at the node timeout
// (50 ms by default): the SETs held on every node past it and past the
// undo, then run, hold the lock on a majority of nodes for its ttl — and
// the caller was told ErrNotObtained, the undo's "no key" taken for
// settled.
func TestFaultGivenUpRedlockRoundLandsAfterItsUndo(t *testing.T) {
	const (
		hold = 1500 * time.Millisecond
		ttl  = 30 * time.Second
	)
	ctx := context.Background()
	var cs, direct []driver.Client
	var ps []*faultproxy.Proxy
	for i := 0; i < 3; i++ {
		srv := redistest.Start(t)
		direct = append(direct, locktest.GoRedis(t, srv))
		p := faultproxy.Start(t, srv.Addr())
		ps = append(ps, p)
		rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1})
		t.Cleanup(func() { _ = rdb.Close() })
		cs = append(cs, goredis.New(rdb))
	}
	l := redlock.New(cs)
	warmUp(t, l)
	key := "givenup:redlock"
	for _, p := range ps {
		p.Hold(faultproxy.Command("SET"), hold)
	}
	lk, aerr := l.TryLock(ctx, key, ttl)
	if aerr == nil {
		_ = lk.Unlock(ctx)
	}
	require.Error(t, aerr, "the round was held past the node timeout")
	require.ErrorIs(t, aerr, redlock.ErrNodeTimeout)
	require.Eventually(t, func() bool {
		held := 0
		for _, c := range direct {
			if n, err := c.Do(ctx, "EXISTS", key); err == nil && n == int64(1) {
				held++
			}
		}
		return held == len(direct)
	}, 5*time.Second, 10*time.Millisecond, "the held round ran late, on every node")
	assert.ErrorIs(t, aerr, lockbridge.ErrUnknownOutcome, "an undo that found nothing does not settle it")
	assert.NotErrorIs(t, aerr, lockbridge.ErrNotObtained, "the lock was taken after the caller was told not")
}
