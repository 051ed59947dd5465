package legacy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
	"github.com/lockbridge/lockbridge/internal/runtime/retry"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

// Locker takes legacy locks: the same locks, byte for byte, as the Java
// services of its profile (its key and value codecs, unit and +1). It is safe for concurrent use.
type Locker struct {
	c       driver.Client
	profile legacyproto.Profile
	mode    legacyproto.Mode
	safety  time.Duration
	backoff lockbridge.Backoff
	polite  *retry.Courtesy // WithPollers; nil off
	err     error           // invalid options or client: returned by every call
	tel     *telemetry.T

	// What the scripts' arguments need, formatted and boxed once:
	owner  legacyproto.OwnerFixed   // the fixed owner-window arguments
	safeMS any                      // the safety TTL in ms ("0" off)
	lease  atomic.Pointer[leaseArg] // the lease argument last formatted

	// scripted is set once the acquire script ran on the server: the
	// connection's user may run scripts, so a lock taken with a plain
	// SETNX can be released (by a script) too. Until then acquires run
	// the script, which a user without script rights is refused before
	// anything is written.
	scripted atomic.Bool
}

// leaseArg is a lease and its owner-window argument (LeaseArg), boxed.
type leaseArg struct {
	ttl time.Duration
	arg any
}

var _ lockbridge.Locker = (*Locker)(nil)

// New returns a Locker that talks to Redis through c. New never fails: an
// invalid option (or a nil c) is recorded, and every TryLock and Lock then
// returns an error wrapping lockbridge.ErrInvalid.
func New(c driver.Client, opts ...Option) *Locker {
	cfg := legacyproto.NewConfig(opts)
	if c == nil {
		cfg.Errs.Invalid("nil driver.Client")
	}
	lk := &Locker{
		c:       c,
		profile: cfg.Profile,
		mode:    cfg.Mode,
		safety:  cfg.Safety,
		backoff: cfg.Backoff,
		err:     cfg.Errs.Err(),
		tel:     cfg.Errs.Reporter(),
		owner:   cfg.Profile.OwnerFixed(),
		safeMS:  strconv.FormatInt(cfg.Safety.Milliseconds(), 10),
	}
	if cfg.Poll > 0 {
		lk.polite = &retry.Courtesy{Poll: cfg.Poll}
	}
	return lk
}

// TryLock makes one attempt to take the lock named key for ttl. When
// another holder has it the error wraps lockbridge.ErrNotObtained; when the
// stored value does not decode, it also wraps a *ForeignValueError. An
// empty key, a key the key codec cannot encode or longer than 64 KiB, a ttl
// below one unit, a ttl above half the safety TTL or an invalid option give
// an error wrapping lockbridge.ErrInvalid; a key holding another type, the
// WRONGTYPE error of Redis (see driver.HasPrefix). The lock returned is a
// *Lock.
//
// When ctx ends while the attempt is on the wire, the attempt may still
// have taken the lock on the server. It is not undone — a legacy value
// names no owner, and a contender that locked in the same millisecond wrote
// the same bytes — so such a lock stays until its expiry passes, as the
// lock of a Java service that crashed right after SETNX would.
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(x *Locker) *telemetry.T { return x.tel }), telemetry.OpTryLock,
		l.tryLock, key, ttl)
}

func (l *Locker) tryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	ekey, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	held, _, err := l.attempt(ctx, key, ekey, ttl)
	if err != nil {
		return nil, err
	}
	return held, nil
}

// Lock waits until it takes the lock named key for ttl, or ctx ends; then
// the error wraps both lockbridge.ErrNotObtained and ctx.Err(). Between
// attempts it waits as the backoff says (WithBackoff; as a poller does with
// WithPollers), but never past the
// expiry it has just read from the holder's value: a holder that crashed
// is taken over as soon as its lease ends. A foreign value is waited on
// like a live one. Errors other than ErrNotObtained end the wait at once.
// The lock returned is a *Lock.
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(x *Locker) *telemetry.T { return x.tel }), telemetry.OpLock,
		l.lock, key, ttl)
}

func (l *Locker) lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	ekey, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	held, err := retry.Loop(ctx, l.tel, l.polite.Backoff(l.backoff), nil, func(ctx context.Context) (*Lock,
		time.Duration, error) {
		return l.attempt(ctx, key, ekey, ttl)
	})
	if err != nil {
		return nil, err
	}
	return held, nil
}

// prepare validates the call and returns the encoded key.
func (l *Locker) prepare(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if err := check.Context(pkg, ctx); err != nil {
		return "", err
	}
	if l == nil || (l.err == nil && l.c == nil) {
		return "", lockopt.Zero(pkg)
	}
	if l.err != nil {
		return "", l.err
	}
	if err := check.Key(pkg, key); err != nil {
		return "", err
	}
	if err := l.checkTTL(ttl); err != nil {
		return "", err
	}
	return l.profile.EncodeKey(key)
}

// checkTTL checks a lease: at least one unit, at most half the safety TTL.
func (l *Locker) checkTTL(ttl time.Duration) error {
	if err := l.profile.CheckTTL(ttl); err != nil {
		return err
	}
	if l.safety > 0 && l.safety < 2*ttl {
		return fmt.Errorf("%s: %w: safety ttl %v is below twice the ttl %v", pkg, lockbridge.ErrInvalid, l.safety, ttl)
	}
	return nil
}

// attempt is the per-node primitive: one try on the client, by the mode.
// When the lock is held it returns how long the holder has left (0 when
// unknown), for the waiting loop.
func (l *Locker) attempt(ctx context.Context, key, ekey string, ttl time.Duration) (*Lock, time.Duration, error) {
	if l.mode == legacyproto.ModeClassic {
		return l.acquireClassic(ctx, key, ekey, ttl)
	}
	return l.acquireAtomic(ctx, key, ekey, ttl)
}

// safetyArg is the safety TTL as the scripts take it: milliseconds, "0" off.
func (l *Locker) safetyArg() any { return l.safeMS }

// leaseArg returns the owner-window argument of the lease ttl, boxed. The
// one last used is kept: a program's locks mostly share one lease, which
// then costs no formatting.
func (l *Locker) leaseArg(ttl time.Duration) any {
	if la := l.lease.Load(); la != nil && la.ttl == ttl {
		return la.arg
	}
	la := &leaseArg{ttl: ttl, arg: l.profile.LeaseArg(ttl)}
	l.lease.Store(la)
	return la.arg
}

// newLock is the lock that wrote w, computed at now by the profile's clock,
// with an attempt sent at start (the monotonic clock then).
func (l *Locker) newLock(key, ekey string, w int64, value string, ttl time.Duration, start, now time.Time) *Lock {
	held := &Lock{locker: l, key: key, ekey: ekey, w: w, value: value, lease: ttl}
	held.keys[0] = ekey
	held.life.Init(pkg, start, l.localTTL(w, now))
	return held
}

// localTTL is the lease of a lock that wrote w at now (the profile's
// clock), as its holder counts it: until its own clock reaches W, after
// which its Unlock and Refresh refuse.
func (l *Locker) localTTL(w int64, now time.Time) time.Duration {
	return l.profile.TimeOf(w).Sub(now)
}

// held is the error of an attempt that found the live expiry t; it also
// returns how long the holder has left.
func (l *Locker) held(key string, t int64, now time.Time) (time.Duration, error) {
	left := l.profile.Remaining(t, now)
	detail := fmt.Sprintf("held until %s (%d)", l.profile.TimeOf(t).UTC().Format(time.RFC3339Nano), t)
	return left, &lockbridge.NotObtainedError{Pkg: pkg, Key: key, HolderTTL: left, Detail: detail}
}

// foreign is the error of an attempt that found a value that does not decode.
func foreign(key string, fe *ForeignValueError) error {
	return fmt.Errorf("%s: lock %q is held by a foreign value: %w: %w", pkg, key, lockbridge.ErrNotObtained, fe)
}

// redisErr wraps an error from Redis; a key holding another type is named.
func redisErr(op, key string, err error) error {
	if driver.HasPrefix(err, "WRONGTYPE") {
		return fmt.Errorf("%s: %s %q: the key holds a value of another type: %w", pkg, op, key, err)
	}
	return fmt.Errorf("%s: %s %q: %w", pkg, op, key, err)
}

// unexpected is the error of a reply no script of this package returns.
func unexpected(op, key string, r any) error {
	return fmt.Errorf("%s: %s %q: unexpected reply %#v", pkg, op, key, r)
}

// errInconsistent means Lua and Go disagreed on decoding a value: a bug.
var errInconsistent = errors.New("legacy: the acquire script and the Go decoder disagree")
