package io.lockbridge;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * What a legacy (SETNX + GETSET) Java lock writes: the unit of its expiry,
 * whether it adds one ({@code now + lease + 1}), the key codec and the value
 * codec; plus lockbridge's two margins. Immutable; the default is the
 * common Java lock: milliseconds, +1, raw key, decimal value, skew margin 0,
 * server-clock margin 2 s, the system clock. The same options as Go's
 * legacy.WithUnit, WithPlusOne, WithKeyCodec, WithValueCodec,
 * WithSkewMargin and WithServerClockMargin.
 */
public final class LegacyProfile {
    /** The default server-clock margin of the owner-window release (Go: DefaultServerClockMargin). */
    public static final Duration DEFAULT_SERVER_CLOCK_MARGIN = Duration.ofSeconds(2);

    private final TimeUnit unit;
    private final boolean plusOne;
    private final KeyCodec keyCodec;
    private final ValueCodec valueCodec;
    private final Duration skewMargin;
    private final Duration serverClockMargin;
    private final Clock clock;

    private LegacyProfile(TimeUnit unit, boolean plusOne, KeyCodec keyCodec, ValueCodec valueCodec, Duration skewMargin,
            Duration serverClockMargin, Clock clock) {
        this.unit = unit;
        this.plusOne = plusOne;
        this.keyCodec = keyCodec;
        this.valueCodec = valueCodec;
        this.skewMargin = skewMargin;
        this.serverClockMargin = serverClockMargin;
        this.clock = clock;
    }

    /** The default profile. */
    public static LegacyProfile defaults() {
        return new LegacyProfile(TimeUnit.MILLISECONDS, true, KeyCodec.RAW, ValueCodec.DECIMAL, Duration.ZERO,
                DEFAULT_SERVER_CLOCK_MARGIN, Clock.systemUTC());
    }

    /** MILLISECONDS (System.currentTimeMillis(), the default) or SECONDS (Unix seconds). */
    public LegacyProfile unit(TimeUnit unit) {
        if (unit != TimeUnit.MILLISECONDS && unit != TimeUnit.SECONDS) {
            throw new InvalidException("lockbridge: legacy unit must be MILLISECONDS or SECONDS, got " + unit);
        }
        return new LegacyProfile(unit, plusOne, keyCodec, valueCodec, skewMargin, serverClockMargin, clock);
    }

    /** Whether the expiry is now + lease + 1 (true, the default) or now + lease. */
    public LegacyProfile plusOne(boolean plusOne) {
        return new LegacyProfile(unit, plusOne, keyCodec, valueCodec, skewMargin, serverClockMargin, clock);
    }

    public LegacyProfile keyCodec(KeyCodec keyCodec) {
        return new LegacyProfile(unit, plusOne, Objects.requireNonNull(keyCodec), valueCodec, skewMargin,
                serverClockMargin, clock);
    }

    public LegacyProfile valueCodec(ValueCodec valueCodec) {
        return new LegacyProfile(unit, plusOne, keyCodec, Objects.requireNonNull(valueCodec), skewMargin,
                serverClockMargin, clock);
    }

    /**
     * Take over a stored expiry only once it is below now minus skewMargin (rounded
     * up to whole units); default 0, the Java rule.
     */
    public LegacyProfile skewMargin(Duration skewMargin) {
        if (skewMargin.isNegative()) {
            throw new InvalidException("lockbridge: negative skew margin " + skewMargin);
        }
        return new LegacyProfile(unit, plusOne, keyCodec, valueCodec, skewMargin, serverClockMargin, clock);
    }

    /** How far past our expiry the server's clock may be before a release or refresh is refused; default 2 s. */
    public LegacyProfile serverClockMargin(Duration serverClockMargin) {
        if (serverClockMargin.isNegative()) {
            throw new InvalidException("lockbridge: negative server-clock margin " + serverClockMargin);
        }
        return new LegacyProfile(unit, plusOne, keyCodec, valueCodec, skewMargin, serverClockMargin, clock);
    }

    /** The clock whose now computes expiries and judges them (a seam for tests). */
    public LegacyProfile clock(Clock clock) {
        return new LegacyProfile(unit, plusOne, keyCodec, valueCodec, skewMargin, serverClockMargin,
                Objects.requireNonNull(clock));
    }

    public TimeUnit unit() {
        return unit;
    }

    public boolean plusOne() {
        return plusOne;
    }

    public KeyCodec keyCodec() {
        return keyCodec;
    }

    public ValueCodec valueCodec() {
        return valueCodec;
    }

    String unitId() {
        return unit == TimeUnit.SECONDS ? "s" : "ms";
    }

    Duration unitDuration() {
        return unit == TimeUnit.SECONDS ? Duration.ofSeconds(1) : Duration.ofMillis(1);
    }

    Instant now() {
        return clock.instant();
    }

    /** instant in the unit: Unix ms or Unix seconds, floored. */
    long time(Instant instant) {
        return unit == TimeUnit.SECONDS ? instant.getEpochSecond() : instant.toEpochMilli();
    }

    /**
     * The instant of value in the unit. Seconds beyond what an Instant can hold
     * (about ±3.2e16) are clamped to its bounds, far past any lease (Go's
     * TimeOf clamps the same way at its own bound).
     */
    Instant timeOf(long value) {
        if (unit == TimeUnit.SECONDS) {
            return Instant.ofEpochSecond(
                    Math.max(Math.min(value, Instant.MAX.getEpochSecond()), Instant.MIN.getEpochSecond()));
        }
        return Instant.ofEpochMilli(value);
    }

    /** Whole units in duration, truncated. */
    long units(Duration duration) {
        return unit == TimeUnit.SECONDS ? duration.getSeconds() : duration.toMillis();
    }

    /** The lease must be at least one unit (and 1 ms), and at most {@link AbstractLock#MAX_TTL}. */
    void checkTtl(Duration ttl) {
        AbstractLock.checkTtl(ttl);
        if (ttl == null || ttl.compareTo(unitDuration()) < 0) {
            throw new InvalidException("lockbridge: ttl " + ttl + " is below " + unitDuration());
        }
    }

    /** The expiry W written for a lease from now: now + lease [+ 1], in the unit. */
    public long expiry(Instant now, Duration lease) {
        long value = time(now) + units(lease);
        return plusOne ? value + 1 : value;
    }

    private long skewUnits() {
        long unitNanos = unitDuration().toNanos();
        return (skewMargin.toNanos() + unitNanos - 1) / unitNanos;
    }

    /** When lockers of this profile on now's clock may take over expiry: once their now passes it, at the next unit. */
    Instant valueEnd(long expiry) {
        return timeOf(expiry + 1);
    }

    /**
     * The lease a holder of expiry written at now counts: ttl, or less
     * when the value can be taken over sooner (a ttl not a whole number of
     * units: W holds its whole units only).
     */
    Duration holderLease(Instant now, Duration ttl, long expiry) {
        Duration end = Duration.between(now, valueEnd(expiry));
        return end.compareTo(ttl) < 0 ? end : ttl;
    }

    /**
     * How long after a write of a value with lease ttl runs the value may
     * keep others out, at most: the lease, rounded up to the unit, the +1
     * unit, the unit others wait past W, the skew margin and its rounding.
     * What a follower's heartbeats report a lock for once its local lease
     * has ended.
     */
    Duration serverHold(Duration ttl) {
        Duration hold = ttl.plus(unitDuration().multipliedBy(4)).plus(skewMargin);
        return hold.compareTo(AbstractLock.MAX_TTL) > 0 ? AbstractLock.MAX_TTL : hold;
    }

    /** The takeover cutoff: a stored expiry below it has expired (now minus the skew margin). */
    long cutoff(Instant now) {
        return time(now) - skewUnits();
    }

    /** How long a live stored expiry has left by now; zero when expired. */
    Duration remaining(long expiry, Instant now) {
        if (expiry < cutoff(now)) {
            return Duration.ZERO;
        }
        if (expiry > Long.MAX_VALUE / 2) {
            return Duration.ofDays(365_000);
        }
        Duration left = Duration.between(now, timeOf(expiry + skewUnits() + 1));
        return left.isNegative() || left.isZero() ? Duration.ofNanos(1) : left;
    }

    /**
     * The owner-window arguments of the release and refresh scripts: codec,
     * unit, W, the lease in the unit, our clock's now (read here, just
     * before sending) and the server-clock margin in ms.
     */
    byte[][] ownerArgs(long expiry, Duration lease) {
        long marginMs = (serverClockMargin.toNanos() + 999_999) / 1_000_000;
        return new byte[][] {Redis.arg(valueCodec.id()), Redis.arg(unitId()), Redis.arg(expiry),
                Redis.arg(units(lease)),
            Redis.arg(time(now())), Redis.arg(marginMs)};
    }

    /** The Redis key of a lock name; InvalidException for an empty or over-long name. */
    public byte[] encodeKey(String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidException("lockbridge: empty lock name");
        }
        byte[] key = keyCodec.encode(name);
        if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 65536) {
            throw new InvalidException("lockbridge: lock name longer than 64 KiB");
        }
        return key;
    }

    @Override
    public String toString() {
        return "key " + keyCodec.id() + ", value " + valueCodec.id() + ", " + unitId() + ", "
                + (plusOne ? "+1" : "no +1");
    }
}
