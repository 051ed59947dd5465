package redisson_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/redisson"
)

// Bad input never panics and never reaches Redis: it is an error wrapping
// ErrInvalid, from every call alike, and nothing is written.
func TestInvalidInput(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	type badCase struct {
		name   string
		locker *redisson.Locker
		key    string
		ttl    time.Duration
	}
	var cases []badCase
	for _, b := range locktest.BadKeysAndTTLs() {
		cases = append(cases, badCase{b.Name, redisson.New(tg.Client), b.Key, b.TTL})
	}
	for name, l := range map[string]*redisson.Locker{
		"nil client":  redisson.New(nil),
		"nil option":  redisson.New(tg.Client, nil),
		"nil backoff": redisson.New(tg.Client, redisson.WithBackoff(nil)),
		"bad backoff": redisson.New(tg.Client, redisson.WithBackoff(lockbridge.ExponentialBackoff(0,
			time.Second))),
		"latch below a second": redisson.New(tg.Client, redisson.WithUnlockLatch(999*time.Millisecond)),
		"fair wait below 1ms":  redisson.New(tg.Client, redisson.WithFair(999*time.Microsecond)),
		"nil locker":           nil,
		"zero locker":          {},
	} {
		cases = append(cases, badCase{name, l, "k", time.Second})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := map[string]func() error{
				"Locker.TryLock": func() error { _, err := c.locker.TryLock(ctx, c.key, c.ttl); return err },
				"Locker.Lock":    func() error { _, err := c.locker.Lock(ctx, c.key, c.ttl); return err },
				"Owner.TryLock":  func() error { _, err := c.locker.NewOwner().TryLock(ctx, c.key, c.ttl); return err },
				"Owner.Lock":     func() error { _, err := c.locker.NewOwner().Lock(ctx, c.key, c.ttl); return err },
			}
			if c.ttl > time.Millisecond { // the calls without a ttl
				calls["ForceUnlock"] = func() error { _, err := c.locker.ForceUnlock(ctx, c.key); return err }
				calls["IsLocked"] = func() error { _, err := c.locker.IsLocked(ctx, c.key); return err }
				calls["Holders"] = func() error { _, err := c.locker.Holders(ctx, c.key); return err }
				calls["HoldCount"] = func() error { _, err := c.locker.NewOwner().HoldCount(ctx, c.key); return err }
			}
			for name, call := range calls {
				err := call()
				require.ErrorIs(t, err, lockbridge.ErrInvalid, name)
				assert.True(t, strings.HasPrefix(err.Error(), "redisson: "), "%s: message %q", name, err)
			}
		})
	}
	assert.Empty(t, locktest.Do(t, tg.Client, "KEYS", "*"), "nothing written")
}

// A nil context, a nil Owner and a nil or zero Lock are bad input too.
func TestInvalidReceivers(t *testing.T) {
	tg := locktest.Single(t)[0]
	l := redisson.New(tg.Client)
	var nilCtx context.Context
	_, err := l.TryLock(nilCtx, "k", time.Second)
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
	var o *redisson.Owner
	_, err = o.TryLock(context.Background(), "k", time.Second)
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
	_, err = o.HoldCount(context.Background(), "k")
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
	assert.Empty(t, o.Field())

	var nilLock *redisson.Lock
	require.ErrorIs(t, nilLock.Unlock(context.Background()), lockbridge.ErrNotHeld)
	require.ErrorIs(t, nilLock.Refresh(context.Background(), time.Second), lockbridge.ErrInvalid)
	require.ErrorIs(t, nilLock.Err(), lockbridge.ErrNotHeld)
	assert.True(t, done(nilLock))
	zero := &redisson.Lock{}
	require.ErrorIs(t, zero.Unlock(context.Background()), lockbridge.ErrInvalid)

	lk, err := l.TryLock(context.Background(), locktest.Key(t, "k"), time.Second)
	require.NoError(t, err)
	require.ErrorIs(t, lk.Refresh(context.Background(), 0), lockbridge.ErrInvalid)
	require.ErrorIs(t, lk.Unlock(nilCtx), lockbridge.ErrInvalid)
	require.NoError(t, lk.Unlock(context.Background()), "still held after the bad calls")
}

// In a cluster, a key whose channel or latches would hash elsewhere is
// refused before anything is sent; a tagged key that keeps them in its slot
// is fine.
func TestClusterKeysInOneSlot(t *testing.T) {
	tg := locktest.All(t)[2]
	require.True(t, tg.Cluster)
	ctx := locktest.Ctx(t)
	l := redisson.New(tg.Client)
	for _, key := range []string{"{}x", "a}{b", "{"} {
		_, err := l.TryLock(ctx, key, time.Second)
		require.ErrorIs(t, err, lockbridge.ErrInvalid, key)
	}
	lk, err := l.TryLock(ctx, "order{42}:lines", time.Second)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))
}
