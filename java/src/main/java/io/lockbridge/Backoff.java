package io.lockbridge;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: the n-th wait (from 0) is drawn from
 * [d/2, d] with d = min(base × 2^n, max).
 */
public final class Backoff {
    private final Duration base;
    private final Duration max;

    private Backoff(Duration base, Duration max) {
        this.base = base;
        this.max = max;
    }

    /** A backoff from base doubling to max; both positive, base ≤ max ≤ 2^63-1 ns (Go's longest time.Duration). */
    public static Backoff exponential(Duration base, Duration max) {
        if (base == null || max == null || base.isNegative() || base.isZero() || max.compareTo(base) < 0
                || max.compareTo(AbstractLock.MAX_TTL) > 0) {
            throw new InvalidException("lockbridge: backoff needs 0 < base <= max <= 2^63-1 ns, got " + base
                    + ", " + max);
        }
        return new Backoff(base, max);
    }

    /** The legacy lock's default: 10 ms doubling to 100 ms (Go: legacy's default). */
    static Backoff legacyDefault() {
        return exponential(Duration.ofMillis(10), Duration.ofMillis(100));
    }

    /** The modern and migrate default: 8 ms doubling to 512 ms (Go: lockbridge.DefaultBackoff). */
    static Backoff modernDefault() {
        return exponential(Duration.ofMillis(8), Duration.ofMillis(512));
    }

    Duration delay(int attempt) {
        long maxNanos = max.toNanos();
        long nanos = base.toNanos();
        for (int i = 0; i < attempt && nanos < maxNanos; i++) {
            nanos = nanos > maxNanos / 2 ? maxNanos : nanos * 2; // never past max, never overflowing
        }
        return Duration.ofNanos(nanos / 2 + ThreadLocalRandom.current().nextLong(nanos / 2 + 1));
    }
}
