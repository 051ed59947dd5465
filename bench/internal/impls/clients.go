package impls

import (
	"context"
	"errors"
	"runtime"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockbridge/lockbridge/driver/redigoadapter"
	"github.com/lockbridge/lockbridge/modern"
)

// The clients an implementation runs on, for the report's grouping: every
// ratio to "the floor" is to the floor of the same client.
const (
	GoRedis = "go-redis"
	Redigo  = "redigo"
	Rueidis = "rueidis"
)

// Implementations not on go-redis open a client of their own to the
// target's addresses.

// newRedigoPool is a redigo pool as a redigo user builds one: Dial, an idle
// pool as large as go-redis's default (10 × GOMAXPROCS).
func newRedigoPool(addr string) *redigo.Pool {
	return &redigo.Pool{
		MaxIdle: 10 * runtime.GOMAXPROCS(0),
		DialContext: func(ctx context.Context) (redigo.Conn, error) {
			return redigo.DialContext(ctx, "tcp", addr)
		},
	}
}

// single is the one server of t, or errNoCluster.
func single(t Target) (string, error) {
	if t.Cluster || len(t.Addrs) != 1 {
		return "", errNoCluster
	}
	return t.Addrs[0], nil
}

// FloorRedigo is raw redigo sending the floor's two commands (a random token
// per acquire, as Floor): a connection from the pool per command, Conn.Do
// (no context: redigo's DoContext starts a goroutine per command, which a
// plain redigo user does not pay). One server only.
var FloorRedigo = Impl{
	ID:     "floor-redigo",
	Name:   "redigo floor (SET NX PX + EVALSHA)",
	Client: Redigo,
	New: func(t Target, _ Wait) (Locker, error) {
		addr, err := single(t)
		if err != nil {
			return nil, err
		}
		p := newRedigoPool(addr)
		conn := p.Get()
		sha, err := redigo.String(conn.Do("SCRIPT", "LOAD", releaseSrc))
		_ = conn.Close()
		if err != nil {
			_ = p.Close()
			return nil, err
		}
		return closing{Locker: &redigoFloor{p: p, sha: sha}, close: func() { _ = p.Close() }}, nil
	},
}

type redigoFloor struct {
	p   *redigo.Pool
	sha string
}

type redigoFloorHeld struct {
	f     *redigoFloor
	key   string
	token string
}

func (f *redigoFloor) TryLock(_ context.Context, key string, ttl time.Duration) (Held, error) {
	token := newToken()
	conn := f.p.Get()
	defer conn.Close()
	r, err := conn.Do("SET", key, token, "NX", "PX", ttl.Milliseconds())
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, ErrBusy
	}
	return &redigoFloorHeld{f: f, key: key, token: token}, nil
}

func (f *redigoFloor) Lock(context.Context, string, time.Duration) (Held, error) {
	return nil, ErrNoWait
}

func (h *redigoFloorHeld) Unlock(context.Context) error {
	conn := h.f.p.Get()
	defer conn.Close()
	n, err := redigo.Int64(conn.Do("EVALSHA", h.f.sha, 1, h.key, h.token))
	if err != nil {
		return err
	}
	if n != 1 {
		return errors.New("redigo floor: lock not held")
	}
	return nil
}

// ModernRedigo is modern.Locker through the redigo adapter, on a redigo
// pool of its own. One server only.
var ModernRedigo = Impl{
	ID:     "modern-redigo",
	Name:   "lockbridge modern (redigo adapter)",
	Client: Redigo,
	New: func(t Target, w Wait) (Locker, error) {
		addr, err := single(t)
		if err != nil {
			return nil, err
		}
		p := newRedigoPool(addr)
		return closing{Locker: lbLocker{modern.New(redigoadapter.New(p), modernOptions(w)...)},
			close: func() { _ = p.Close() }}, nil
	},
}

// newRueidis is a rueidis client with its defaults (commands of concurrent
// callers pipelined on one connection per node) to t: a cluster client when
// t is a cluster (rueidis finds out by itself).
func newRueidis(t Target) (rueidis.Client, error) {
	return rueidis.NewClient(rueidis.ClientOption{InitAddress: t.Addrs})
}

// FloorRueidis is raw rueidis sending the floor's two commands (a random
// token per acquire, as Floor), built with its command builder; the release
// is a rueidis.Lua script (EVALSHA).
var FloorRueidis = Impl{
	ID:     "floor-rueidis",
	Name:   "rueidis floor (SET NX PX + EVALSHA)",
	Client: Rueidis,
	New: func(t Target, _ Wait) (Locker, error) {
		rc, err := newRueidis(t)
		if err != nil {
			return nil, err
		}
		return closing{Locker: &rueidisFloor{c: rc, release: rueidis.NewLuaScript(releaseSrc)}, close: rc.Close}, nil
	},
}

type rueidisFloor struct {
	c       rueidis.Client
	release *rueidis.Lua
}

type rueidisFloorHeld struct {
	f     *rueidisFloor
	key   string
	token string
}

func (f *rueidisFloor) TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	token := newToken()
	err := f.c.Do(ctx, f.c.B().Set().Key(key).Value(token).Nx().PxMilliseconds(ttl.Milliseconds()).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	return &rueidisFloorHeld{f: f, key: key, token: token}, nil
}

func (f *rueidisFloor) Lock(context.Context, string, time.Duration) (Held, error) {
	return nil, ErrNoWait
}

func (h *rueidisFloorHeld) Unlock(ctx context.Context) error {
	n, err := h.f.release.Exec(ctx, h.f.c, []string{h.key}, []string{h.token}).AsInt64()
	if err != nil {
		return err
	}
	if n != 1 {
		return errors.New("rueidis floor: lock not held")
	}
	return nil
}

// RueidisLock is github.com/redis/rueidis/rueidislock with KeyMajority 1
// (one key per lock, as every other implementation here; its default is 2
// of 3 keys). Acquire is one EVALSHA, release one EVALSHA; a waiter is woken
// by client-side-caching invalidation of the key. The lease is its
// KeyValidity (default 5 s, extended by a goroutine per lock), not the TTL
// passed.
var RueidisLock = Impl{
	ID:     "rueidislock",
	Name:   "rueidislock (KeyMajority 1)",
	Client: Rueidis,
	Waits: map[Wait]string{
		Recommended: "defaults but KeyMajority 1: woken by client-side-caching invalidation",
	},
	New: func(t Target, _ Wait) (Locker, error) {
		l, err := rueidislock.NewLocker(rueidislock.LockerOption{
			ClientOption: rueidis.ClientOption{InitAddress: t.Addrs},
			KeyMajority:  1,
		})
		if err != nil {
			return nil, err
		}
		return closing{Locker: rlock{l}, close: l.Close}, nil
	},
}

type rlock struct{ l rueidislock.Locker }

type rlockHeld struct{ cancel context.CancelFunc }

// Unlock releases: the cancel func of rueidislock deletes the key and waits
// for it.
func (h rlockHeld) Unlock(context.Context) error { h.cancel(); return nil }

func (r rlock) TryLock(ctx context.Context, key string, _ time.Duration) (Held, error) {
	_, cancel, err := r.l.TryWithContext(ctx, key)
	if errors.Is(err, rueidislock.ErrNotLocked) {
		return nil, ErrBusy
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		// rueidislock gives an attempt TryNextAfter (20 ms by default) and
		// then reports the deadline of its own: not obtained, as a busy
		// key (it happens under load, with 64 goroutines on two cores).
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	return rlockHeld{cancel}, nil
}

func (r rlock) Lock(ctx context.Context, key string, _ time.Duration) (Held, error) {
	_, cancel, err := r.l.WithContext(ctx, key)
	if err != nil {
		return nil, err
	}
	return rlockHeld{cancel}, nil
}
