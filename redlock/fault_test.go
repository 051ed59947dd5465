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
	held, err := l.TryLock(context.Background(), locktest.Key(t, "held"), time.Minute)
	require.NoError(t, err)
	locktest.NilInputs(t, l, held, locktest.Nils{
		Locker: (*redlock.Locker)(nil), ZeroLocker: new(redlock.Locker), Lock: (*redlock.Lock)(nil),
		ZeroLock: new(redlock.Lock),
	},
		locktest.Call{Name: "nil clients", Do: func() error {
			_, err := redlock.New(nil).TryLock(context.Background(), "k", time.Second)
			return err
		}},
	)
}
