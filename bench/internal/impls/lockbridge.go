package impls

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/redis/go-redis/v9"
)

// lockbridgeImpls are lockbridge's lockers, through the go-redis adapter,
// and the seed replay.
var lockbridgeImpls = []Impl{AdapterFloor, Modern, LegacyAtomic, LegacyClassic, Seed}

// AdapterFloor is the floor's two commands sent through lockbridge's go-redis
// adapter (driver.Client.SetNXPX and Eval): the adapter's cost without any
// lock logic.
var AdapterFloor = Impl{
	ID:   "floor-adapter",
	Name: "floor through lockbridge's driver.Client",
	New: func(t Target, _ Wait) (Locker, error) {
		return &adapterFloor{c: goredis.New(t.GoRedis), release: driver.NewScript("bench/release.lua", releaseSrc)}, nil
	},
}

type adapterFloor struct {
	c       driver.Client
	release *driver.Script
}

type adapterFloorHeld struct {
	f     *adapterFloor
	key   string
	token string
}

func (f *adapterFloor) TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	token := newToken()
	ok, err := f.c.SetNXPX(ctx, key, token, ttl)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	return &adapterFloorHeld{f: f, key: key, token: token}, nil
}

func (f *adapterFloor) Lock(context.Context, string, time.Duration) (Held, error) {
	return nil, ErrNoWait
}

func (h *adapterFloorHeld) Unlock(ctx context.Context) error {
	r, err := h.f.c.Eval(ctx, h.f.release, []string{h.key}, h.token)
	if err != nil {
		return err
	}
	if r != int64(1) {
		return errors.New("floor-adapter: lock not held")
	}
	return nil
}

var tightBackoff = lockbridge.LinearBackoff(TightPoll, TightPoll)

// Modern is modern.Locker: SET NX PX to acquire, one EVALSHA to release
// (which also publishes the release for waiters).
var Modern = Impl{
	ID:   "modern",
	Name: "lockbridge modern",
	Waits: map[Wait]string{
		Recommended: fmt.Sprintf("defaults: release notifications on, ExponentialBackoff(%v, %v)",
			modernproto.DefaultBackoffMin, modernproto.DefaultBackoffMax),
		Tight: "WithNotifications(false), LinearBackoff(1ms, 1ms)",
	},
	New: func(t Target, w Wait) (Locker, error) {
		return lbLocker{modern.New(goredis.New(t.GoRedis), modernOptions(w)...)}, nil
	},
}

// modernOptions are modern's settings for w.
func modernOptions(w Wait) []modern.Option {
	if w == Tight {
		return []modern.Option{modern.WithNotifications(false), modern.WithBackoff(tightBackoff)}
	}
	return nil
}

// LegacyAtomic is legacy.Locker in its default, atomic mode: one script
// acquires or takes over.
var LegacyAtomic = Impl{
	ID:   "legacy-atomic",
	Name: "lockbridge legacy (atomic)",
	Waits: map[Wait]string{
		Recommended: "defaults: ExponentialBackoff(10ms, 100ms), never past the holder's expiry",
		Tight:       "LinearBackoff(1ms, 1ms)",
	},
	Takeover: true,
	New: func(t Target, w Wait) (Locker, error) {
		opts := []legacy.Option{legacyproto.WithMode(legacyproto.ModeAtomic)}
		if w == Tight {
			opts = append(opts, legacy.WithBackoff(tightBackoff))
		}
		return lbLocker{legacy.New(goredis.New(t.GoRedis), opts...)}, nil
	},
}

// LegacyClassic is legacy.Locker in classic mode: the literal SETNX, GET,
// GETSET, DEL sequence.
var LegacyClassic = Impl{
	ID:       "legacy-classic",
	Name:     "lockbridge legacy (classic)",
	Takeover: true,
	New: func(t Target, _ Wait) (Locker, error) {
		return lbLocker{legacy.New(goredis.New(t.GoRedis), legacy.WithClassic())}, nil
	},
}

// Seed is the replay of the Java seed's command sequence (internal/testing/javareplay),
// through the same adapter.
var Seed = Impl{
	ID:       "seed",
	Name:     "seed sequence (Java replay)",
	Takeover: true,
	New: func(t Target, _ Wait) (Locker, error) {
		return seedLocker{goredis.New(t.GoRedis)}, nil
	},
}

// Adapter returns a PING through lockbridge's go-redis adapter on c
// (driver.Client.Do): the adapter's cost on top of go-redis.
func Adapter(c redis.UniversalClient) func(context.Context) error {
	d := goredis.New(c)
	return func(ctx context.Context) error {
		_, err := d.Do(ctx, "PING")
		return err
	}
}

type lbLocker struct{ l lockbridge.Locker }

func (l lbLocker) TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	lk, err := l.l.TryLock(ctx, key, ttl)
	if errors.Is(err, lockbridge.ErrNotObtained) && ctx.Err() == nil {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	return lk, nil
}

func (l lbLocker) Lock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	lk, err := l.l.Lock(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	return lk, nil
}

type seedLocker struct{ c driver.Client }

type seedHeld struct {
	c      driver.Client
	key    string
	expiry int64
}

func (s seedLocker) TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	exp, ok, err := javareplay.Lock(ctx, s.c, key, ttl, nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	return &seedHeld{c: s.c, key: key, expiry: exp}, nil
}

func (s seedLocker) Lock(context.Context, string, time.Duration) (Held, error) {
	return nil, ErrNoWait
}

func (h *seedHeld) Unlock(ctx context.Context) error {
	return javareplay.Unlock(ctx, h.c, h.key, h.expiry, nil)
}
