package migrate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/internal/runtime/retry"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
)

// The acquire of a migrate lock, top to bottom, step by step:
//
//  1. TryLock and Lock: the entry points (Lock loops over attempts, woken by
//     release notices); prepare checks the arguments and names the keys.
//  2. attempt: the phase to run, from the follower when the Locker follows
//     a namespace (the acquire is reserved in the registry first), and the
//     lock given back when the acquire outlived the phase lease.
//  3. acquire: one try in that phase — the legacy Locker, the modern Locker
//     on the modern key, or acquireDual for dual-write and dual-read.
//  4. acquireDual: the arguments (dualTry), one round trip of acquire.lua,
//     then its reply (dualReply, legacyHeld), or, when no reply came,
//     settling the outcome (dualUnknown: readBack, undo).
//  5. The helpers the steps share: the legacy sightings, the modern key's
//     PX in dual-write, and one attempt of the legacy or modern Locker.

// TryLock makes one attempt in the current phase. When the lock is held the
// error wraps lockbridge.ErrNotObtained; when the Locker cannot trust its
// phase it wraps ErrPhaseUnknown instead (see Phase).
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(l *Locker) *telemetry.T { return l.tel }), telemetry.OpTryLock,
		l.tryLock, key, ttl)
}

func (l *Locker) tryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	a, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	lk, _, err := l.attempt(ctx, a)
	if err != nil {
		return nil, err
	}
	return lk, nil
}

// Lock waits until it obtains the lock or ctx ends; then the error wraps
// both lockbridge.ErrNotObtained and ctx.Err(). Each attempt runs in the
// phase current at that moment. Between attempts it waits as the backoff
// says, never past the holder's remaining lease when the attempt learnt it,
// and wakes at once when a Go holder of the modern key releases it — except
// for 10 s after an attempt met a legacy-only holder: then it waits as the
// Java pollers do, unwoken (WithPollers).
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(l *Locker) *telemetry.T { return l.tel }), telemetry.OpLock, l.lock,
		key, ttl)
}

func (l *Locker) lock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	a, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	backoff := l.polite.Backoff(l.cfg.backoff)
	var wake chan struct{}
	if l.mset.Notify && a.channel != "" {
		wake = make(chan struct{}, 1)
		release := func() {}
		defer func() { release() }()
		subscribed := false
		lk, err := retry.Loop(ctx, l.tel, backoff, wake, func(ctx context.Context) (lockbridge.Lock, time.Duration, error) {
			lk, left, err := l.attempt(ctx, a)
			if err != nil && !subscribed && errors.Is(err, lockbridge.ErrNotObtained) {
				// Subscribe after the first failed attempt, then try once
				// more at once: a release in between is not missed.
				subscribed = true
				release, _ = l.hub.Wait(ctx, a.channel, wake)
				return l.attempt(ctx, a)
			}
			return lk, left, err
		})
		return lk, err
	}
	return retry.Loop(ctx, l.tel, backoff, nil, func(ctx context.Context) (lockbridge.Lock, time.Duration, error) {
		return l.attempt(ctx, a)
	})
}

// args are one call's validated arguments and names.
type args struct {
	key, legacyKey, modernKey, channel string
	ttl                                time.Duration
}

func (l *Locker) prepare(ctx context.Context, key string, ttl time.Duration) (args, error) {
	if err := l.usable(); err != nil {
		return args{}, err
	}
	if err := check.Context(pkg, ctx); err != nil {
		return args{}, err
	}
	if err := check.KeyTTL(pkg, key, ttl, time.Millisecond); err != nil {
		return args{}, err
	}
	if err := l.profile.CheckTTL(ttl); err != nil {
		return args{}, err
	}
	// PX takes whole milliseconds: the lease counted here must not be
	// longer than the one the server keeps (as modern's and redlock's).
	a := args{key: key, ttl: ttl.Truncate(time.Millisecond)}
	var err error
	if a.legacyKey, a.modernKey, err = l.Keys(key); err != nil {
		return args{}, err
	}
	a.channel, _ = notify.Channel(a.modernKey)
	return a, nil
}

// attempt is one try in the current phase. When the lock is held it also
// returns how long the holder has left, when known.
func (l *Locker) attempt(ctx context.Context, a args) (lockbridge.Lock, time.Duration, error) {
	p := l.cfg.phase
	if p == 0 {
		p = PhaseLegacy
	}
	if l.follow == nil {
		lk, left, err := l.acquire(ctx, p, a)
		if err != nil {
			return nil, left, err
		}
		return typed(lk, p), 0, nil
	}
	// A lock is taken only while the phase lease runs and the registry
	// counts this client for at least the lock's ttl. The acquire is
	// registered in its phase before the follower can move, so every
	// heartbeat from now reports it — in flight, held, or of unknown
	// outcome until its ttl has passed.
	var res *inflight
	p, until, err := l.follow.phase(ctx, a.ttl, func(p Phase, _ time.Time) { res = l.held.reserve(p, a.ttl) })
	if err != nil {
		return nil, 0, err
	}
	lk, left, err := l.acquire(ctx, p, a)
	if err != nil {
		l.held.settle(res, err)
		return nil, left, err
	}
	if !time.Now().Before(until) {
		// The acquire came back after the phase lease ran out: it may have
		// run after the registry stopped counting this client, and the
		// fleet stepped past its phase. Give the lock back; the
		// reservation stays reported until its ttl unless that worked.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		uerr := lk.Unlock(uctx)
		cancel()
		if uerr != nil {
			uerr = fmt.Errorf("%w: %w", lockbridge.ErrUnknownOutcome, uerr)
		}
		l.held.settle(res, uerr)
		return nil, 0, fmt.Errorf("%s: acquire %q: %w", pkg, a.key, l.follow.outlived(p, "acquire"))
	}
	t := lk.(tracked)
	l.held.land(res, t)
	if cur := l.follow.currentPhase(); !Compatible(p, cur) {
		// The Locker moved on while the lock was taken.
		t.endForPhase(&PhaseEndedError{Key: a.key, Taken: p, LockerAt: cur})
	}
	return typed(lk, p), 0, nil
}

// acquire is one try in phase p; with a namespace the lock it returns is
// tracked (its phase reported, ended when the Locker moves away).
func (l *Locker) acquire(ctx context.Context, p Phase, a args) (lockbridge.Lock, time.Duration, error) {
	start := time.Now()
	switch p {
	case PhaseLegacy:
		lg, left, err := attemptOn[*legacy.Lock](ctx, l.legacy, a.key, a.ttl, legacyLeft)
		if err != nil || l.follow == nil {
			return lg, left, err
		}
		return newHeldLock(l, p, lg, a.ttl, start, false), 0, nil
	case PhaseModern:
		m := l.modern
		if l.follow != nil {
			m = l.manual
		}
		md, left, err := attemptOn[*modern.Lock](ctx, m, a.modernKey, a.ttl, modernLeft)
		if err != nil {
			return nil, left, err
		}
		var lk lockbridge.Lock = &modernLock{Lock: md, key: a.key}
		if l.follow == nil {
			return lk, 0, nil
		}
		return newHeldLock(l, p, lk, a.ttl, start, l.mset.AutoRefresh), 0, nil
	default:
		return l.acquireDual(ctx, p, a)
	}
}

// modernLock is a modern lock taken in PhaseModern: Key is the legacy name
// the caller gave, not the modern key.
type modernLock struct {
	*modern.Lock
	key string
}

func (m *modernLock) Key() string { return m.key }

// dualTry is one attempt in dual-write or dual-read: what acquire.lua is
// sent, and what the lock it takes keeps.
type dualTry struct {
	p    Phase
	a    args
	call migrateproto.AcquireArgs
	// start is read before now, the legacy profile's clock: the lease must
	// not end after the legacy value; w is our legacy expiry, in the unit.
	start, now time.Time
	w          int64
}

// acquireDual is one attempt in dual-write or dual-read: acquire.lua takes
// both keys (dual-write) or the modern key while the legacy key is free
// (dual-read), in one round trip.
func (l *Locker) acquireDual(ctx context.Context, p Phase, a args) (lockbridge.Lock, time.Duration, error) {
	t, err := l.dualTry(p, a)
	if err != nil {
		return nil, 0, err
	}
	r, err := l.c.Eval(ctx, migrateproto.AcquireScript, t.call.Keys(), t.call.Argv()...)
	if err != nil {
		lk, err := l.dualUnknown(ctx, t, err)
		return lk, 0, err
	}
	return l.dualReply(ctx, t, r)
}

// dualTry builds an attempt's arguments: a fresh token, our legacy expiry
// W and its bytes, the fence counter, the modern key's PX.
func (l *Locker) dualTry(p Phase, a args) (dualTry, error) {
	if l.mset.WaitN > 0 {
		// The dual-phase acquire is a script of its own, which does not
		// WAIT: refuse rather than report a lock no replica acknowledged.
		return dualTry{}, fmt.Errorf(
			"%s: %w: modern.WithWait is honoured only in the modern phase; the %v acquire does not wait for replicas", pkg,
			lockbridge.ErrInvalid, p)
	}
	token, err := l.mset.Token()
	if err != nil {
		return dualTry{}, fmt.Errorf("%s: token: %w", pkg, err)
	}
	t := dualTry{p: p, a: a, start: time.Now()}
	t.now = l.profile.Now()
	t.w = l.profile.Expiry(t.now, a.ttl)
	t.call = migrateproto.AcquireArgs{LegacyKey: a.legacyKey, ModernKey: a.modernKey,
		FenceKey:  a.modernKey, // unused without fencing: any key of the slot
		DualWrite: p == PhaseDualWrite, Value: l.profile.EncodeValue(t.w), Codec: l.profile.CodecID(),
		Cutoff: l.profile.Cutoff(t.now), Token: token, PX: a.ttl, Fencing: l.mset.Fencing}
	if l.mset.Fencing {
		var ok bool
		if t.call.FenceKey, ok = fenceName(a.modernKey); !ok {
			return dualTry{}, fmt.Errorf("%s: %w: no fence counter in the slot of %q", pkg, lockbridge.ErrInvalid, a.modernKey)
		}
	}
	if p == PhaseDualWrite {
		t.call.PX = l.modernPX(t.now, a.ttl, t.w)
	}
	return t, nil
}

// lock is the lock t took, with its fence.
func (t dualTry) lock(l *Locker, fence int64) *dualLock {
	return newDualLock(l, t.p, t.a, t.call.Token, fence, t.w, t.call.Value, t.start, t.now)
}

// undo releases what t may have written, by its token (best effort); it
// reports whether that settled it: the release found our token, and
// deleted it.
func (t dualTry) undo(l *Locker) bool { return l.undo(t.a, t.p, t.call.Token, t.w, t.call.Value) }

// dualUnknown settles an attempt whose reply never came (err): cancelled,
// it undoes what may have been written; of unknown outcome, it reads the
// token back, which settles both keys (the script writes them in one step,
// and the token is ours alone; a read changes nothing).
func (l *Locker) dualUnknown(ctx context.Context, t dualTry, err error) (lockbridge.Lock, error) {
	a := t.a
	if ctx.Err() != nil {
		// Released by our token (the script ran, and runs once), or never
		// sent: not obtained. An undo that found no token of ours settles
		// nothing: the script may still be on its way and run after it.
		if t.undo(l) || !errors.Is(err, lockbridge.ErrUnknownOutcome) {
			return nil, fmt.Errorf("%s: acquire %q: %w: %w", pkg, a.key, lockbridge.ErrNotObtained, ctx.Err())
		}
		return nil, fmt.Errorf("%s: acquire %q: the context ended with the acquire on its way, and the release that "+
			"undoes it found no token %q of ours: the acquire may still run: %w", pkg, a.key, t.call.Token, err)
	}
	if !errors.Is(err, lockbridge.ErrUnknownOutcome) {
		return nil, fmt.Errorf("%s: acquire %q: %w", pkg, a.key, err)
	}
	held, fence, rerr := l.readBack(ctx, a.modernKey, t.call.FenceKey, t.call.Token)
	switch {
	case rerr != nil:
		t.undo(l) // best effort: by our token only
		return nil, fmt.Errorf("%s: acquire %q: %w (reading the token back: %v)", pkg, a.key, err, rerr)
	case !held:
		// Not settled: the script may still be on its way and run after
		// the read (see modern's try).
		t.undo(l) // best effort: by our token only
		return nil, fmt.Errorf(
			"%s: acquire %q: the modern key does not hold our token %q yet, and the acquire may still run: %w", pkg, a.key,
			t.call.Token, err)
	}
	return t.lock(l, fence), nil
}

// dualReply reads acquire.lua's reply r: the lock, or who holds it and
// for how long.
func (l *Locker) dualReply(ctx context.Context, t dualTry, r any) (lockbridge.Lock, time.Duration, error) {
	a := t.a
	reply, ok := r.([]any)
	if !ok || len(reply) < 2 {
		return nil, 0, fmt.Errorf("%s: acquire %q: unexpected reply %#v", pkg, a.key, r)
	}
	code, _ := reply[0].(int64)
	switch {
	case code == migrateproto.AcquireOurs:
		fence, _ := reply[1].(int64)
		return t.lock(l, fence), 0, nil
	case code == migrateproto.AcquireModernHeld:
		pttl, _ := reply[1].(int64)
		left := time.Duration(pttl) * time.Millisecond
		return nil, left, fmt.Errorf("%s: lock %q is held on its modern key (%v left): %w", pkg, a.key, left,
			lockbridge.ErrNotObtained)
	case code == migrateproto.AcquireLegacyHeld && len(reply) >= 4:
		left, err := l.legacyHeld(ctx, t, reply)
		return nil, left, err
	}
	return nil, 0, fmt.Errorf("%s: acquire %q: unexpected reply %#v", pkg, a.key, r)
}

// legacyHeld is the refusal of an attempt that found the legacy key held
// (reply {AcquireLegacyHeld, state, t, modern}). A live legacy value
// without a modern key is a legacy-only locker: it is recorded (a legacy
// sighting).
func (l *Locker) legacyHeld(ctx context.Context, t dualTry, reply []any) (time.Duration, error) {
	a := t.a
	state, _ := reply[1].(int64)
	expiry, _ := reply[2].(int64)
	modernExists, _ := reply[3].(int64)
	if state == migrateproto.LegacyForeign {
		stored, _, _ := l.c.Get(ctx, a.legacyKey)
		_, derr := l.profile.DecodeValue(stored)
		return 0, fmt.Errorf("%s: lock %q is held by a foreign legacy value: %w: %w", pkg, a.key, lockbridge.ErrNotObtained,
			derr)
	}
	left := l.profile.Remaining(expiry, t.now)
	if modernExists == 0 && left >= l.profile.Unit()+sightingSlack {
		l.metLegacy.Store(max(int64(time.Since(l.born)), 1))
		l.sighted(ctx, a.legacyKey)
	}
	return left, fmt.Errorf("%s: lock %q is held on its legacy key until %d: %w", pkg, a.key, expiry,
		lockbridge.ErrNotObtained)
}

// sightingSlack: a legacy value with less than one unit plus this left is
// not reported as a legacy sighting, for the clock skew between a dual-write
// holder (which writes the value) and the server (which expires its modern
// key). sightingEvery: a Locker records at most one sighting this often.
// legacySightingRecent: how long after meeting a legacy-only holder Lock
// defers to pollers (WithPollers).
const (
	sightingSlack        = 50 * time.Millisecond
	sightingEvery        = time.Second
	legacySightingRecent = 10 * time.Second
)

// readBack reports whether the modern key holds token and, with fencing,
// the fence counter's value, read together (MGET; one slot). While the key
// holds our token no one else acquired, so the counter holds our fence.
func (l *Locker) readBack(ctx context.Context, modernKey, fenceKey, token string) (held bool, fence int64, err error) {
	r, err := l.c.Do(ctx, "MGET", modernKey, fenceKey)
	if err != nil {
		return false, 0, err
	}
	vs, ok := r.([]any)
	if !ok || len(vs) != 2 {
		return false, 0, fmt.Errorf("%s: MGET: unexpected reply %#v", pkg, r)
	}
	if v, _ := vs[0].(string); v != token {
		return false, 0, nil
	}
	if l.mset.Fencing {
		v, _ := vs[1].(string)
		if fence, err = strconv.ParseInt(v, 10, 64); err != nil {
			return false, 0, fmt.Errorf("%s: fence counter %q: %w", pkg, v, err)
		}
	}
	return true, fence, nil
}

// undo releases, best effort, what an acquire whose context ended may have
// written after all.
//
// It reports whether the outcome is settled: the release found our token
// on the modern key and deleted it (the acquire ran, and runs once). Not
// there settles nothing: the acquire may still be on its way.
func (l *Locker) undo(a args, p Phase, token string, w int64, value string) (settled bool) {
	ctx, cancel := lease.UndoContext(context.Background())
	defer cancel()
	d := &dualLock{l: l, phase: p, a: a, token: token, w: w, value: value, lease: a.ttl}
	m, err := d.releaseCodes(ctx)
	return m == migrateproto.ModernOurs && !errors.Is(err, lockbridge.ErrUnknownOutcome)
}

// modernPX is the PX of a dual-write lock's modern key: its ttl, or longer
// when the legacy value outlives it (the +1, a seconds unit), so that the
// modern key never expires while the legacy value stands — otherwise a
// crashed dual-write holder would look like a legacy-only one.
// now is the legacy profile's clock, the one w was computed with.
func (l *Locker) modernPX(now time.Time, ttl time.Duration, w int64) time.Duration {
	if d := l.legacyEnd(w).Sub(now); d > ttl {
		return (d + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	return ttl
}

// legacyEnd is when legacy lockers may take over a legacy value w: once
// their clock passes it, at the start of the next unit.
func (l *Locker) legacyEnd(w int64) time.Time { return l.profile.TimeOf(w + 1) }

// legacyRecent reports whether an attempt met a legacy-only holder in the
// last legacySightingRecent.
func (l *Locker) legacyRecent() bool {
	at := l.metLegacy.Load()
	return at != 0 && time.Duration(int64(time.Since(l.born))-at) < legacySightingRecent
}

// sighted records a legacy sighting, at most once per sightingEvery, best
// effort: the evidence matters, not every instance of it, and a failure to
// record it must not fail the caller's lock. A write that failed gives its
// turn back, so the next meeting records the evidence it dropped.
func (l *Locker) sighted(ctx context.Context, legacyKey string) {
	if l.store == nil {
		return
	}
	now := time.Now()
	last := l.lastSighting.Load()
	if now.UnixNano()-last < int64(sightingEvery) || !l.lastSighting.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	// Stamped with the server's clock.
	if err := l.store.recordSighting(ctx, legacyKey); err != nil {
		l.lastSighting.CompareAndSwap(now.UnixNano(), last)
		l.tel.Log().WarnContext(ctx, "lockbridge: recording a legacy sighting failed", "lockbridge.migrate.namespace",
			l.store.k.NS, "lockbridge.lock.key", legacyKey, "error", err)
		return
	}
	l.tel.Sighted(ctx, l.store.k.NS)
}

// attemptOn is one TryLock of the legacy or modern Locker l, returning its
// concrete lock and, when another holder has the lock, how long the holder
// has left by left(err) (0 when unknown), for the waiting loop.
func attemptOn[L lockbridge.Lock](ctx context.Context, l lockbridge.Locker, key string, ttl time.Duration,
	left func(error) time.Duration) (L, time.Duration, error) {
	lk, err := l.TryLock(ctx, key, ttl)
	if err != nil {
		var zero L
		return zero, left(err), err
	}
	return lk.(L), 0, nil
}

// legacyLeft is how long a legacy holder has left, from a TryLock error.
func legacyLeft(err error) time.Duration {
	var no *lockbridge.NotObtainedError
	if errors.As(err, &no) {
		return no.HolderTTL
	}
	return 0
}

// modernLeft is how long a modern holder has left, from a TryLock error: a
// key without expiry leaves it to the backoff (0), one expiring this very
// millisecond is waited for 1 ms.
func modernLeft(err error) time.Duration {
	var no *lockbridge.NotObtainedError
	switch {
	case !errors.As(err, &no) || no.HolderTTL < 0:
		return 0
	case no.HolderTTL == 0:
		return time.Millisecond
	}
	return no.HolderTTL
}
