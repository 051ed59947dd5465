package redisson

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

var (
	_ lockbridge.Locker = (*Locker)(nil)
	_ lockbridge.Lock   = (*Lock)(nil)
)

// Locker takes Redisson locks through one driver.Client. It plays the part
// of one RedissonClient: it has one client id, and every Owner it makes
// writes fields "<client id>:<owner id>". Build it with New. It is safe for
// concurrent use, runs no goroutine of its own and needs no Close (the
// subscription its waiters share lives while someone waits).
type Locker struct {
	c        driver.Client
	cfg      config
	err      error // invalid options, returned by every call
	clientID string
	hub      *notify.Hub
	owners   atomic.Int64 // the last owner id handed out
	tel      *telemetry.T
}

// New returns a Locker on c. Invalid options (or a nil c) are not reported
// here but by every call, with an error wrapping lockbridge.ErrInvalid.
func New(c driver.Client, opts ...Option) *Locker {
	l := &Locker{cfg: newConfig(opts), c: c}
	l.tel = l.cfg.errs.Reporter()
	if c == nil {
		l.cfg.errs.Invalid("nil driver.Client")
	} else {
		l.hub = notify.New(c, notify.Logger(l.tel.Log()))
	}
	id, err := newUUID()
	if err != nil {
		l.cfg.errs.Keep(err)
	}
	l.clientID = id
	l.err = l.cfg.errs.Err()
	return l
}

// NewOwner returns a new owner: what a Java thread is to Redisson. Its
// holds are reentrant — it may take a lock it holds again, and must unlock
// as many times — and its field in the hash is "<client id>:<id>", id a
// decimal number unique within the Locker (1, 2, …).
func (l *Locker) NewOwner() *Owner {
	if l == nil {
		return &Owner{}
	}
	id := l.owners.Add(1)
	return &Owner{l: l, id: id, field: l.clientID + ":" + strconv.FormatInt(id, 10),
		holds: map[string]map[*Lock]struct{}{}, gens: map[string]uint64{}, trying: map[string]chan struct{}{},
		doubts: map[string]struct{}{}, ceilings: map[string]time.Duration{}, releasing: map[string]int{}}
}

// TryLock makes one attempt to take the lock key for ttl (at least 1 ms;
// sub-millisecond parts are dropped) for a new owner of its own: the lock
// returned is not reentrant with any other (use an Owner for that). When
// another owner holds it the error is a *lockbridge.NotObtainedError. The Lock
// returned is a *Lock.
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return l.NewOwner().TryLock(ctx, key, ttl)
}

// Lock takes the lock key for ttl for a new owner of its own, waiting while
// another owner holds it (see Owner.Lock). The Lock returned is a *Lock.
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return l.NewOwner().Lock(ctx, key, ttl)
}

// ForceUnlock deletes the lock key whoever holds it, and publishes the
// unlock message so that waiters (Go and Java) wake, as Redisson's
// forceUnlock does. It reports whether there was a lock to delete. The
// holders are not told: their watchdogs find their fields gone at the next
// renewal and report the lock lost.
func (l *Locker) ForceUnlock(ctx context.Context, key string) (bool, error) {
	n, err := l.prepare(ctx, key)
	if err != nil {
		return false, err
	}
	return one("force unlock", key)(l.forceUnlock(ctx, &n))
}

// IsLocked reports whether anyone holds the lock key (Redisson's isLocked:
// EXISTS key).
func (l *Locker) IsLocked(ctx context.Context, key string) (bool, error) {
	if _, err := l.prepare(ctx, key); err != nil {
		return false, err
	}
	return one("EXISTS", key)(l.c.Do(ctx, "EXISTS", key))
}

// Holders returns the lock key's hash: each holder's field
// ("<client id>:<thread or owner id>", Java's and Go's alike) and its hold
// count. Empty when the lock is free. A key that is not a hash is an error
// (WRONGTYPE).
func (l *Locker) Holders(ctx context.Context, key string) (map[string]int64, error) {
	if _, err := l.prepare(ctx, key); err != nil {
		return nil, err
	}
	r, err := l.c.Do(ctx, "HGETALL", key)
	if err != nil {
		return nil, fmt.Errorf("redisson: holders of %q: %w", key, err)
	}
	out := map[string]int64{}
	switch v := r.(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			f, _ := v[i].(string)
			n, err := strconv.ParseInt(fmt.Sprint(v[i+1]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("redisson: holders of %q: field %q: %w", key, f, err)
			}
			out[f] = n
		}
	case map[any]any:
		for f, c := range v {
			n, err := strconv.ParseInt(fmt.Sprint(c), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("redisson: holders of %q: field %v: %w", key, f, err)
			}
			out[fmt.Sprint(f)] = n
		}
	default:
		return nil, unexpected("HGETALL", r)
	}
	return out, nil
}

// one returns a function reading the reply of op on key: whether it is
// the integer 1 (0 otherwise), or the error, wrapped.
func one(op, key string) func(r any, err error) (bool, error) {
	return func(r any, err error) (bool, error) {
		if err != nil {
			return false, fmt.Errorf("redisson: %s %q: %w", op, key, err)
		}
		v, ok := r.(int64)
		if !ok {
			return false, unexpected(op, r)
		}
		return v == 1, nil
	}
}

// prepare validates a call's context and key and derives the lock's names.
func (l *Locker) prepare(ctx context.Context, key string) (names, error) {
	if err := check.Context("redisson", ctx); err != nil {
		return names{}, err
	}
	if l == nil || (l.err == nil && l.hub == nil) {
		return names{}, lockopt.Zero("redisson")
	}
	if l.err != nil {
		return names{}, l.err
	}
	if err := check.Key("redisson", key); err != nil {
		return names{}, err
	}
	n := newNames(key)
	if l.c.Cluster() && !n.oneSlot() {
		return names{}, fmt.Errorf("redisson: %w: key %q: its channel %q, unlock latches or fair queue hash to another "+
			"cluster slot", lockbridge.ErrInvalid, key, n.channel)
	}
	return n, nil
}

// publishCommand is the command unlocks publish with (WithPlainPublish).
func (l *Locker) publishCommand() string {
	if l.cfg.plainPublish {
		return "PUBLISH"
	}
	return notify.PublishCommand(l.c)
}
