package lockbridge_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redlock"
)

// errorLockers are one locker of each kind on c. redlock gets c three times
// over: it refuses one server as several masters, so it runs on its own
// servers in the test.
func errorLockers(c driver.Client) map[string]lockbridge.Locker {
	return map[string]lockbridge.Locker{
		"legacy-atomic":      legacy.New(c),
		"legacy-classic":     legacy.New(c, legacy.WithClassic()),
		"modern":             modern.New(c, modern.WithFencing()),
		"modern-unfenced":    modern.New(c),
		"migrate-legacy":     migrate.New(c, migrate.WithPhase(migrate.PhaseLegacy)),
		"migrate-dual-write": migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite)),
		"migrate-dual-read":  migrate.New(c, migrate.WithPhase(migrate.PhaseDualRead)),
		"migrate-modern":     migrate.New(c, migrate.WithPhase(migrate.PhaseModern)),
	}
}

// checkClassified asserts that err is a Redis error of class, matchable
// with errors.Is, named with the lock's key, and never disguised as "not
// obtained".
func checkClassified(t *testing.T, name string, err error, class *driver.Class, key string) {
	t.Helper()
	require.Error(t, err, name)
	assert.ErrorIs(t, err, class, "%s: %v", name, err)
	assert.NotErrorIs(t, err, lockbridge.ErrNotObtained, "%s: a Redis error is not 'held by another': %v", name, err)
	assert.Contains(t, err.Error(), key, "%s: the error names the lock", name)
}

// Redis errors reach the caller classified: NOPERM (sent directly, and a
// command denied inside a script, named with the script and what it runs),
// OOM and READONLY, for every locker, matchable with errors.Is on the
// driver's classes and wrapped with the lock's name.
func TestFaultRedisErrorsClassified(t *testing.T) {
	ctx := context.Background()

	t.Run("NOPERM", func(t *testing.T) {
		srv := redistest.Start(t)
		admin := locktest.GoRedis(t, srv)
		// The default user may not run the scripts, the Java commands nor
		// the SET NX PX an unfenced modern lock sends.
		_, err := admin.Do(ctx, "ACL", "SETUSER", "default", "-evalsha", "-eval", "-setnx", "-set")
		require.NoError(t, err)
		defer func() { _, _ = admin.Do(ctx, "ACL", "SETUSER", "default", "+@all") }()
		for name, l := range errorLockers(admin) {
			key := "noperm:" + name
			_, err := l.TryLock(ctx, key, time.Second)
			checkClassified(t, name, err, driver.ErrNoPerm, key)
		}
	})

	t.Run("NOPERM inside a script", func(t *testing.T) {
		srv := redistest.Start(t)
		admin := locktest.GoRedis(t, srv)
		// Every acquire script writes with SET or SETNX: deny those, keep
		// EVALSHA, so the refusal comes from inside the script.
		_, err := admin.Do(ctx, "ACL", "SETUSER", "default", "-set", "-setnx")
		require.NoError(t, err)
		defer func() { _, _ = admin.Do(ctx, "ACL", "SETUSER", "default", "+@all") }()
		for name, l := range errorLockers(admin) {
			if name == "legacy-classic" {
				continue // sends SETNX directly: the case above
			}
			key := "noperm-script:" + name
			_, err := l.TryLock(ctx, key, time.Second)
			checkClassified(t, name, err, driver.ErrNoPerm, key)
			assert.Regexp(t, `script \S+\.lua \(it runs EVALSHA, EVAL and [A-Z, ]*SET`, err.Error(),
				"%s: names the script and the commands it needs", name)
		}
	})

	t.Run("OOM", func(t *testing.T) {
		srv := redistest.Start(t)
		admin := locktest.GoRedis(t, srv)
		_, err := admin.Do(ctx, "CONFIG", "SET", "maxmemory", "1")
		require.NoError(t, err)
		defer func() { _, _ = admin.Do(ctx, "CONFIG", "SET", "maxmemory", "0") }()
		for name, l := range errorLockers(admin) {
			key := "oom:" + name
			_, err := l.TryLock(ctx, key, time.Second)
			checkClassified(t, name, err, driver.ErrOOM, key)
			// Lock must not wait on an error that is not contention.
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = l.Lock(lctx, key, time.Second)
			cancel()
			checkClassified(t, name, err, driver.ErrOOM, key)
			assert.False(t, errors.Is(err, context.DeadlineExceeded), "%s: Lock returned the Redis error at once", name)
		}
	})

	t.Run("READONLY", func(t *testing.T) {
		rs := redistest.StartReplicated(t)
		replica := locktest.GoRedis(t, rs.Replica)
		for name, l := range errorLockers(replica) {
			key := "readonly:" + name
			_, err := l.TryLock(ctx, key, time.Second)
			checkClassified(t, name, err, driver.ErrReadOnly, key)
		}
	})

	t.Run("redlock", func(t *testing.T) {
		srvs := redistest.StartN(t, 3)
		var cs []driver.Client
		for _, s := range srvs {
			c := locktest.GoRedis(t, s)
			_, err := c.Do(ctx, "CONFIG", "SET", "maxmemory", "1")
			require.NoError(t, err)
			cs = append(cs, c)
		}
		_, err := redlock.New(cs).TryLock(ctx, "oom:redlock", time.Second)
		require.Error(t, err)
		assert.ErrorIs(t, err, driver.ErrOOM)
		assert.True(t, strings.Contains(err.Error(), "oom:redlock"), err.Error())
	})
}
