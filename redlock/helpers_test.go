package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/redlock"
)

// fleet is n independent redis-servers and a client on each: go-redis on
// the even indexes, redigo on the odd ones, so every test runs both
// adapters.
type fleet struct {
	servers []*redistest.Server
	clients []driver.Client
	names   []string // the servers' addresses
}

func startFleet(t testing.TB, n int) *fleet {
	t.Helper()
	f := &fleet{servers: redistest.StartN(t, n)}
	for i, s := range f.servers {
		if i%2 == 0 {
			f.clients = append(f.clients, locktest.GoRedis(t, s))
		} else {
			f.clients = append(f.clients, locktest.Redigo(t, s))
		}
		f.names = append(f.names, s.Addr())
	}
	return f
}

// pause hangs server i (SIGSTOP) and resumes it when the test ends, before
// its client is closed, so the drivers' calls still waiting on it return.
func (f *fleet) pause(t testing.TB, i int) {
	t.Helper()
	f.servers[i].Pause()
	t.Cleanup(f.servers[i].Resume)
}

// value returns key's value on node i and whether it exists.
func (f *fleet) value(t testing.TB, i int, key string) (string, bool) {
	t.Helper()
	v, ok, err := f.clients[i].Get(context.Background(), key)
	require.NoError(t, err, "GET on node %d", i)
	return v, ok
}

// holders returns, for each node in idx (all when idx is empty), whether key
// holds token there.
func (f *fleet) holds(t testing.TB, key, token string, idx ...int) []bool {
	t.Helper()
	if len(idx) == 0 {
		for i := range f.clients {
			idx = append(idx, i)
		}
	}
	var out []bool
	for _, i := range idx {
		v, ok := f.value(t, i, key)
		out = append(out, ok && v == token)
	}
	return out
}

// set writes key=value PX ttl on the nodes idx, as another holder would.
func (f *fleet) set(t testing.TB, key, value string, ttl time.Duration, idx ...int) {
	t.Helper()
	for _, i := range idx {
		_, err := f.clients[i].Do(context.Background(), "SET", key, value, "PX", ttl.Milliseconds())
		require.NoError(t, err)
	}
}

// del deletes key on the nodes idx.
func (f *fleet) del(t testing.TB, key string, idx ...int) {
	t.Helper()
	for _, i := range idx {
		_, err := f.clients[i].Del(context.Background(), key)
		require.NoError(t, err)
	}
}

// pttl returns PTTL key on node i in ms.
func (f *fleet) pttl(t testing.TB, i int, key string) int64 {
	t.Helper()
	r, err := f.clients[i].Do(context.Background(), "PTTL", key)
	require.NoError(t, err)
	return r.(int64)
}

func all(n int, v bool) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// quorumErr asserts that err is a *redlock.QuorumError and returns it.
func quorumErr(t testing.TB, err error) *redlock.QuorumError {
	t.Helper()
	var qe *redlock.QuorumError
	require.True(t, errors.As(err, &qe), "want a *redlock.QuorumError, got %T: %v", err, err)
	return qe
}

// asRedlock asserts that a lockbridge.Lock is a *redlock.Lock.
func asRedlock(t testing.TB, l lockbridge.Lock) *redlock.Lock {
	t.Helper()
	rl, ok := l.(*redlock.Lock)
	require.True(t, ok, "lock is a %T, not a *redlock.Lock", l)
	return rl
}

// isDone reports whether a lock's Done channel is closed now.
func isDone(l lockbridge.Lock) bool {
	select {
	case <-l.Done():
		return true
	default:
		return false
	}
}

// pausingClient is a driver.Client whose acquire replies arrive after a
// pause of the calling process (a GC pause, a descheduled thread): the
// pause ignores the context, as a real one would.
type pausingClient struct {
	driver.Client
	pause time.Duration
}

func (c pausingClient) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	r, err := c.Client.Eval(ctx, s, keys, args...)
	if s.Name() == "modern/acquire.lua" {
		time.Sleep(c.pause)
	}
	return r, err
}

// SetNXPX is the acquire without fencing.
func (c pausingClient) SetNXPX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	ok, err := c.Client.SetNXPX(ctx, key, value, ttl)
	time.Sleep(c.pause)
	return ok, err
}
