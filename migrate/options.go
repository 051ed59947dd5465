package migrate

import (
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
)

// Option configures a Locker. Options are applied by New in order; an
// invalid one is recorded and returned, wrapping lockbridge.ErrInvalid, by
// every TryLock and Lock of that Locker (New itself returns no error).
type Option func(*config)

// defaultPollers is the Java lockers' polling interval that Lock defers to
// while it meets legacy-only holders (WithPollers): 100 ms, the default of
// the Spring lockers, of Spring Integration's RedisLockRegistry and the
// fixed interval of jedis-lock.
const defaultPollers = 100 * time.Millisecond

// defaultBackoffMin and defaultBackoffMax bound the default backoff of Lock:
// lockbridge.ExponentialBackoff(10 ms, 100 ms) — the Java lockers poll every
// 100 ms, and their releases publish nothing.
const (
	defaultBackoffMin = 10 * time.Millisecond
	defaultBackoffMax = 100 * time.Millisecond
)

type config struct {
	phase      Phase  // static phase; 0 when from Redis
	from       string // WithPhaseFrom namespace
	ns         string // WithNamespace
	legacyOpts []legacy.Option
	modernOpts []modern.Option
	modernKey  func(string) string
	backoff    lockbridge.Backoff
	poll       time.Duration // WithPollers; 0 off
	interval   time.Duration
	lease      time.Duration // 0: DefaultPhaseLeaseIntervals × interval
	errs       lockopt.Errs
}

func defaults() config {
	return config{
		errs:     lockopt.For(pkg),
		backoff:  lockbridge.ExponentialBackoff(defaultBackoffMin, defaultBackoffMax),
		poll:     defaultPollers,
		interval: DefaultPhaseInterval,
	}
}

func (c *config) err() error {
	if c.phase != 0 && c.from != "" {
		c.errs.Invalid("WithPhase and WithPhaseFrom are exclusive")
	}
	if c.from != "" && c.ns != "" && c.ns != c.from {
		c.errs.Invalid("WithNamespace %q differs from WithPhaseFrom %q", c.ns, c.from)
	}
	if c.lease != 0 && c.lease <= c.interval {
		c.errs.Invalid("phase lease %v must be longer than the phase interval %v", c.lease, c.interval)
	}
	if c.lease == 0 && c.interval >= maxHold/(2*DefaultPhaseLeaseIntervals) {
		c.errs.Invalid("phase interval %v must be below %v (its phase lease, %d intervals, below %v)", c.interval,
			maxHold/(2*DefaultPhaseLeaseIntervals), DefaultPhaseLeaseIntervals, maxHold/2)
	}
	return c.errs.Err()
}

// WithPhase runs the Locker in the fixed phase p. Default: PhaseLegacy,
// unless WithPhaseFrom is given (the two are exclusive).
func WithPhase(p Phase) Option {
	return func(c *config) {
		if !p.Valid() {
			c.errs.Invalid("phase %v", p)
			return
		}
		c.phase = p
	}
}

// WithPhaseFrom reads the phase from Redis, from the namespace's phase key
// lockbridge:{ns}:phase, and follows it: re-read every WithPhaseInterval and
// at once on the controller's change notice, moving at most one phase per
// reading. The Locker also heartbeats into the namespace's fleet registry
// (in the same script as the reading) and records legacy sightings there.
// It starts doing so on its first call (Phase, TryLock or Lock): call Phase
// right after New so that the controller sees the new instance at once and
// an unreachable Redis shows at start-up. Call Close when done.
//
// It fails closed: a namespace that was never initialised (`lockbridge
// phase init`, Controller.Init), a phase key that is gone or unreadable, a
// namespace whose state went back, and a phase lease that lapsed (see
// WithPhaseLease) make every lock call fail with a *PhaseUnknownError
// (wrapping ErrPhaseUnknown) that names the way out, never fall back to
// legacy. Default: off (WithPhase).
func WithPhaseFrom(ns string) Option {
	return func(c *config) {
		if _, err := migrateproto.NewKeys(ns); err != nil {
			c.errs.Keep(err)
			return
		}
		c.from = ns
	}
}

// WithNamespace names the namespace a Locker with a fixed phase (WithPhase)
// heartbeats into and records legacy sightings in, so the controller sees
// it, from its first call on (see WithPhaseFrom). Implied by WithPhaseFrom.
// Default: none (no registry, no sightings).
func WithNamespace(ns string) Option {
	return func(c *config) {
		if _, err := migrateproto.NewKeys(ns); err != nil {
			c.errs.Keep(err)
			return
		}
		c.ns = ns
	}
}

// WithLegacy sets the options of the legacy side: the Java services' profile
// (key and value codec, unit, +1), the clock, the skew margin of takeovers
// (legacy.WithSkewMargin, in every phase that reads the legacy key) and the
// server-clock margin of releases and refreshes (legacy.WithServerClockMargin,
// in PhaseLegacy and for dual-write locks), and, for PhaseLegacy, the mode
// and safety TTL. Default: legacy's defaults (raw key, decimal milliseconds
// with +1, atomic mode, no skew margin, a server-clock margin of 2 s).
func WithLegacy(opts ...legacy.Option) Option {
	return func(c *config) { c.legacyOpts = append(c.legacyOpts, opts...) }
}

// WithModern sets the options of the modern side: auto-refresh, fencing,
// notifications, token function. They apply in PhaseDualWrite, PhaseDualRead
// and PhaseModern. Default: modern's defaults.
func WithModern(opts ...modern.Option) Option {
	return func(c *config) { c.modernOpts = append(c.modernOpts, opts...) }
}

// WithModernKey replaces the derivation of the modern key from the encoded
// legacy key (DeriveModernKey). The mapping must give another key in the
// same hash slot; a key it maps elsewhere is refused with ErrInvalid at the
// call. Default: DeriveModernKey.
func WithModernKey(f func(legacyKey string) string) Option {
	return func(c *config) {
		if f == nil {
			c.errs.Invalid("nil modern key mapping")
			return
		}
		c.modernKey = f
	}
}

// WithBackoff sets how long Lock waits between attempts, never past the
// holder's remaining lease when an attempt learnt it, and cut short by a
// release notification of a Go holder of the modern key. Default:
// lockbridge.ExponentialBackoff(10 ms, 100 ms).
func WithBackoff(b lockbridge.Backoff) Option {
	return func(c *config) { c.errs.Backoff(&c.backoff, b) }
}

// WithPollers sets the polling interval of the legacy-only lockers (the
// Java services) that Lock defers to, and 0 turns the deference off.
// Default 100 ms: the default of the Spring lockers, of Spring
// Integration's RedisLockRegistry and the fixed interval of jedis-lock.
//
// In the dual phases, a failed attempt that meets a live legacy value with
// no modern key has met a legacy-only holder (a legacy sighting). For 10 s
// after the last such meeting, Lock waits as the pollers do: between two
// attempts it pauses d/2 to d instead of the backoff's delay (a
// backoff that gives up still ends the wait), and no release notification
// cuts that pause short. The Locker then contends as one more Java service
// would. Without it, Go waiters woken at once by Go releases take most of
// the hand-offs from the Java pollers when services do work between two
// uses of the lock. It costs throughput only while legacy-only lockers
// contend (docs/java.md gives the figures); a fleet with no legacy-only
// locker left never meets one and waits as before. A negative d is
// invalid.
func WithPollers(d time.Duration) Option {
	return func(c *config) { c.errs.Pollers(&c.poll, d) }
}

// WithPhaseInterval sets how often a Locker re-reads its phase and
// heartbeats (WithPhaseFrom, WithNamespace). Default DefaultPhaseInterval
// (2 s).
func WithPhaseInterval(d time.Duration) Option {
	return func(c *config) {
		if d < time.Millisecond {
			c.errs.Invalid("phase interval %v is below 1ms", d)
			return
		}
		c.interval = d
	}
}

// WithPhaseLease sets the phase lease of a Locker with a namespace
// (WithPhaseFrom, WithNamespace): how long after a reading of the phase was
// sent, by the Locker's monotonic clock, it still locks and refreshes in
// that phase without another good reading. Past it, TryLock, Lock and the
// refresh of held locks fail with a *PhaseUnknownError (reason
// ReasonLeaseLapsed) until a reading succeeds again — no restart needed.
// The registry counts the client in its phase for the lease plus the
// longest lease it takes after each heartbeat, so the controller never
// steps past a client that may still lock or hold in its old phase. It must
// be longer than the phase interval and below 2^39 ms; a lock's ttl may
// then be at most 2^40 ms minus the lease (else ErrInvalid). Default
// DefaultPhaseLeaseIntervals (12) phase intervals: 24 s by default.
func WithPhaseLease(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 || d >= maxHold/2 {
			c.errs.Invalid("phase lease %v must be positive and below %v", d, maxHold/2)
			return
		}
		c.lease = d
	}
}

// namespace is the namespace the Locker follows: WithPhaseFrom's, else
// WithNamespace's; "" for none.
func (c *config) namespace() string {
	if c.from != "" {
		return c.from
	}
	return c.ns
}

func (c *config) phaseLease() time.Duration {
	if c.lease != 0 {
		return c.lease
	}
	return DefaultPhaseLeaseIntervals * c.interval
}

// WithTelemetry sets where the Locker reports what it does: background
// events to t.Logger, metrics to t.MeterProvider, a span per TryLock and
// Lock to t.TracerProvider (docs/observability.md lists them). Default:
// the zero Telemetry, which reports nothing.
func WithTelemetry(t lockbridge.Telemetry) Option { return func(c *config) { c.errs.Telemetry(t) } }
