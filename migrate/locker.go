package migrate

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
	"github.com/lockbridge/lockbridge/internal/runtime/retry"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
)

var _ lockbridge.Locker = (*Locker)(nil)

const pkg = "migrate"

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
	l.tel = l.cfg.errs.Reporter()
	// The inner lockers log (their background work) but do not measure:
	// the acquires are this Locker's, measured once.
	logOnly := lockbridge.Telemetry{Logger: l.cfg.errs.Settings().Logger}
	l.cfg.legacyOpts = append([]legacy.Option{legacy.WithTelemetry(logOnly)}, l.cfg.legacyOpts...)
	l.cfg.modernOpts = append([]modern.Option{modern.WithTelemetry(logOnly)}, l.cfg.modernOpts...)
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
	if ns := l.cfg.namespace(); ns != "" {
		l.followNamespace(ns)
	}
	return l
}

// followNamespace sets l up to follow namespace ns: its store (sightings),
// its follower (phase, heartbeats, held locks reported and ended on a
// step) and the modern Locker without auto-refresh its held locks run.
func (l *Locker) followNamespace(ns string) {
	k, _ := migrateproto.NewKeys(ns) // checked by the option
	l.store = &store{c: l.c, k: k}
	l.follow = newFollower(l.c, k, l.cfg.interval, l.cfg.phaseLease())
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
	opts := l.cfg.modernOpts
	l.manual = modern.New(l.c, append(opts[:len(opts):len(opts)], modernproto.Manual)...)
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
// cannot step past them. A heartbeat still on its way (its reply not
// come yet, for up to a phase lease) is waited for first, or until ctx
// ends: then Close returns ctx's error and the entry stays until its hold
// runs out. After a heartbeat that got no reply, which may still land, the
// entry is not removed but left dead (a newer seq that heartbeat cannot
// overwrite, expired at once) until the controller prunes it. It is safe
// to call more than once; a Locker that never followed or heartbeat needs
// no Close.
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

// usable reports a nil or zero Locker, or its invalid options.
func (l *Locker) usable() error {
	if l == nil || (l.err == nil && l.legacy == nil) {
		return lockopt.Zero(pkg)
	}
	return l.err
}
