package redisson

import (
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
)

// Option sets one property of a Locker; New applies them in order. A bad
// one does not make New fail: every call of the Locker (TryLock, Lock,
// ForceUnlock, …) returns it, wrapping lockbridge.ErrInvalid.
type Option func(*config)

type config struct {
	fencing      bool
	fair         bool
	fairWait     time.Duration
	watchdog     bool
	notify       bool
	plainPublish bool
	latch        time.Duration
	backoff      lockbridge.Backoff
	errs         lockopt.Errs
}

func newConfig(opts []Option) config {
	c := config{
		notify:   true,
		latch:    defaultUnlockLatch,
		fairWait: DefaultFairWait,
		backoff:  lockbridge.ExponentialBackoff(defaultBackoffMin, defaultBackoffMax),
		errs:     lockopt.For("redisson"),
	}
	lockopt.Apply(&c.errs, &c, opts)
	if c.fair && c.fencing {
		c.errs.Invalid("WithFair and WithFencing together: Redisson has no fair fenced lock")
	}
	return c
}

// WithWatchdog renews every lock's lease while it is held, every third of
// its ttl (Redisson's watchdog: a ttl of DefaultWatchdogTimeout renews
// every 10 s), with Redisson's renewal script: PEXPIRE ttl if the owner's
// field is still in the hash. When a renewal finds the field gone, or none
// succeeds before the last twelfth of the lease (Redis unreachable), the
// lock is lost: Done closes and Err wraps lockbridge.ErrLost. Default: off —
// a lock lives for its ttl unless refreshed by hand, like a Java lock taken
// with an explicit leaseTime.
func WithWatchdog() Option { return func(c *config) { c.watchdog = true } }

// WithFair makes the Locker take Redisson's fair lock (RedissonFairLock,
// Java's getFairLock(name)) in place of the plain one: waiters of Lock queue
// in the lock's queue, Go and Java alike, and an unlock wakes the queue's
// head on its own channel; TryLock never queues and succeeds only when no
// one waits. A waiter that gives up leaves the queue. A waiter that vanishes
// without leaving (a crash) is dropped from the queue once its timeout —
// the previous waiter's timeout, or the lock's lease, plus wait — has
// passed by the clock of a client running a fair script: the clients'
// clocks decide the order of the queue, never who holds the lock (only the
// hash does). wait is how long past the waiter ahead of it a waiter keeps
// its place (Redisson's fairLockWaitTimeout); a Lock whose context has a
// deadline uses the time to the deadline instead, as Java's tryLock(wait)
// does. wait must be at least 1 ms; DefaultFairWait (5 min) is Redisson's.
// Default: not fair. A fair lock's name must be taken fair by every side:
// a plain acquire jumps the queue, and a plain waiter is not woken by a fair
// unlock.
func WithFair(wait time.Duration) Option {
	return func(c *config) {
		if wait < time.Millisecond {
			c.errs.Invalid("WithFair(%v): want a wait of at least 1ms", wait)
			return
		}
		c.fair, c.fairWait = true, wait.Truncate(time.Millisecond)
	}
}

// WithFencing makes the Locker take Redisson's fenced lock
// (RedissonFencedLock, Java's getFencedLock(name) with lockAndGetToken or
// tryLockAndGetToken): every acquire, re-entries too, also INCRs the
// counter "redisson_lock_token:{name}" in the same script, and the hold's
// Fence is the value it got — strictly greater than every fence handed out
// before on that name, by Java or Go. Pass it to storage that rejects
// writes with a fence below the highest it has seen. The counter is never
// deleted (and starts again from 1 if it is lost, as Redisson's does).
// Java's plain lock() and tryLock() on a fenced lock advance the counter
// too (RedissonFencedLock's own acquire script) without returning it.
// Default: off (Fence is 0). Not with WithFair.
func WithFencing() Option { return func(c *config) { c.fencing = true } }

// WithNotifications turns unlock messages on or off for Lock. On, a waiter
// subscribes to the lock's Redisson channel after its first failed attempt
// (one subscription per Locker, shared by its waiters) and tries again as
// soon as an unlock — Java's or Go's — publishes there. Off, or while
// subscribing fails, Lock waits by its backoff, never past the holder's
// remaining lease. Unlocks publish either way. Default: on.
func WithNotifications(on bool) Option { return func(c *config) { c.notify = on } }

// WithPlainPublish makes unlocks publish with PUBLISH everywhere, as
// Redisson clients set to ShardedSubscriptionMode.OFF listen, or on a
// cluster below Redis 7 (no sharded pub/sub). In a cluster, Go waiters
// (which listen with SSUBSCRIBE) then hear no unlock and wait by the
// holder's lease and the backoff. Default: Redisson's own default
// (ShardedSubscriptionMode.AUTO): SPUBLISH in a Redis Cluster (sharded
// pub/sub, Redis >= 7), PUBLISH otherwise; Go waiters listen the same way.
// Redisson's AUTO also probes the cluster (PUBSUB SHARDNUMSUB) and falls
// back to PUBLISH where sharded pub/sub is missing; the default here does
// not, and there an unlock's script fails at its SPUBLISH after deleting
// the lock: set WithPlainPublish on a cluster below Redis 7.
func WithPlainPublish() Option { return func(c *config) { c.plainPublish = true } }

// withUnlockLatch sets how long an unlock's latch lives on the server (at
// least 1 s; tests only): an Unlock whose reply was lost may be called again
// within half of it and gets the first run's result. Default:
// defaultUnlockLatch.
func withUnlockLatch(d time.Duration) Option {
	return func(c *config) {
		if d < time.Second {
			c.errs.Invalid("unlock latch %v: want at least 1s", d)
			return
		}
		c.latch = d.Truncate(time.Millisecond)
	}
}

// WithBackoff sets how long Lock waits between attempts when no unlock
// message wakes it. It never waits past the holder's remaining lease (the
// PTTL each failed attempt returns, as Redisson waits). lockbridge.NoRetry
// makes Lock a single attempt. Default: lockbridge.ExponentialBackoff(8 ms,
// 512 ms). A nil or malformed backoff is invalid.
func WithBackoff(b lockbridge.Backoff) Option {
	return func(c *config) { c.errs.Backoff(&c.backoff, b) }
}

// The defaults of the options, and Redisson's own figures.
const (
	// DefaultWatchdogTimeout is Redisson's default lockWatchdogTimeout: the
	// lease a Java lock() without a lease time takes, renewed every third
	// of it (10 s). Pass it as the ttl of a Locker WithWatchdog to lock
	// exactly as Java's lock() does.
	DefaultWatchdogTimeout = 30 * time.Second
	// defaultUnlockLatch is how long an unlock's latch lives: the window in
	// which an Unlock whose reply was lost can be asked again and get the
	// first result.
	defaultUnlockLatch = 20 * time.Second
	// defaultBackoffMin and defaultBackoffMax bound Lock's default backoff
	// between attempts when no unlock message comes:
	// lockbridge.ExponentialBackoff(8 ms, 512 ms), never past the holder's
	// remaining lease.
	defaultBackoffMin = 8 * time.Millisecond
	defaultBackoffMax = 512 * time.Millisecond
	// DefaultFairWait is Redisson's default fairLockWaitTimeout: how long a
	// fair waiter keeps its place past the one ahead of it (WithFair).
	DefaultFairWait = 5 * time.Minute
)

// WithTelemetry sets where the Locker reports what it does: background
// events to t.Logger, metrics to t.MeterProvider, a span per TryLock and
// Lock to t.TracerProvider (docs/observability.md lists them). Default:
// the zero Telemetry, which reports nothing.
func WithTelemetry(t lockbridge.Telemetry) Option { return func(c *config) { c.errs.Telemetry(t) } }
