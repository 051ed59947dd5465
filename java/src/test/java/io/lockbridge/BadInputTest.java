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
        MigrateLocker dw = MigrateLocker.builder(redisLater()).phase(Phase.DUAL_WRITE).build();
        return Stream.of(
                Arguments.of("empty name", (Executable) () -> dw.tryLock("", Duration.ofSeconds(1))),
                Arguments.of("null name", (Executable) () -> dw.tryLock(null, Duration.ofSeconds(1))),
                Arguments.of("zero ttl", (Executable) () -> dw.tryLock("x", Duration.ZERO)),
                Arguments.of("null ttl", (Executable) () -> dw.tryLock("x", null)),
                Arguments.of("sub-ms ttl", (Executable) () -> dw.tryLock("x", Duration.ofNanos(999_999))),
                Arguments.of("ttl below the seconds unit", (Executable) () -> MigrateLocker.builder(redisLater())
                        .legacy(LegacyProfile.defaults().unit(TimeUnit.SECONDS)).phase(Phase.DUAL_WRITE).build()
                        .tryLock("x", Duration.ofMillis(999))),
                Arguments.of("namespace with braces", (Executable) () -> MigrateLocker.builder(redisLater()).followPhase("a{b}")),
                Arguments.of("empty namespace", (Executable) () -> MigrateLocker.builder(redisLater()).namespace("")),
                Arguments.of("follow and a fixed phase", (Executable) () -> MigrateLocker.builder(redisLater()).followPhase("n")
                        .phase(Phase.MODERN).build()),
                Arguments.of("zero phase interval", (Executable) () -> MigrateLocker.builder(redisLater()).phaseInterval(Duration.ZERO)),
                Arguments.of("null Redis", (Executable) () -> MigrateLocker.builder(null)),
                Arguments.of("minute unit", (Executable) () -> LegacyProfile.defaults().unit(TimeUnit.MINUTES)),
                Arguments.of("negative skew margin", (Executable) () -> LegacyProfile.defaults().skewMargin(Duration.ofMillis(-1))),
                Arguments.of("backoff max below base", (Executable) () -> Backoff.exponential(Duration.ofSeconds(1), Duration.ofMillis(1))),
                Arguments.of("zero timeout", (Executable) () -> Redis.of(srv.uri(), Duration.ZERO)),
                Arguments.of("refresh to 0", (Executable) () -> {
                    Lock l = dw.tryLock("refresh-zero", Duration.ofSeconds(1));
                    try {
                        l.refresh(Duration.ZERO);
                    } finally {
                        l.unlock();
                    }
                }));
    }

    private static Redis redisLater() {
        return redis;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void isInvalid(String name, Executable call) {
        assertThrows(InvalidException.class, call, name);
        org.junit.jupiter.api.Assertions.assertEquals(0, srv.raw.dbsize(), name + ": nothing written");
    }
}
