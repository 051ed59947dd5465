package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

/**
 * A lock attempt on a thread whose interrupt flag is already set (a task
 * cancelled with Future.cancel(true) before it locked, a worker pool
 * shutting down). Before, the acquire was sent, the reply was not waited
 * for (the interrupt fails the wait at once) and could not be read back
 * (the reads fail the same way): an UnknownOutcomeException, and a lock
 * nobody holds kept the key for its whole lease. Go's lockers check their
 * context before sending and send nothing. Now nothing is sent: a
 * NotObtainedException, the flag kept.
 */
class InterruptFaultTest extends ServerTest {
    record Case(String name, Function<Redis, AutoCloseable> locker, String key) {}

    static Lock tryLock(AutoCloseable locker, String name, Duration ttl) {
        if (locker instanceof ModernLocker modern) {
            return modern.tryLock(name, ttl);
        }
        if (locker instanceof MigrateLocker migrate) {
            return migrate.tryLock(name, ttl);
        }
        return ((LegacyLocker) locker).tryLock(name, ttl);
    }

    static Lock lock(AutoCloseable locker, String name, Duration ttl) {
        Duration wait = Duration.ofSeconds(5);
        if (locker instanceof ModernLocker modern) {
            return modern.lock(name, ttl, wait);
        }
        if (locker instanceof MigrateLocker migrate) {
            return migrate.lock(name, ttl, wait);
        }
        return ((LegacyLocker) locker).lock(name, ttl, wait);
    }

    @Test
    void faultAnInterruptedThreadSendsNoAcquire() throws Exception {
        List<Case> cases = List.of(
                new Case("modern", r -> ModernLocker.builder(r).fencing(true).build(), "orders"),
                new Case("legacy", r -> LegacyLocker.builder(r).build(), "orders"),
                new Case("migrate dual-write", r -> MigrateLocker.builder(r).phase(Phase.DUAL_WRITE).build(), "orders"),
                new Case("migrate modern", r -> MigrateLocker.builder(r).phase(Phase.MODERN).build(),
                "{orders}:modern"));
        for (Case testCase : cases) {
            for (boolean waiting : new boolean[] {false, true}) {
                srv.raw.flushall();
                try (AutoCloseable locker = testCase.locker().apply(redis)) {
                    Thread.currentThread().interrupt();
                    try {
                        assertThrows(NotObtainedException.class, () -> {
                            if (waiting) {
                                lock(locker, "orders", Duration.ofSeconds(30));
                            } else {
                                tryLock(locker, "orders", Duration.ofSeconds(30));
                            }
                        }, testCase.name() + (waiting ? " lock()" : " tryLock()"));
                        assertTrue(Thread.currentThread().isInterrupted(), "the interrupt flag is kept");
                    } finally {
                        Thread.interrupted();
                    }
                    assertEquals(0L, srv.raw.dbsize(), testCase.name() + ": nothing was written ("
                            + testCase.key() + ")");
                    tryLock(locker, "orders", Duration.ofSeconds(30)).unlock(); // not interrupted: locks
                }
            }
        }
    }
}
