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
    public LegacyProfile unit(TimeUnit u) {
        if (u != TimeUnit.MILLISECONDS && u != TimeUnit.SECONDS) {
            throw new InvalidException("lockbridge: legacy unit must be MILLISECONDS or SECONDS, got " + u);
        }
        return new LegacyProfile(u, plusOne, keyCodec, valueCodec, skewMargin, serverClockMargin, clock);
    }

    /** Whether the expiry is now + lease + 1 (true, the default) or now + lease. */
    public LegacyProfile plusOne(boolean on) {
        return new LegacyProfile(unit, on, keyCodec, valueCodec, skewMargin, serverClockMargin, clock);
    }

    public LegacyProfile keyCodec(KeyCodec k) {
        return new LegacyProfile(unit, plusOne, Objects.requireNonNull(k), valueCodec, skewMargin, serverClockMargin, clock);
    }

    public LegacyProfile valueCodec(ValueCodec v) {
        return new LegacyProfile(unit, plusOne, keyCodec, Objects.requireNonNull(v), skewMargin, serverClockMargin, clock);
    }

    /**
     * Take over a stored expiry only once it is below now minus d (rounded
     * up to whole units); default 0, the Java rule.
     */
    public LegacyProfile skewMargin(Duration d) {
        if (d.isNegative()) {
            throw new InvalidException("lockbridge: negative skew margin " + d);
        }
        return new LegacyProfile(unit, plusOne, keyCodec, valueCodec, d, serverClockMargin, clock);
    }

    /** How far past our expiry the server's clock may be before a release or refresh is refused; default 2 s. */
    public LegacyProfile serverClockMargin(Duration d) {
        if (d.isNegative()) {
            throw new InvalidException("lockbridge: negative server-clock margin " + d);
        }
        return new LegacyProfile(unit, plusOne, keyCodec, valueCodec, skewMargin, d, clock);
    }

    /** The clock whose now computes expiries and judges them (a seam for tests). */
    public LegacyProfile clock(Clock c) {
        return new LegacyProfile(unit, plusOne, keyCodec, valueCodec, skewMargin, serverClockMargin, Objects.requireNonNull(c));
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

    /** t in the unit: Unix ms or Unix seconds, floored. */
    long time(Instant t) {
        return unit == TimeUnit.SECONDS ? t.getEpochSecond() : t.toEpochMilli();
    }

    /**
     * The instant of v in the unit. Seconds beyond what an Instant can hold
     * (about ±3.2e16) are clamped to its bounds, far past any lease (Go's
     * TimeOf clamps the same way at its own bound).
     */
    Instant timeOf(long v) {
        if (unit == TimeUnit.SECONDS) {
            return Instant.ofEpochSecond(Math.max(Math.min(v, Instant.MAX.getEpochSecond()), Instant.MIN.getEpochSecond()));
        }
        return Instant.ofEpochMilli(v);
    }

    /** Whole units in d, truncated. */
    long units(Duration d) {
        return unit == TimeUnit.SECONDS ? d.getSeconds() : d.toMillis();
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
        long v = time(now) + units(lease);
        return plusOne ? v + 1 : v;
    }

    private long skewUnits() {
        long u = unitDuration().toNanos();
        return (skewMargin.toNanos() + u - 1) / u;
    }

    /** When lockers of this profile on now's clock may take over the expiry w: once their now passes it, at the next unit. */
    Instant valueEnd(long w) {
        return timeOf(w + 1);
    }

    /**
     * The lease a holder of the expiry w written at now counts: ttl, or less
     * when the value can be taken over sooner (a ttl not a whole number of
     * units: W holds its whole units only).
     */
    Duration holderLease(Instant now, Duration ttl, long w) {
        Duration end = Duration.between(now, valueEnd(w));
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
        Duration d = ttl.plus(unitDuration().multipliedBy(4)).plus(skewMargin);
        return d.compareTo(AbstractLock.MAX_TTL) > 0 ? AbstractLock.MAX_TTL : d;
    }

    /** The takeover cutoff: a stored expiry below it has expired (now minus the skew margin). */
    long cutoff(Instant now) {
        return time(now) - skewUnits();
    }

    /** How long a live stored expiry v has left by now; zero when expired. */
    Duration remaining(long v, Instant now) {
        if (v < cutoff(now)) {
            return Duration.ZERO;
        }
        if (v > Long.MAX_VALUE / 2) {
            return Duration.ofDays(365_000);
        }
        Duration d = Duration.between(now, timeOf(v + skewUnits() + 1));
        return d.isNegative() || d.isZero() ? Duration.ofNanos(1) : d;
    }

    /**
     * The owner-window arguments of the release and refresh scripts: codec,
     * unit, W, the lease in the unit, our clock's now (read here, just
     * before sending) and the server-clock margin in ms.
     */
    byte[][] ownerArgs(long w, Duration lease) {
        long marginMs = (serverClockMargin.toNanos() + 999_999) / 1_000_000;
        return new byte[][] {Redis.arg(valueCodec.id()), Redis.arg(unitId()), Redis.arg(w), Redis.arg(units(lease)),
            Redis.arg(time(now())), Redis.arg(marginMs)};
    }

    /** The Redis key of a lock name; InvalidException for an empty or over-long name. */
    public byte[] encodeKey(String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidException("lockbridge: empty lock name");
        }
        byte[] k = keyCodec.encode(name);
        if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 65536) {
            throw new InvalidException("lockbridge: lock name longer than 64 KiB");
        }
        return k;
    }

    @Override
    public String toString() {
        return "key " + keyCodec.id() + ", value " + valueCodec.id() + ", " + unitId() + ", " + (plusOne ? "+1" : "no +1");
    }
}
