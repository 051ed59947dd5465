package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * The lost-lock signal of an auto-refreshed lock: done() completes, as a
 * loss, by the time the lease has ended — whatever keeps the watchdog from
 * refreshing (a stalled server, a closed locker). Each test waits past the
 * lease's end and then looks at done(): a holder that trusts done() would
 * otherwise run on while a successor holds the lock.
 */
class WatchdogFaultTest extends ServerTest {
    static void assertLost(Lock lock) {
        assertFalse(lock.isHeld(), "the lease has ended");
        assertTrue(lock.done().isDone(), "done() completed by the end of the lease");
        assertTrue(lock.done().isCompletedExceptionally(), "as a loss");
        Throwable thrown = lock.done().handle((v, e) -> e).join();
        assertInstanceOf(LostException.class, thrown.getCause() != null && !(thrown instanceof LostException)
                ? thrown.getCause() : thrown);
    }

    /**
     * The server stalls (SIGSTOP) while an auto-refreshed lock is held: the
     * refresh sent at ttl/3 waits for the command timeout (5 s), far past
     * the lease's end (1.2 s). The loss must be signalled by the lease's
     * end (Go gives up at ttl/12 before it), not when the stalled refresh
     * times out. Before, done() completed only at about 5.4 s.
     */
    @Test
    void faultRefreshStalledPastTheLeaseStillSignalsTheLoss() throws Exception {
        try (MigrateLocker locker = MigrateLocker.builder(redis).phase(Phase.MODERN).autoRefresh(true).build()) {
            Lock lock = locker.tryLock("stall", Duration.ofMillis(1200));
            srv.signal("STOP");
            try {
                Thread.sleep(2000); // the lease ended at 1.2 s; the refresh in flight since 0.4 s
                assertLost(lock);
            } finally {
                srv.signal("CONT");
            }
        }
    }

    /**
     * Closing a following locker stops its refreshes while an
     * auto-refreshed lock is still held: once the lease has ended, done()
     * must say the lock is lost (Go's refresher keeps running after Close,
     * finds the phase untrusted, and loses the lock at its give-up point).
     * Before, done() never completed.
     */
    @Test
    void faultCloseWhileHoldingStillSignalsTheLoss() throws Exception {
        srv.setPhase("wdclose", "", Phase.MODERN, "init");
        MigrateLocker locker = MigrateLocker.builder(redis).followPhase("wdclose").phaseInterval(Duration.ofMillis(50))
                .autoRefresh(true).build();
        Lock lock = locker.tryLock("orders", Duration.ofMillis(900));
        locker.close();
        Thread.sleep(1600);
        assertEquals(0, srv.raw.exists(b("{orders}:modern")), "the lease has ended on the server too");
        assertLost(lock);
    }

    /** The same with LegacyLocker: close stops the watchdog, and the loss is still signalled at the lease's end. */
    @Test
    void faultLegacyCloseWhileHoldingStillSignalsTheLoss() throws Exception {
        LegacyLocker locker = LegacyLocker.builder(redis).autoRefresh(true).build();
        Lock lock = locker.tryLock("legacy-close", Duration.ofMillis(1500));
        locker.close();
        Thread.sleep(3200); // past the legacy value's last second
        assertLost(lock);
    }
}
