package legacy

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge"
)

// pkg prefixes every error message of the package.
const pkg = "legacy"

// Mode is how a Locker talks to Redis.
type Mode int

// The modes.
const (
	// ModeAtomic (the default) acquires, releases and refreshes with one Lua
	// script each: one round trip for an uncontended acquire and for an
	// expired takeover, and a live value is never overwritten.
	ModeAtomic Mode = iota
	// ModeClassic sends the Java scheme's literal commands: SETNX, GET,
	// GETSET to acquire (three round trips for a takeover) and, to release,
	// DEL when the local clock says the lease has not ended. For servers with
	// scripting disabled and for byte-level parity with the Java side.
	ModeClassic
)

// String returns "atomic" or "classic".
func (m Mode) String() string {
	switch m {
	case ModeAtomic:
		return "atomic"
	case ModeClassic:
		return "classic"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Option configures a Locker (New) or a Profile (NewProfile). An invalid
// option never panics: it is recorded, and every TryLock and Lock of the
// Locker (or NewProfile) returns an error wrapping lockbridge.ErrInvalid.
type Option func(*config)

type config struct {
	profile Profile
	mode    Mode
	safety  time.Duration
	backoff lockbridge.Backoff
	errs    []error
}

// defaultBackoff polls no slower than the Java seed's 100 ms.
func defaultBackoff() lockbridge.Backoff {
	return lockbridge.ExponentialBackoff(10*time.Millisecond, 100*time.Millisecond)
}

func newConfig(opts []Option) config {
	cfg := config{backoff: defaultBackoff()}
	for _, o := range opts {
		if o == nil {
			cfg.invalid("nil option")
			continue
		}
		o(&cfg)
	}
	return cfg
}

func (c *config) invalid(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %w: %s", pkg, lockbridge.ErrInvalid, fmt.Sprintf(format, args...)))
}

// err joins the recorded option errors; nil when there are none.
func (c *config) err() error { return errors.Join(c.errs...) }

// WithMode sets the mode: ModeAtomic (the default) or ModeClassic.
func WithMode(m Mode) Option {
	return func(c *config) {
		if m != ModeAtomic && m != ModeClassic {
			c.invalid("unknown mode %v", m)
			return
		}
		c.mode = m
	}
}

// WithUnit sets the unit of the stored timestamps: time.Millisecond (the
// default, System.currentTimeMillis()) or time.Second (the redis.io SETNX
// recipe, PHP and Ruby ports). Leases are truncated to whole units and must
// be at least one unit.
func WithUnit(u time.Duration) Option {
	return func(c *config) {
		if u != time.Millisecond && u != time.Second {
			c.invalid("unit %v is neither time.Millisecond nor time.Second", u)
			return
		}
		c.profile.unit = u
	}
}

// WithPlusOne sets whether the stored expiry is now + lease + 1 (true, the
// default: the seed, jedis-lock, the redis.io recipe) or now + lease (the
// StringRedisTemplate copies that omit it).
func WithPlusOne(on bool) Option {
	return func(c *config) { c.profile.noPlusOne = !on }
}

// WithKeyCodec sets how lock names become Redis keys: KeyRaw (the default,
// the name's bytes) or KeyJavaString (JDK-serialized, as Spring Boot's
// default RedisTemplate writes keys).
func WithKeyCodec(k KeyCodec) Option {
	return func(c *config) {
		if !k.valid() {
			c.invalid("unknown key codec %v", k)
			return
		}
		c.profile.key = k
	}
}

// WithValueCodec sets how the expiry is stored: ValueDecimal (the default),
// ValueJavaString, ValueJavaLong, ValueJSONString or ValueJSONNumber.
func WithValueCodec(v ValueCodec) Option {
	return func(c *config) {
		if !v.valid() {
			c.invalid("unknown value codec %v", v)
			return
		}
		c.profile.value = v
	}
}

// WithClock sets the local clock that expiries are computed and judged
// by (the Java side uses its own wall clock). Default: time.Now. Release
// and refresh in ModeAtomic also consult the server's clock (TIME); see the
// package documentation. Tests use WithClock to fake skew and pauses.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			c.invalid("nil clock")
			return
		}
		c.profile.clock = now
	}
}

// WithSafetyTTL sets a Redis TTL put on the key whenever this locker writes
// it (acquire, takeover, refresh), for key hygiene: lock keys with dynamic
// names then do not accumulate forever. Default: none (0), like the Java
// side. It must be at least twice the ttl of every TryLock, Lock and
// Refresh (else they fail with ErrInvalid), so it never ends a live lease.
// A Java takeover (GETSET) wipes it. In ModeClassic it costs one more round
// trip (PEXPIRE) per acquire and refresh.
func WithSafetyTTL(d time.Duration) Option {
	return func(c *config) {
		if d < 0 || (d > 0 && d < time.Millisecond) {
			c.invalid("safety ttl %v is neither 0 (off) nor at least 1ms", d)
			return
		}
		c.safety = d
	}
}

// WithBackoff sets how Lock waits between attempts. Default:
// lockbridge.ExponentialBackoff(10ms, 100ms), so a waiter polls no slower
// than the Java seed's 100 ms. Whatever the backoff, Lock never waits past
// the expiry it has just read from the holder's value.
func WithBackoff(b lockbridge.Backoff) Option {
	return func(c *config) {
		if err := lockbridge.ValidateBackoff(b); err != nil {
			c.errs = append(c.errs, fmt.Errorf("%s: %w", pkg, err))
			return
		}
		c.backoff = b
	}
}
