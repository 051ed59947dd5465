package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/redlock"
)

// One server passed as three masters makes a "quorum" of one server: it
// used to be accepted. The same client value is refused at once; different
// client objects on one server are refused by the servers' run_ids, read
// at the first call; a server shared by two of four nodes too.
func TestFaultSameServerAsSeveralMasters(t *testing.T) {
	ctx := context.Background()
	srvs := redistest.StartN(t, 3)
	one := locktest.GoRedis(t, srvs[0])
	other := locktest.Redigo(t, srvs[0]) // another client, the same server
	b, c := locktest.GoRedis(t, srvs[1]), locktest.Redigo(t, srvs[2])
	for _, tc := range []struct {
		name    string
		clients []driver.Client
	}{
		{"one client thrice", []driver.Client{one, one, one}},
		{"one client twice", []driver.Client{one, b, one}},
		{"one server, two client objects", []driver.Client{one, b, other}},
		{"one server, three client objects", []driver.Client{one, locktest.GoRedis(t, srvs[0]), other}},
		{"four nodes, two on one server", []driver.Client{one, b, c, other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := redlock.New(tc.clients)
			key := locktest.Key(t, "k")
			_, err := l.TryLock(ctx, key, time.Second)
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			_, err = l.Lock(ctx, key, time.Second)
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			v, ok, gerr := one.Get(ctx, key)
			require.NoError(t, gerr)
			assert.False(t, ok, "nothing written: %q", v)
		})
	}
	// Three independent servers are fine, through either adapter.
	lk, err := redlock.New([]driver.Client{one, b, c}).TryLock(ctx, locktest.Key(t, "ok"), time.Second)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock(ctx))
}

// No nil or zero input panics: each is an error wrapping ErrInvalid (Unlock
// of a nil Lock: ErrNotHeld, as before).
func TestFaultNilInputs(t *testing.T) {
	f := startFleet(t, 3)
	l := redlock.New(f.clients)
	ctx := context.Background()
	lk, err := l.TryLock(ctx, locktest.Key(t, "held"), time.Minute)
	require.NoError(t, err)
	var nilCtx context.Context
	var nilLocker *redlock.Locker
	var nilLock *redlock.Lock
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"TryLock nil ctx", func() error { _, err := l.TryLock(nilCtx, "k", time.Second); return err }},
		{"Lock nil ctx", func() error { _, err := l.Lock(nilCtx, "k", time.Second); return err }},
		{"Refresh nil ctx", func() error { return lk.Refresh(nilCtx, time.Second) }},
		{"Unlock nil ctx", func() error { return lk.Unlock(nilCtx) }},
		{"nil Locker TryLock", func() error { _, err := nilLocker.TryLock(ctx, "k", time.Second); return err }},
		{"nil Locker Lock", func() error { _, err := nilLocker.Lock(ctx, "k", time.Second); return err }},
		{"zero Locker TryLock", func() error { _, err := new(redlock.Locker).TryLock(ctx, "k", time.Second); return err }},
		{"zero Locker Lock", func() error { _, err := new(redlock.Locker).Lock(ctx, "k", time.Second); return err }},
		{"nil clients", func() error { _, err := redlock.New(nil).TryLock(ctx, "k", time.Second); return err }},
		{"nil Lock Refresh", func() error { return nilLock.Refresh(ctx, time.Second) }},
		{"zero Lock Unlock", func() error { return new(redlock.Lock).Unlock(ctx) }},
		{"zero Lock Refresh", func() error { return new(redlock.Lock).Refresh(ctx, time.Second) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = c.call() })
			assert.ErrorIs(t, err, lockbridge.ErrInvalid)
		})
	}
	assert.ErrorIs(t, nilLock.Unlock(ctx), lockbridge.ErrNotHeld)
	assert.NoError(t, lk.Unlock(ctx), "the lock is still held after the bad calls")
}
