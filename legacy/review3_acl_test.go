package legacy_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
)

// An ACL user that may SETNX but not run scripts: an atomic legacy locker
// must refuse at acquire (as it did while every acquire was the script),
// not take a lock that it then cannot release (every Unlock NOPERM: the
// key stays, blocking every Java service until W).
func TestFaultReview3AtomicAcquireWithoutScriptPermission(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := locktest.GoRedis(t, srv)
	_, err := admin.Do(ctx, "ACL", "SETUSER", "default", "-evalsha", "-eval")
	require.NoError(t, err)
	defer func() { _, _ = admin.Do(ctx, "ACL", "SETUSER", "default", "+@all") }()

	lk := legacy.New(admin) // ModeAtomic, the default
	key := "noperm-release"
	l, err := lk.TryLock(ctx, key, time.Minute)
	if err != nil {
		assert.ErrorIs(t, err, driver.ErrNoPerm)
		_, held := locktest.Get(t, admin, key)
		assert.False(t, held, "refused, yet the key was written")
		return
	}
	uerr := l.Unlock(ctx)
	assert.NoError(t, uerr, "acquired, then cannot release")
	v, held := locktest.Get(t, admin, key)
	assert.False(t, held, "the lock stays in Redis after Unlock: %q", v)
	_ = time.Second
}
