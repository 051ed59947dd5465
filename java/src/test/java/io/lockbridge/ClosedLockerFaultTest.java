package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.function.Function;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A lock call on a closed auto-refreshing locker is an InvalidException
 * before anything is sent. Before, the acquire ran and took the lock, then
 * handing it to the stopped watchdog threw an untyped
 * RejectedExecutionException: the caller had no Lock to unlock, and the lock
 * stayed in Redis for its whole ttl.
 */
class ClosedLockerFaultTest extends ServerTest {
    interface Locker extends AutoCloseable {
        Lock tryLock(String name, Duration ttl);

        Lock lock(String name, Duration ttl, Duration wait);

        @Override
        void close();
    }

    static Locker of(LegacyLocker locker) {
        return new Locker() {
            public Lock tryLock(String name, Duration ttl) {
                return locker.tryLock(name, ttl);
            }

            public Lock lock(String name, Duration ttl, Duration wait) {
                return locker.lock(name, ttl, wait);
            }

            public void close() {
                locker.close();
            }
        };
    }

    static Locker of(MigrateLocker locker) {
        return new Locker() {
            public Lock tryLock(String name, Duration ttl) {
                return locker.tryLock(name, ttl);
            }

            public Lock lock(String name, Duration ttl, Duration wait) {
                return locker.lock(name, ttl, wait);
            }

            public void close() {
                locker.close();
            }
        };
    }

    static Stream<Arguments> lockers() {
        Stream.Builder<Arguments> cases = Stream.builder();
        cases.add(Arguments.of("LegacyLocker",
                (Function<Redis, Locker>) r -> of(LegacyLocker.builder(r).autoRefresh(true).build())));
        for (Phase phase : Phase.values()) {
            cases.add(Arguments.of("MigrateLocker " + phase,
                    (Function<Redis, Locker>) r -> of(MigrateLocker.builder(r).phase(phase).autoRefresh(true)
                    .build())));
        }
        return cases.build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lockers")
    void faultLockOnAClosedLockerRefusedBeforeSending(String what, Function<Redis, Locker> make) {
        Locker locker = make.apply(redis);
        locker.tryLock("warm", Duration.ofSeconds(5)).unlock();
        locker.close();
        assertThrows(InvalidException.class, () -> locker.tryLock("closed", Duration.ofSeconds(30)));
        assertThrows(InvalidException.class,
                () -> locker.lock("closed", Duration.ofSeconds(30), Duration.ofMillis(100)));
        assertEquals(0, srv.raw.exists(b("closed"), b("{closed}:modern")), "nothing taken");
    }
}
