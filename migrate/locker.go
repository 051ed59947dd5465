package migrate

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
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/internal/runtime/retry"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
)

var _ lockbridge.Locker = (*Locker)(nil)

const pkg = "migrate"

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

// Locker takes locks by the legacy name in the phase it runs: PhaseLegacy
// exactly as legacy.Locker, PhaseModern exactly as modern.Locker on the
// modern key, and PhaseDualWrite and PhaseDualRead with this package's
// scripts over both keys. Build it with New; call Close when done if it
// follows a phase from Redis or heartbeats (WithPhaseFrom, WithNamespace).
type Locker struct {
	c       driver.Client
	cfg     config
	err     error
	legacy  *legacy.Locker
	modern  *modern.Locker
	manual  *modern.Locker // modern without its auto-refresh: heldLock runs it
	profile legacyproto.Profile
	mset    modernproto.Config // the modern options, for the dual phases
	follow  *follower          // nil for a fixed phase without a namespace
	store   *store             // the namespace, for sightings; nil without one
	hub     *notify.Hub
	pub     string // "PUBLISH" or "SPUBLISH"
	held    heldSet

	lastSighting atomic.Int64 // Unix ns of the last sighting recorded

	// polite defers to the legacy-only pollers while one was met in the
	// last legacySightingRecent: metLegacy is when, in ns since born (the
	// monotonic clock); 0 never.
	polite    *retry.Courtesy
	born      time.Time
	metLegacy atomic.Int64
	tel       *telemetry.T
}

// New returns a Locker on c. Invalid options (or a nil c) are not reported
// here but by every TryLock and Lock, with an error wrapping
// lockbridge.ErrInvalid.
func New(c driver.Client, opts ...Option) *Locker {
	l := &Locker{c: c, cfg: defaults()}
	for _, o := range opts {
		if o == nil {
			l.cfg.errs.Invalid("nil option")
			continue
		}
		o(&l.cfg)
	}
	if c == nil {
		l.cfg.errs.Invalid("nil driver.Client")
	}
	l.tel = l.cfg.errs.Telemetry()
	// The inner lockers log (their background work) but do not measure:
	// the acquires are this Locker's, measured once.
	lg := l.cfg.errs.Settings().Logger
	l.cfg.legacyOpts = append([]legacy.Option{legacy.WithLogger(lg)}, l.cfg.legacyOpts...)
	l.cfg.modernOpts = append([]modern.Option{modern.WithLogger(lg)}, l.cfg.modernOpts...)
	var err error
	if l.profile, err = legacyproto.NewProfile(l.cfg.legacyOpts...); err != nil {
		l.cfg.errs.Keep(err)
	}
	if c != nil {
		l.modern = modern.New(c, l.cfg.modernOpts...)
		l.mset = modernproto.NewConfig(l.cfg.modernOpts)
		if err := l.mset.Errs.Err(); err != nil {
			l.cfg.errs.Keep(err)
		}
	}
	l.err = l.cfg.err()
	if l.err != nil {
		return l
	}
	l.legacy = legacy.New(c, l.cfg.legacyOpts...)
	l.hub = notify.New(c, notify.Logger(l.tel.Log()))
	l.pub = notify.PublishCommand(c)
	l.born = time.Now()
	if l.cfg.poll > 0 {
		l.polite = &retry.Courtesy{Poll: l.cfg.poll, Active: l.legacyRecent}
	}
	ns := l.cfg.from
	if ns == "" {
		ns = l.cfg.ns
	}
	if ns != "" {
		k, _ := newNSKeys(ns) // checked by the option
		l.store = &store{c: c, k: k}
		l.follow = newFollower(c, k, l.cfg.interval, l.cfg.phaseLease())
		l.follow.fixed = l.cfg.phase
		if l.cfg.from == "" && l.follow.fixed == 0 {
			l.follow.fixed = PhaseLegacy
		}
		l.follow.held = l.held.report
		l.follow.tel = l.tel
		l.follow.onStep = func(cur Phase) {
			l.held.endIncompatible(cur, func(t tracked) string {
				switch lk := t.(type) {
				case *heldLock:
					return lk.Key()
				case *dualLock:
					return lk.Key()
				}
				return ""
			})
		}
		l.manual = modern.New(c, append(l.cfg.modernOpts[:len(l.cfg.modernOpts):len(l.cfg.modernOpts)], modernproto.Manual)...)
	}
	return l
}

// Phase returns the phase the Locker runs now. With WithPhaseFrom (or
// WithNamespace) the first call reads it from Redis, heartbeats, and starts
// following it; later calls answer from memory while the phase lease runs,
// and read it again once it has lapsed. When the Locker cannot trust a
// phase the error is a *PhaseUnknownError (wrapping ErrPhaseUnknown).
func (l *Locker) Phase(ctx context.Context) (Phase, error) {
	if err := l.usable(); err != nil {
		return 0, err
	}
	if err := check.Context(pkg, ctx); err != nil {
		return 0, err
	}
	if l.follow != nil {
		p, _, err := l.follow.phase(ctx, 0, nil)
		return p, err
	}
	if l.cfg.phase != 0 {
		return l.cfg.phase, nil
	}
	return PhaseLegacy, nil
}

// Close stops following the phase and heartbeating, and removes the Locker
// from the fleet registry. Locks it holds stay valid to the end of their
// lease and can be unlocked, but no longer refreshed; while any of them
// (or an acquire of unknown outcome) may live, the registry entry stays,
// reporting them, until the longest lease has ended, so the controller
// cannot step past them. It is safe to call
// more than once; a Locker that never followed or heartbeat needs no Close.
func (l *Locker) Close(ctx context.Context) error {
	if l == nil {
		return fmt.Errorf("%s: %w: Close on a nil *Locker", pkg, lockbridge.ErrInvalid)
	}
	if err := check.Context(pkg, ctx); err != nil {
		return err
	}
	if l.hub != nil {
		_ = l.hub.Close()
	}
	if l.follow == nil {
		return nil
	}
	return l.follow.close(ctx)
}

// Keys returns the Redis keys of the lock name: the legacy key (as the
// legacy profile encodes the name) and the modern key derived from it.
func (l *Locker) Keys(name string) (legacyKey, modernKey string, err error) {
	if l.err != nil {
		return "", "", l.err
	}
	if legacyKey, err = l.profile.EncodeKey(name); err != nil {
		return "", "", err
	}
	if l.cfg.modernKey == nil {
		modernKey, err = DeriveModernKey(legacyKey)
		return legacyKey, modernKey, err
	}
	modernKey = l.cfg.modernKey(legacyKey)
	return legacyKey, modernKey, sameSlot(legacyKey, modernKey)
}

// TryLock makes one attempt in the current phase. When the lock is held the
// error wraps lockbridge.ErrNotObtained; when the Locker cannot trust its
// phase it wraps ErrPhaseUnknown instead (see Phase).
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error) {
	return telemetry.Acquire(ctx, lease.Field(l, func(l *Locker) *telemetry.T { return l.tel }), telemetry.OpTryLock, l.tryLock, key, ttl)
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
	return telemetry.Acquire(ctx, lease.Field(l, func(l *Locker) *telemetry.T { return l.tel }), telemetry.OpLock, l.lock, key, ttl)
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

// usable reports a nil or zero Locker, or its invalid options.
func (l *Locker) usable() error {
	if l == nil || (l.err == nil && l.legacy == nil) {
		return lockopt.Zero(pkg)
	}
	return l.err
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
	a := args{key: key, ttl: ttl}
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

func (l *Locker) acquireDual(ctx context.Context, p Phase, a args) (lockbridge.Lock, time.Duration, error) {
	if l.mset.WaitN > 0 {
		// The dual-phase acquire is a script of its own, which does not
		// WAIT: refuse rather than report a lock no replica acknowledged.
		return nil, 0, fmt.Errorf("%s: %w: modern.WithWait is honoured only in the modern phase; the %v acquire does not wait for replicas", pkg, lockbridge.ErrInvalid, p)
	}
	token, err := l.mset.Token()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: token: %w", pkg, err)
	}
	start := time.Now() // before now: the lease must not end after the legacy value
	now := l.profile.Now()
	w := l.profile.Expiry(now, a.ttl)
	value := l.profile.EncodeValue(w)
	fenceKey := a.modernKey // KEYS[3] unused without fencing: any key of the slot
	if l.mset.Fencing {
		var ok bool
		if fenceKey, ok = fenceName(a.modernKey); !ok {
			return nil, 0, fmt.Errorf("%s: %w: no fence counter in the slot of %q", pkg, lockbridge.ErrInvalid, a.modernKey)
		}
	}
	px := a.ttl
	if p == PhaseDualWrite {
		px = l.modernPX(now, a.ttl, w)
	}
	r, err := l.c.Eval(ctx, acquireScript, []string{a.legacyKey, a.modernKey, fenceKey},
		flag(p == PhaseDualWrite), value, l.profile.CodecID(), strconv.FormatInt(l.profile.Cutoff(now), 10),
		token, strconv.FormatInt(px.Milliseconds(), 10), "0", flag(l.mset.Fencing))
	if err != nil {
		if ctx.Err() != nil {
			if l.undo(a, p, token, w, value) {
				// Released by our token, or never written: not obtained.
				return nil, 0, fmt.Errorf("%s: acquire %q: %w: %w", pkg, a.key, lockbridge.ErrNotObtained, ctx.Err())
			}
			return nil, 0, fmt.Errorf("%s: acquire %q: %w", pkg, a.key, err)
		}
		if !errors.Is(err, lockbridge.ErrUnknownOutcome) {
			return nil, 0, fmt.Errorf("%s: acquire %q: %w", pkg, a.key, err)
		}
		// The script may have run and its reply been lost. It writes the
		// modern key (and, in dual-write, the legacy key) in one step, and
		// the token is ours alone: reading it back settles the outcome for
		// both keys (a read changes nothing).
		held, fence, rerr := l.readBack(ctx, a.modernKey, fenceKey, token)
		switch {
		case rerr != nil:
			l.undo(a, p, token, w, value) // best effort: by our token only
			return nil, 0, fmt.Errorf("%s: acquire %q: %w (reading the token back: %v)", pkg, a.key, err, rerr)
		case !held:
			// Not settled: the script may still be on its way and run after
			// the read (see modern's try).
			l.undo(a, p, token, w, value) // best effort: by our token only
			return nil, 0, fmt.Errorf("%s: acquire %q: the modern key does not hold our token %q yet, and the acquire may still run: %w", pkg, a.key, token, err)
		}
		return newDualLock(l, p, a, token, fence, w, value, start, now), 0, nil
	}
	reply, ok := r.([]any)
	if !ok || len(reply) < 2 {
		return nil, 0, fmt.Errorf("%s: acquire %q: unexpected reply %#v", pkg, a.key, r)
	}
	code, _ := reply[0].(int64)
	switch code {
	case 1:
		fence, _ := reply[1].(int64)
		lk := newDualLock(l, p, a, token, fence, w, value, start, now)
		return lk, 0, nil
	case 0:
		pttl, _ := reply[1].(int64)
		return nil, time.Duration(pttl) * time.Millisecond,
			fmt.Errorf("%s: lock %q is held on its modern key (%v left): %w", pkg, a.key, time.Duration(pttl)*time.Millisecond, lockbridge.ErrNotObtained)
	case -1:
		if len(reply) < 4 {
			break
		}
		state, _ := reply[1].(int64)
		t, _ := reply[2].(int64)
		modernExists, _ := reply[3].(int64)
		if state == -1 {
			stored, _, _ := l.c.Get(ctx, a.legacyKey)
			_, derr := l.profile.DecodeValue(stored)
			return nil, 0, fmt.Errorf("%s: lock %q is held by a foreign legacy value: %w: %w", pkg, a.key, lockbridge.ErrNotObtained, derr)
		}
		left := l.profile.Remaining(t, now)
		if modernExists == 0 && left >= l.profile.Unit()+sightingSlack {
			// A live legacy lock with no modern key: a legacy-only locker.
			l.metLegacy.Store(max(int64(time.Since(l.born)), 1))
			l.sighted(ctx, a.legacyKey)
		}
		return nil, left, fmt.Errorf("%s: lock %q is held on its legacy key until %d: %w", pkg, a.key, t, lockbridge.ErrNotObtained)
	}
	return nil, 0, fmt.Errorf("%s: acquire %q: unexpected reply %#v", pkg, a.key, r)
}

// legacyRecent reports whether an attempt met a legacy-only holder in the
// last legacySightingRecent.
func (l *Locker) legacyRecent() bool {
	at := l.metLegacy.Load()
	return at != 0 && time.Duration(int64(time.Since(l.born))-at) < legacySightingRecent
}

// sighted records a legacy sighting, at most once per sightingEvery, best
// effort: the evidence matters, not every instance of it, and a failure to
// record it must not fail the caller's lock.
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
		l.tel.Log().WarnContext(ctx, "lockbridge: recording a legacy sighting failed", "lockbridge.migrate.namespace", l.store.k.ns, "lockbridge.lock.key", legacyKey, "error", err)
		return
	}
	l.tel.Sighted(ctx, l.store.k.ns)
}

// legacyEnd is when legacy lockers may take over a legacy value w: once
// their clock passes it, at the start of the next unit.
func (l *Locker) legacyEnd(w int64) time.Time { return l.profile.TimeOf(w + 1) }

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

// undo releases, best effort, what an acquire whose context ended may have
// written after all.
//
// It reports whether the outcome is settled: Redis answered the release
// (our token deleted, or not there), so nothing of ours is left held.
func (l *Locker) undo(a args, p Phase, token string, w int64, value string) (settled bool) {
	ctx, cancel := lease.UndoContext(context.Background())
	defer cancel()
	d := &dualLock{l: l, phase: p, a: a, token: token, w: w, value: value, lease: a.ttl}
	_, err := d.release(ctx)
	return err == nil || isNotHeld(err)
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

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

// attemptOn is one TryLock of the legacy or modern Locker l, returning its
// concrete lock and, when another holder has the lock, how long the holder
// has left by left(err) (0 when unknown), for the waiting loop.
func attemptOn[L lockbridge.Lock](ctx context.Context, l lockbridge.Locker, key string, ttl time.Duration, left func(error) time.Duration) (L, time.Duration, error) {
	lk, err := l.TryLock(ctx, key, ttl)
	if err != nil {
		var zero L
		return zero, left(err), err
	}
	return lk.(L), 0, nil
}

// legacyLeft is how long a legacy holder has left, from a TryLock error.
func legacyLeft(err error) time.Duration {
	var no *legacy.NotObtainedError
	if errors.As(err, &no) {
		return no.Left
	}
	return 0
}

// modernLeft is how long a modern holder has left, from a TryLock error: a
// key without expiry leaves it to the backoff (0), one expiring this very
// millisecond is waited for 1 ms.
func modernLeft(err error) time.Duration {
	var no *modern.NotObtainedError
	switch {
	case !errors.As(err, &no) || no.HolderTTL < 0:
		return 0
	case no.HolderTTL == 0:
		return time.Millisecond
	}
	return no.HolderTTL
}
