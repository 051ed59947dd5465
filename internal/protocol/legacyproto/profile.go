package legacyproto

import (
	"fmt"
	"math"
	"time"

	"github.com/lockbridge/lockbridge/internal/runtime/check"
)

// Profile describes how one Java service writes its lock: the key codec,
// the value codec, the unit of the timestamps, whether it adds 1 to the
// expiry; and how this side judges time: the clock it judges expiry by, the
// skew margin of takeovers and the server-clock margin of releases and
// refreshes. Lockers of the same profile take the same locks. The zero
// Profile is the Java seed's: raw key, decimal value, milliseconds, +1, the
// system clock, no skew margin, DefaultServerClockMargin.
type Profile struct {
	unit      time.Duration // 0 means time.Millisecond
	noPlusOne bool
	key       KeyCodec
	value     ValueCodec
	clock     func() time.Time // nil means time.Now
	skew      time.Duration    // WithSkewMargin
	server    time.Duration    // WithServerClockMargin, when serverSet
	serverSet bool
}

// Unit returns the unit of the timestamps: time.Millisecond or time.Second.
func (p Profile) Unit() time.Duration {
	if p.unit == 0 {
		return time.Millisecond
	}
	return p.unit
}

// UnitID returns the unit as the Lua fragments legacy_now and legacy_owner
// take it: "ms" or "s".
func (p Profile) UnitID() string {
	if p.Unit() == time.Second {
		return "s"
	}
	return "ms"
}

// PlusOne reports whether the expiry is now + lease + 1 (true) or now + lease.
func (p Profile) PlusOne() bool { return !p.noPlusOne }

// KeyCodec returns the key codec.
func (p Profile) KeyCodec() KeyCodec { return p.key }

// ValueCodec returns the value codec.
func (p Profile) ValueCodec() ValueCodec { return p.value }

// CodecID returns the value codec's id, the codec argument of the Lua
// fragment legacy_decode (and of legacy_state and legacy_owner).
func (p Profile) CodecID() string { return p.value.String() }

// Now reads the profile's clock (the system clock by default).
func (p Profile) Now() time.Time {
	if p.clock == nil {
		return time.Now()
	}
	return p.clock()
}

// Time returns t in the unit since the Unix epoch, truncated, as
// System.currentTimeMillis() (or its value / 1000) reads it.
func (p Profile) Time(t time.Time) int64 {
	if p.Unit() == time.Second {
		return t.Unix()
	}
	return t.UnixMilli()
}

// maxUnixSeconds bounds the seconds TimeOf converts: time.Unix overflows
// its internal representation near math.MaxInt64 seconds.
const maxUnixSeconds = 1 << 62

// TimeOf returns the instant v (in the unit since the Unix epoch) stands
// for. Values beyond what time.Time can hold (seconds beyond ±2^62) are
// clamped to that bound, far past any lease.
func (p Profile) TimeOf(v int64) time.Time {
	if p.Unit() == time.Second {
		return time.Unix(max(min(v, maxUnixSeconds), -maxUnixSeconds), 0)
	}
	return time.UnixMilli(v)
}

// Units returns d in the unit, truncated: the lease as the Java side adds it.
func (p Profile) Units(d time.Duration) int64 { return int64(d / p.Unit()) }

// CheckTTL reports an error wrapping lockbridge.ErrInvalid when ttl is below
// one unit.
func (p Profile) CheckTTL(ttl time.Duration) error {
	return check.TTL(pkg, ttl, p.Unit())
}

// Expiry returns the value a Java service of this profile writes when it
// locks at now for lease: now + lease (+ 1), in the unit. A lease that is
// not a whole number of units is truncated, as the Java side's integer
// arithmetic would.
func (p Profile) Expiry(now time.Time, lease time.Duration) int64 {
	v := p.Time(now) + p.Units(lease)
	if p.PlusOne() {
		v++
	}
	return v
}

// SkewMargin returns the skew margin (0 by default).
func (p Profile) SkewMargin() time.Duration { return p.skew }

// DefaultServerClockMargin is legacy.DefaultServerClockMargin (documented
// there).
const DefaultServerClockMargin = 2 * time.Second

// ServerClockMargin returns the server-clock margin of releases and
// refreshes (DefaultServerClockMargin by default).
func (p Profile) ServerClockMargin() time.Duration {
	if !p.serverSet {
		return DefaultServerClockMargin
	}
	return p.server
}

// skewUnits is the skew margin in the unit, rounded up.
func (p Profile) skewUnits() int64 {
	u := p.Unit()
	return int64((p.skew + u - 1) / u)
}

// Cutoff returns the takeover cutoff at now, in the unit: a stored expiry
// below it has expired. It is now in the unit minus the skew margin
// (rounded up to whole units): with no margin, the Java side's own rule.
// This is the one place the cutoff is computed: the scripts of this package
// and of migrate receive it as their "now" argument, and Expired and
// Remaining use it.
func (p Profile) Cutoff(now time.Time) int64 { return p.Time(now) - p.skewUnits() }

// Expired reports whether the stored expiry v has expired at now: v <
// Cutoff(now), strictly — with no skew margin, v < now in the unit, as every
// Java variant judges it.
func (p Profile) Expired(v int64, now time.Time) bool { return v < p.Cutoff(now) }

// Remaining returns how long, from now, until the stored expiry v has
// expired (Expired): at least one nanosecond while it is live, zero once it
// has expired. It saturates at the longest time.Duration: a value near
// math.MaxInt64 never expires (v + 1 would wrap around to the most negative
// int64, and read as long expired).
func (p Profile) Remaining(v int64, now time.Time) time.Duration {
	if p.Expired(v, now) {
		return 0
	}
	if v > math.MaxInt64-p.skewUnits()-1 {
		return math.MaxInt64
	}
	if d := p.TimeOf(v + p.skewUnits() + 1).Sub(now); d > 0 {
		return d
	}
	return 1
}

// EncodeKey returns the Redis key for the lock name. It fails with an error
// wrapping lockbridge.ErrInvalid for an empty name, a name longer than 64
// KiB, or a name the key codec cannot encode.
func (p Profile) EncodeKey(name string) (string, error) {
	if err := check.Key(pkg, name); err != nil {
		return "", err
	}
	return p.key.Encode(name)
}

// EncodeValue returns the bytes the Java side writes for the expiry v.
func (p Profile) EncodeValue(v int64) string { return p.value.Encode(v) }

// DecodeValue returns the expiry stored as s, strictly decoded. When s does
// not decode the error is a *ForeignValueError.
func (p Profile) DecodeValue(s string) (int64, error) { return p.value.Decode(s) }

// SetUnit sets the unit (time.Millisecond or time.Second; checked by the
// option).
func (p *Profile) SetUnit(u time.Duration) { p.unit = u }

// SetPlusOne sets whether the expiry is now + lease + 1.
func (p *Profile) SetPlusOne(on bool) { p.noPlusOne = !on }

// SetKeyCodec sets the key codec.
func (p *Profile) SetKeyCodec(k KeyCodec) { p.key = k }

// SetValueCodec sets the value codec.
func (p *Profile) SetValueCodec(v ValueCodec) { p.value = v }

// SetClock sets the clock expiries are computed and judged by.
func (p *Profile) SetClock(now func() time.Time) { p.clock = now }

// SetSkewMargin sets the skew margin of takeovers.
func (p *Profile) SetSkewMargin(d time.Duration) { p.skew = d }

// SetServerClockMargin sets the server-clock margin of releases and
// refreshes.
func (p *Profile) SetServerClockMargin(m time.Duration) { p.server, p.serverSet = m, true }

// String describes the profile, e.g. "key raw, value decimal, ms, +1".
func (p Profile) String() string {
	one := "+1"
	if !p.PlusOne() {
		one = "no +1"
	}
	return fmt.Sprintf("key %v, value %v, %s, %s", p.key, p.value, p.UnitID(), one)
}
