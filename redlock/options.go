package redlock

import (
	"math"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
)

// Option configures a Locker. Options are applied by New in order; an
// invalid one is recorded and returned, wrapping lockbridge.ErrInvalid, by
// every TryLock and Lock of that Locker (New itself returns no error).
type Option func(*config)

// The defaults of the options, as their docs state them.
const (
	// defaultNodeTimeoutMax caps the default node timeout: ttl/10, at most
	// 50 ms (and at least 1 ms).
	defaultNodeTimeoutMax = 50 * time.Millisecond
	// defaultDriftFactor and defaultDrift make the default clock-drift
	// allowance ttl×0.01 + 2 ms, as in the Redlock description.
	defaultDriftFactor = 0.01
	defaultDrift       = 2 * time.Millisecond
	// defaultBackoffMin and defaultBackoffMax bound the default backoff of
	// Lock: lockbridge.ExponentialBackoff(8 ms, 512 ms), with jitter.
	defaultBackoffMin = 8 * time.Millisecond
	defaultBackoffMax = 512 * time.Millisecond
)

type config struct {
	nodeTimeout time.Duration // 0: the default, from the ttl
	driftFactor float64
	drift       time.Duration
	autoRefresh bool
	backoff     lockbridge.Backoff
	token       func() (string, error)
	names       []string
	errs        lockopt.Errs
}

// idTimeout bounds the one-time INFO server that identifies a node's server:
// the node timeout if set, else defaultNodeTimeoutMax.
func (c *config) idTimeout() time.Duration {
	if c.nodeTimeout > 0 {
		return c.nodeTimeout
	}
	return defaultNodeTimeoutMax
}

func defaults() config {
	return config{
		errs:        lockopt.For("redlock"),
		driftFactor: defaultDriftFactor,
		drift:       defaultDrift,
		backoff:     lockbridge.ExponentialBackoff(defaultBackoffMin, defaultBackoffMax),
		token:       modernproto.NewToken,
	}
}

// WithNodeTimeout bounds each node's part of a round (acquire, refresh,
// unlock, and the release that undoes a failed acquire): a node that has not
// answered by then counts as Failed, with an error wrapping ErrNodeTimeout,
// so a hung node delays a round by at most d. It must be positive, and at a
// call, below the ttl minus the drift allowance (else ErrInvalid). Default:
// ttl/10, at most 50 ms and at least 1 ms.
func WithNodeTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.errs.Invalid("node timeout %v is not positive", d)
			return
		}
		c.nodeTimeout = d
	}
}

// WithDrift sets the clock-drift allowance: ttl×factor + fixed, and a lock
// is valid for ttl − (time the round took) − allowance. factor, the part
// that grows with the ttl, must be in [0, 1); fixed, which covers Redis'
// millisecond expiry resolution, must not be negative. Default: ttl×0.01 +
// 2 ms, as in the Redlock description.
func WithDrift(factor float64, fixed time.Duration) Option {
	return func(c *config) {
		if math.IsNaN(factor) || factor < 0 || factor >= 1 {
			c.errs.Invalid("drift factor %v is not in [0, 1)", factor)
			return
		}
		if fixed < 0 {
			c.errs.Invalid("drift %v is negative", fixed)
			return
		}
		c.driftFactor, c.drift = factor, fixed
	}
}

// WithAutoRefresh makes every lock refresh itself on all nodes every third
// of its validity, until Unlock. When a refresh finds the lock gone or taken
// on so many nodes that no majority can be ours, or no refresh reaches a
// majority before the last twelfth of the validity (nodes down or hung), the
// lock's Done channel is closed and Err returns an error wrapping
// lockbridge.ErrLost. Default: off — a lock lives for its validity unless
// refreshed by hand.
func WithAutoRefresh() Option { return func(c *config) { c.autoRefresh = true } }

// WithBackoff sets how long Lock waits between rounds. Lock adds up to a
// quarter of each delay, at random, so that contenders whose rounds split
// the votes do not retry in step even with a backoff without jitter
// (lockbridge.LinearBackoff); and it never waits longer than the time until
// enough holders' leases have run out for a majority to be free (learnt by
// each failed round, plus jitter). lockbridge.NoRetry makes Lock a single
// round. Default: lockbridge.ExponentialBackoff(8 ms, 512 ms), which draws
// each delay from [d/2, d], d doubling from 8 ms up to 512 ms. A nil or
// malformed backoff is invalid.
func WithBackoff(b lockbridge.Backoff) Option {
	return func(c *config) { c.errs.Backoff(&c.backoff, b) }
}

// WithTokenFunc sets how each acquire makes its token, the value written to
// every node that proves ownership on refresh and release. It must return a
// value unique to this acquisition, of 1 to 1024 bytes; an error from it
// fails the acquire. Default: 16 bytes from crypto/rand, base64url — the
// modern lock's token (16 random bytes, base64url). nil is invalid.
func WithTokenFunc(f func() (string, error)) Option {
	return func(c *config) {
		if f == nil {
			c.errs.Invalid("nil token func")
			return
		}
		c.token = f
	}
}

// WithNodeNames names the nodes, in the order of the clients given to New,
// for errors (NodeResult.Name, QuorumError's message): say, their addresses,
// which a driver.Client does not know. There must be exactly one name per
// client. Default: none; nodes are known by their index.
func WithNodeNames(names ...string) Option {
	return func(c *config) {
		c.names = append([]string(nil), names...)
		if c.names == nil {
			c.names = []string{}
		}
	}
}

// WithTelemetry sets where the Locker reports what it does: background
// events to t.Logger, metrics to t.MeterProvider, a span per TryLock and
// Lock to t.TracerProvider (docs/observability.md lists them). Default:
// the zero Telemetry, which reports nothing.
func WithTelemetry(t lockbridge.Telemetry) Option { return func(c *config) { c.errs.Telemetry(t) } }
