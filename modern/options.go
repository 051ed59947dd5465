package modern

import (
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
)

// Option configures a Locker. Options are applied by New in order; an
// invalid one is recorded and returned, wrapping lockbridge.ErrInvalid, by
// every TryLock and Lock of that Locker (New itself returns no error).
type Option = modernproto.Option

// WithAutoRefresh makes every lock refresh itself every ttl/3 (with the ttl
// it was obtained or last refreshed with) until Unlock. When a refresh finds
// the lock gone or taken, or no refresh succeeds before the last ttl/12 of
// the lease (Redis unreachable or hung), the lock's Done channel is closed
// and Err returns an error wrapping lockbridge.ErrLost. Default: off — a lock
// lives for its ttl unless refreshed by hand.
func WithAutoRefresh() Option { return func(c *modernproto.Config) { c.AutoRefresh = true } }

// WithFencing makes the acquire also hand out a fence, kept in a counter
// key in the lock key's hash slot ("{key}:fence" for a key without a hash
// tag, key+":fence" for a tagged one), and give the lock its value as
// Lock.Fence: max(counter + 1, the server's TIME in microseconds), strictly
// increasing across the successive holders of a key — also across a
// restart of a server without persistence (the counter is lost) and a
// failover to a replica that lags (the counter is behind), as long as the
// server handing out the next fence has a clock ahead of the last fence
// handed out (see the package documentation, Fencing). Acquire and fence
// succeed or fail together, in one script: a counter that cannot give a
// fence fails the acquire with a *FenceError and nothing written. The
// counter never expires: one small key per lock name for good. Keys whose
// counter cannot share their slot (a stray '}') are rejected with
// ErrInvalid. Default: off (Fence returns 0).
func WithFencing() Option { return func(c *modernproto.Config) { c.Fencing = true } }

// WithBackoff sets how long Lock waits between attempts. It never waits
// longer than the holder's remaining lease (learnt by each failed attempt),
// and a release notification cuts any wait short. lockbridge.NoRetry makes
// Lock a single attempt. Default: lockbridge.ExponentialBackoff(8 ms,
// 512 ms), which draws each wait with jitter from [d/2, d], d doubling from
// 8 ms up to 512 ms. A nil or malformed backoff is invalid.
func WithBackoff(b lockbridge.Backoff) Option {
	return func(c *modernproto.Config) { c.Errs.Backoff(&c.Backoff, b) }
}

// WithNotifications turns release notifications for Lock on or off. On, a
// waiter subscribes (through one subscription per Locker, shared by all its
// waiters) to the key's release channel after its first failed attempt and
// wakes as soon as the holder's Unlock publishes there; in Redis Cluster this
// is sharded pub/sub (SSUBSCRIBE, Redis >= 7). When subscribing fails — an
// ACL without pub/sub rights, for instance — Lock polls with its backoff
// instead, never sleeping past the holder's lease, and subscribing is tried
// again a second later. Off, Lock always polls. Releases publish either way,
// so other lockers' waiters wake. Default: on.
func WithNotifications(on bool) Option { return func(c *modernproto.Config) { c.Notify = on } }

// WithNotifyLinger sets how long the Locker keeps a key's release channel
// subscribed after its last waiting Lock call returned, and so the
// subscription's connection open (one per node in Redis Cluster): a Lock
// that has to wait on the key again within d finds the channel subscribed,
// and sends no subscription and no second attempt before it sleeps, nor
// opens a connection. A process that takes a contended key again and again
// waits on it again within milliseconds; without the linger each of its
// waits would open the subscription anew. Meanwhile the Locker runs the
// subscription's reader goroutine and a timer, until d after the last wait
// or Close; releases of a key whose channel lingers publish their notice
// (to nobody who waits). At most 1,024 channels linger at once. Default
// 1 s; 0 closes the subscription as the last waiter
// returns. A negative d is invalid.
func WithNotifyLinger(d time.Duration) Option {
	return func(c *modernproto.Config) {
		if d < 0 {
			c.Errs.Invalid("WithNotifyLinger(%v): negative", d)
			return
		}
		c.Linger = d
	}
}

// WithPollers says the lock's other contenders poll every d and publish
// nothing when they release (Spring Integration's RedisLockRegistry and
// ShedLock beside a modern lock: 100 ms by default), and makes Lock wait as
// they do: between two attempts it pauses d/2 to d, instead of the
// backoff's delay (a backoff that gives up still ends the wait), and
// release notifications do not cut that pause short. The Locker then
// contends as one more poller would. Without it Go waiters woken at once by
// Go releases take most of the hand-offs from 100 ms pollers when services
// do work between two uses of the lock. It costs throughput under
// contention (docs/java.md gives the figures); TryLock is unchanged.
// Default 0: off. A negative d is invalid.
func WithPollers(d time.Duration) Option {
	return func(c *modernproto.Config) { c.Errs.Pollers(&c.Poll, d) }
}

// WithTokenFunc sets how each acquire makes its token, the value that proves
// ownership on release and refresh. It must return a value unique to this
// acquisition (a token reused by two holders lets one release the other's
// lock) of 1 to 1,024 bytes; an error from it fails the acquire. Use it
// for tokens that name the holder (say "host/pid/random") for inspection.
// Default: 16 bytes from crypto/rand, unpadded base64url (22 printable
// characters). nil is invalid.
func WithTokenFunc(f func() (string, error)) Option {
	return func(c *modernproto.Config) { c.Errs.TokenFunc(&c.TokenFunc, f) }
}

// WithWait makes every acquire wait, on the connection that sent it, until
// at least replicas replicas have acknowledged it (Redis' WAIT replicas
// timeout), so that a failover to any of them keeps the lock key and, with
// WithFencing, the fence counter. When fewer acknowledge within timeout —
// or WAIT fails — the lock is not reported held: it is released at once
// (owner-checked, on a detached context) and the attempt returns a
// *ReplicationError saying how many did; Lock returns it without waiting
// for another attempt. Every refresh (Refresh, the auto-refresh) waits the
// same way, and extends the lease only once acknowledged: a refresh too few
// replicas acknowledged returns a *ReplicationError and leaves the lease's
// end as it was (the lock is still held until then; the auto-refresh tries
// again), for a failover to a replica that missed it would keep the key
// with its earlier expiry. WAIT makes the loss of an acknowledged write
// unlikely, not impossible (a replica acknowledges what it received, not
// what it persisted, and a failover may still pick a replica that did not
// acknowledge): pair it with fencing. The client must be able to send WAIT
// on the connection of the acquire: the adapters driver/goredis (a
// *redis.Client or *redis.ClusterClient) and driver/redigoadapter can; with any
// other client every TryLock and Lock fails with an error wrapping
// lockbridge.ErrInvalid. replicas must be at least 1 and timeout positive
// (whole milliseconds; WAIT's 0, "for ever", is not offered). Default: off
// (an acquire is reported held once the primary has it).
func WithWait(replicas int, timeout time.Duration) Option {
	return func(c *modernproto.Config) {
		if replicas < 1 || timeout < time.Millisecond {
			c.Errs.Invalid("WithWait(%d, %v): want at least 1 replica and a timeout of at least 1ms", replicas, timeout)
			return
		}
		c.WaitN, c.WaitTimeout = replicas, timeout.Truncate(time.Millisecond)
	}
}

// WithTelemetry sets where the Locker reports what it does: background
// events to t.Logger, metrics to t.MeterProvider, a span per TryLock and
// Lock to t.TracerProvider (docs/observability.md lists them). Default:
// the zero Telemetry, which reports nothing.
func WithTelemetry(t lockbridge.Telemetry) Option {
	return func(c *modernproto.Config) { c.Errs.Telemetry(t) }
}
