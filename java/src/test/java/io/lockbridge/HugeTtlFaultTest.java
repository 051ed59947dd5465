package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A ttl too long for the arithmetic of a lease (a java.time.Duration has no
 * upper bound; Go's time.Duration stops at 2^63-1 ns) is an
 * InvalidException before anything is sent. Before, a legacy expiry of now
 * + ttl overflowed to a negative value that any legacy locker takes over at
 * once, written before the lock's own lease arithmetic threw an untyped
 * ArithmeticException; a modern or dual ttl threw ArithmeticException.
 */
class HugeTtlFaultTest extends ServerTest {
    static Stream<Arguments> cases() {
        Duration[] ttls = {Duration.ofMillis(Long.MAX_VALUE), Duration.ofSeconds(Long.MAX_VALUE),
                Duration.ofNanos(Long.MAX_VALUE).plusNanos(1)};
        Stream.Builder<Arguments> cases = Stream.builder();
        for (Duration ttl : ttls) {
            cases.add(Arguments.of("legacy ms", null, LegacyProfile.defaults(), ttl));
            cases.add(Arguments.of("legacy s", null, LegacyProfile.defaults().unit(TimeUnit.SECONDS), ttl));
            for (Phase phase : Phase.values()) {
                cases.add(Arguments.of("migrate", phase, LegacyProfile.defaults(), ttl));
            }
        }
        return cases.build();
    }

    @ParameterizedTest(name = "{0} {1} {3}")
    @MethodSource("cases")
    void faultHugeTtlRefusedBeforeSending(String what, Phase phase, LegacyProfile prof, Duration ttl) {
        if (phase == null) {
            try (LegacyLocker locker = LegacyLocker.builder(redis).profile(prof).build()) {
                assertThrows(InvalidException.class, () -> locker.tryLock("huge", ttl));
            }
        } else {
            try (MigrateLocker locker = MigrateLocker.builder(redis).legacy(prof).phase(phase).build()) {
                assertThrows(InvalidException.class, () -> locker.tryLock("huge", ttl));
            }
        }
        assertEquals(0, srv.raw.exists(b("huge"), b("{huge}:modern")), "nothing written");
    }

    @ParameterizedTest(name = "refresh {0} {1} {3}")
    @MethodSource("cases")
    void faultHugeRefreshRefusedBeforeSending(String what, Phase phase, LegacyProfile prof, Duration ttl) {
        Lock lock;
        AutoCloseable locker;
        if (phase == null) {
            LegacyLocker legacy = LegacyLocker.builder(redis).profile(prof).build();
            locker = legacy;
            lock = legacy.tryLock("huge", Duration.ofSeconds(5));
        } else {
            MigrateLocker migrate = MigrateLocker.builder(redis).legacy(prof).phase(phase).build();
            locker = migrate;
            lock = migrate.tryLock("huge", Duration.ofSeconds(5));
        }
        try {
            assertThrows(InvalidException.class, () -> lock.refresh(ttl));
            lock.unlock(); // still held, and released as ever
        } finally {
            try {
                locker.close();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
        assertEquals(0, srv.raw.exists(b("huge"), b("{huge}:modern")), "released");
    }
}
