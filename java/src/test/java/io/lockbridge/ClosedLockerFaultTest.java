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

    static Locker of(LegacyLocker l) {
        return new Locker() {
            public Lock tryLock(String n, Duration t) {
                return l.tryLock(n, t);
            }

            public Lock lock(String n, Duration t, Duration w) {
                return l.lock(n, t, w);
            }

            public void close() {
                l.close();
            }
        };
    }

    static Locker of(MigrateLocker m) {
        return new Locker() {
            public Lock tryLock(String n, Duration t) {
                return m.tryLock(n, t);
            }

            public Lock lock(String n, Duration t, Duration w) {
                return m.lock(n, t, w);
            }

            public void close() {
                m.close();
            }
        };
    }

    static Stream<Arguments> lockers() {
        Stream.Builder<Arguments> s = Stream.builder();
        s.add(Arguments.of("LegacyLocker", (Function<Redis, Locker>) r -> of(LegacyLocker.builder(r).autoRefresh(true).build())));
        for (Phase p : Phase.values()) {
            s.add(Arguments.of("MigrateLocker " + p, (Function<Redis, Locker>) r -> of(MigrateLocker.builder(r).phase(p).autoRefresh(true).build())));
        }
        return s.build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lockers")
    void faultLockOnAClosedLockerRefusedBeforeSending(String what, Function<Redis, Locker> make) {
        Locker l = make.apply(redis);
        l.tryLock("warm", Duration.ofSeconds(5)).unlock();
        l.close();
        assertThrows(InvalidException.class, () -> l.tryLock("closed", Duration.ofSeconds(30)));
        assertThrows(InvalidException.class, () -> l.lock("closed", Duration.ofSeconds(30), Duration.ofMillis(100)));
        assertEquals(0, srv.raw.exists(b("closed"), b("{closed}:modern")), "nothing taken");
    }
}
