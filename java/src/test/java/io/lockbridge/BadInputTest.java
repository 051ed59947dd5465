package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.function.Executable;

/** Bad input is an InvalidException before anything is sent (and nothing is written). */
class BadInputTest extends ServerTest {
    static Stream<Arguments> cases() {
        MigrateLocker dualWrite = MigrateLocker.builder(redisLater()).phase(Phase.DUAL_WRITE).build();
        return Stream.of(
                Arguments.of("empty name", (Executable) () -> dualWrite.tryLock("", Duration.ofSeconds(1))),
                Arguments.of("null name", (Executable) () -> dualWrite.tryLock(null, Duration.ofSeconds(1))),
                Arguments.of("zero ttl", (Executable) () -> dualWrite.tryLock("x", Duration.ZERO)),
                Arguments.of("null ttl", (Executable) () -> dualWrite.tryLock("x", null)),
                Arguments.of("sub-ms ttl", (Executable) () -> dualWrite.tryLock("x", Duration.ofNanos(999_999))),
                Arguments.of("ttl below the seconds unit", (Executable) () -> MigrateLocker.builder(redisLater())
                        .legacy(LegacyProfile.defaults().unit(TimeUnit.SECONDS)).phase(Phase.DUAL_WRITE).build()
                        .tryLock("x", Duration.ofMillis(999))),
                Arguments.of("namespace with braces", (Executable) () -> MigrateLocker.builder(redisLater())
                .followPhase("a{b}")),
                Arguments.of("empty namespace", (Executable) () -> MigrateLocker.builder(redisLater()).namespace("")),
                Arguments.of("follow and a fixed phase", (Executable) () -> MigrateLocker.builder(redisLater())
                .followPhase("n")
                        .phase(Phase.MODERN).build()),
                Arguments.of("zero phase interval", (Executable) () -> MigrateLocker.builder(redisLater())
                .phaseInterval(Duration.ZERO)),
                Arguments.of("null Redis", (Executable) () -> MigrateLocker.builder(null)),
                Arguments.of("minute unit", (Executable) () -> LegacyProfile.defaults().unit(TimeUnit.MINUTES)),
                Arguments.of("negative skew margin", (Executable) () -> LegacyProfile.defaults()
                .skewMargin(Duration.ofMillis(-1))),
                Arguments.of("backoff max below base",
                (Executable) () -> Backoff.exponential(Duration.ofSeconds(1), Duration.ofMillis(1))),
                Arguments.of("backoff max beyond 2^63-1 ns",
                (Executable) () -> Backoff.exponential(Duration.ofMillis(1),
                        java.time.temporal.ChronoUnit.FOREVER.getDuration())),
                Arguments.of("pollers beyond 2^63-1 ns", (Executable) () -> ModernLocker.builder(redisLater())
                        .pollers(java.time.temporal.ChronoUnit.FOREVER.getDuration())),
                Arguments.of("zero timeout", (Executable) () -> Redis.of(srv.uri(), Duration.ZERO)),
                Arguments.of("refresh to 0", (Executable) () -> {
                    Lock lock = dualWrite.tryLock("refresh-zero", Duration.ofSeconds(1));
                    try {
                        lock.refresh(Duration.ZERO);
                    } finally {
                        lock.unlock();
                    }
                }));
    }

    private static Redis redisLater() {
        return redis;
    }

    /**
     * A backoff with no practical cap (max up to 2^63-1 ns, Go's longest
     * time.Duration): every delay stays within [0, max]. Before, the
     * doubling overflowed after about 43 misses (a contended lock() with
     * a short holder lease gets there within a second): a negative delay
     * made ThreadLocalRandom throw IllegalArgumentException out of lock(),
     * or a zero one spun. A max beyond 2^63-1 ns (ChronoUnit.FOREVER)
     * threw ArithmeticException at the first miss; it is now refused above.
     */
    @org.junit.jupiter.api.Test
    void faultUncappedBackoffNeverOverflows() {
        Duration max = Duration.ofNanos(Long.MAX_VALUE);
        Backoff backoff = Backoff.exponential(Duration.ofMillis(1), max);
        for (int attempt = 0; attempt < 200; attempt++) {
            Duration delay = backoff.delay(attempt);
            org.junit.jupiter.api.Assertions.assertTrue(!delay.isNegative() && delay.compareTo(max) <= 0
                    && (attempt < 64 || delay.compareTo(Duration.ofDays(365)) > 0),
                    "delay(" + attempt + ") = " + delay);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void isInvalid(String name, Executable call) {
        assertThrows(InvalidException.class, call, name);
        org.junit.jupiter.api.Assertions.assertEquals(0, srv.raw.dbsize(), name + ": nothing written");
    }
}
