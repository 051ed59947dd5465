package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.ExecutionException;

import org.junit.jupiter.api.Test;

/**
 * Faults injected for real: a redis-server paused with SIGSTOP while a
 * release is in flight. The release's outcome is unknown, reported as such,
 * and never sent again — the successor's lock is untouched.
 */
class FaultTest {
    @Test
    void faultReleaseWithoutReplyIsAnUnknownOutcomeNeverResent() throws Exception {
        try (RedisServer srv = new RedisServer();
                Redis first = Redis.of(srv.uri(), Duration.ofSeconds(1));
                Redis second = srv.redis();
                MigrateLocker firstLocker = MigrateLocker.builder(first).phase(Phase.DUAL_WRITE).build();
                MigrateLocker secondLocker = MigrateLocker.builder(second).phase(Phase.DUAL_WRITE).build()) {
            // the release script is loaded: the one in flight runs
            firstLocker.tryLock("warm", Duration.ofSeconds(10)).unlock();
            Lock lock = firstLocker.tryLock("orders", Duration.ofSeconds(10));
            srv.signal("STOP");
            try {
                assertThrows(UnknownOutcomeException.class, lock::unlock);
            } finally {
                srv.signal("CONT");
            }
            assertFalse(lock.isHeld());
            ExecutionException lost = assertThrows(ExecutionException.class, () -> lock.done().get());
            assertTrue(lost.getCause() instanceof LostException);
            // The paused server ran the release once it resumed: the keys are gone.
            MigrateLockerTest.eventually("the late release ran",
                    () -> srv.raw.exists(b("orders"), b("{orders}:modern")) == 0);
            Lock successor = secondLocker.tryLock("orders", Duration.ofSeconds(10));
            // The first client's next command goes on a new connection; nothing is replayed.
            firstLocker.tryLock("other", Duration.ofSeconds(10)).unlock();
            assertEquals(NotHeldException.Reason.ENDED, assertThrows(NotHeldException.class, lock::unlock).reason());
            successor.unlock(); // the successor's lock was never touched
        }
    }
}
