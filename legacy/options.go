package legacy

import (
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
)

// pkg prefixes every error message of the package.
const pkg = "legacy"

// Option configures a Locker (New), or migrate's legacy half (migrate.WithLegacy). An invalid
// option never panics: it is recorded, and every TryLock and Lock of the
// Locker returns an error wrapping lockbridge.ErrInvalid.
type Option = legacyproto.Option

// WithClassic makes the Locker send the Java scheme's literal commands:
// SETNX, GET, GETSET to acquire (three round trips for a takeover) and, to
// release, DEL when the local clock says the lease has not ended. For
// servers with scripting disabled and for byte-level parity with the Java
// side. Default: the atomic mode, which acquires, releases and refreshes
// with one Lua script each — one round trip for an uncontended acquire and
// for an expired takeover — and never overwrites a live value.
func WithClassic() Option { return legacyproto.WithMode(legacyproto.ModeClassic) }

// WithUnit sets the unit of the stored timestamps: time.Millisecond (the
// default, System.currentTimeMillis()) or time.Second (the redis.io SETNX
// recipe, PHP and Ruby ports). Leases are truncated to whole units and must
// be at least one unit.
func WithUnit(u time.Duration) Option {
	return func(c *legacyproto.Config) {
		if u != time.Millisecond && u != time.Second {
			c.Errs.Invalid("unit %v is neither time.Millisecond nor time.Second", u)
			return
		}
		c.Profile.SetUnit(u)
	}
}

// WithPlusOne sets whether the stored expiry is now + lease + 1 (true, the
// default: the seed, jedis-lock, the redis.io recipe) or now + lease (the
// StringRedisTemplate copies that omit it).
func WithPlusOne(on bool) Option {
	return func(c *legacyproto.Config) { c.Profile.SetPlusOne(on) }
}

// WithKeyCodec sets how lock names become Redis keys: KeyRaw (the default,
// the name's bytes) or KeyJavaString (JDK-serialized, as Spring Boot's
// default RedisTemplate writes keys).
func WithKeyCodec(k KeyCodec) Option {
	return func(c *legacyproto.Config) {
		if !k.Valid() {
			c.Errs.Invalid("unknown key codec %v", k)
			return
		}
		c.Profile.SetKeyCodec(k)
	}
}

// WithValueCodec sets how the expiry is stored: ValueDecimal (the default),
// ValueJavaString, ValueJavaLong, ValueJSONString or ValueJSONNumber.
func WithValueCodec(v ValueCodec) Option {
	return func(c *legacyproto.Config) {
		if !v.Valid() {
			c.Errs.Invalid("unknown value codec %v", v)
			return
		}
		c.Profile.SetValueCodec(v)
	}
}

// WithClock sets the local clock that expiries are computed and judged
// by (the Java side uses its own wall clock): the takeover of an expired
// value, and whether our own lease has ended when we release or refresh.
// Default: time.Now. Release and refresh in the atomic mode also consult the
// server's clock (TIME), but only to refuse (WithServerClockMargin). Tests
// use WithClock to fake skew and pauses.
func WithClock(now func() time.Time) Option {
	return func(c *legacyproto.Config) {
		if now == nil {
			c.Errs.Invalid("nil clock")
			return
		}
		c.Profile.SetClock(now)
	}
}

// WithServerClockMargin sets the margin m of the second guard of release and
// refresh in the atomic mode (and of migrate's dual-write release and refresh,
// through migrate.WithLegacy). Whether our lease W has ended is decided by
// our own clock, as the Java side decides it: we release or refresh only
// while our now < W. The server's clock never permits anything; it is
// consulted only to refuse a script that runs when the server's TIME is
// past W + m — one that reached Redis long after we decided, after a pause
// or a stalled connection, when a successor may hold the lock. A server
// clock ahead of ours by less than m therefore causes no false loss; one
// ahead by more may refuse (ErrNotHeld) a release or refresh sent within
// (its lead − m) of W. The guard misses a late script that runs within
// m + (how far the server's clock is behind ours) after W. Rounded up to
// whole milliseconds; 0 is the strictest guard. A negative margin is
// invalid.
//
// Default 2 s. The margin is how far ahead of a client's clock the
// server's may run without a release or refresh being refused while the
// client's own clock says the lease has not ended (a false loss). Hosts
// kept by NTP agree to within milliseconds; 2 s also covers a clock that is
// badly kept (a VM after a suspend, a host without NTP for days) without
// false losses. The margin is also how late past W, by the server's clock,
// a release decided in time may still land and act: 2 s is well below the
// leases Java services use (seconds to minutes), and beyond it every
// release decided before a pause or a stalled connection is refused.
func WithServerClockMargin(m time.Duration) Option {
	return func(c *legacyproto.Config) {
		if m < 0 {
			c.Errs.Invalid("server clock margin %v is negative", m)
			return
		}
		c.Profile.SetServerClockMargin(m)
	}
}

// WithSkewMargin sets a margin d for the clock skew between this process
// and the other lockers: an expired value is taken over only when it is
// below now − d (rounded up to whole units), in atomic and classic mode and
// in migrate's dual phases (through migrate.WithLegacy); a waiter waits
// that much longer. The Java scheme judges another holder's expiry by the
// taker's clock, so a taker whose clock runs ahead takes over early; with
// d at least the largest difference between this host's clock and any
// other locker's, a Go locker never takes over a lock whose holder's own
// clock says it is live. Default 0: the Java side's own rule (stored <
// now). A negative margin is invalid.
func WithSkewMargin(d time.Duration) Option {
	return func(c *legacyproto.Config) {
		if d < 0 {
			c.Errs.Invalid("skew margin %v is negative", d)
			return
		}
		c.Profile.SetSkewMargin(d)
	}
}

// WithSafetyTTL sets a Redis TTL put on the key whenever this locker writes
// it (acquire, takeover, refresh), for key hygiene: lock keys with dynamic
// names then do not accumulate forever. Default: none (0), like the Java
// side. It must be at least twice the ttl of every TryLock, Lock and
// Refresh (else they fail with ErrInvalid), so it never ends a live lease.
// A Java takeover (GETSET) wipes it. In the classic mode (WithClassic) it costs one more round
// trip (PEXPIRE) per acquire and refresh.
func WithSafetyTTL(d time.Duration) Option {
	return func(c *legacyproto.Config) {
		if d < 0 || (d > 0 && d < time.Millisecond) {
			c.Errs.Invalid("safety ttl %v is neither 0 (off) nor at least 1ms", d)
			return
		}
		c.Safety = d
	}
}

// WithBackoff sets how Lock waits between attempts. Default:
// lockbridge.ExponentialBackoff(10ms, 100ms), so a waiter polls no slower
// than the Java seed's 100 ms. Whatever the backoff, Lock never waits past
// the expiry it has just read from the holder's value.
func WithBackoff(b lockbridge.Backoff) Option {
	return func(c *legacyproto.Config) { c.Errs.Backoff(&c.Backoff, b) }
}

// WithPollers says the lock's other contenders poll every d (the Java
// lockers: 100 ms by default) and makes Lock wait as they do: between two
// attempts it pauses d/2 to d, instead of the backoff's delay (a
// backoff that gives up still ends the wait). The Locker then contends as
// one more Java service would. Without it a Go waiter, polling from 10 ms,
// takes most of the hand-offs from 100 ms pollers when services do work
// between two uses of the lock. It costs throughput under contention
// (docs/java.md gives the figures); TryLock is unchanged. Default 0: off.
// A negative d is invalid.
func WithPollers(d time.Duration) Option {
	return func(c *legacyproto.Config) { c.Errs.Pollers(&c.Poll, d) }
}

// WithTelemetry sets where the Locker reports what it does: background
// events to t.Logger, metrics to t.MeterProvider, a span per TryLock and
// Lock to t.TracerProvider (docs/observability.md lists them). Default:
// the zero Telemetry, which reports nothing.
func WithTelemetry(t lockbridge.Telemetry) Option {
	return func(c *legacyproto.Config) { c.Errs.Telemetry(t) }
}
