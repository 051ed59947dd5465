package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

/**
 * Review 8, finding 2 (a lease whose end waits for something in flight):
 * the loss signal is a timer nothing can delay — not even the caller's
 * {@link LockListener}. A listener's lost() that blocks (a meter registry
 * stuck behind a lock, a log appender writing to a full pipe) must not
 * keep done() from completing by the lease's end, while another client
 * takes the lock.
 */
class BlockedListenerFaultTest extends ServerTest {
    /** A listener whose lost() blocks until released. */
    static final class Stuck implements LockListener {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void lost(String system) {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A migrate lock (every one's loss is reported) that nothing refreshes
     * runs out: the lease timer hands the loss to the signal thread, which
     * calls the listener before it completes done(). With a listener that
     * blocks, done() stays open past the lease's end while another client
     * holds the lock.
     */
    @Test
    void faultBlockedListenerHoldsDoneOpenPastTheLease() throws Exception {
        Stuck stuck = new Stuck();
        try (MigrateLocker a = MigrateLocker.builder(redis).phase(Phase.MODERN).listener(stuck).build();
                MigrateLocker b = MigrateLocker.builder(redis).phase(Phase.MODERN).build()) {
            long t0 = System.nanoTime();
            Lock lock = a.tryLock("stuck", Duration.ofMillis(600));
            assertTrue(stuck.entered.await(5, TimeUnit.SECONDS), "the lease ran out and the loss was reported");
            Lock other = null;
            long until = t0 + TimeUnit.SECONDS.toNanos(3);
            while (other == null && System.nanoTime() - until < 0) {
                try {
                    other = b.tryLock("stuck", Duration.ofSeconds(10));
                } catch (NotObtainedException e) {
                    Thread.sleep(5);
                }
            }
            assertNotNull(other, "the server's lease ended: another client holds the lock");
            try {
                assertLostWithin(lock, t0 + TimeUnit.MILLISECONDS.toNanos(600 + 200));
            } finally {
                stuck.release.countDown();
                other.unlock();
            }
        }
    }

    /**
     * The same with an auto-refreshed modern lock whose key is deleted
     * behind its back (FLUSHALL, an eviction): the watchdog's refresh finds
     * it gone, and done() waits for the listener.
     */
    @Test
    void faultBlockedListenerHoldsDoneOpenAfterARefreshFoundItGone() throws Exception {
        Stuck stuck = new Stuck();
        try (ModernLocker a = ModernLocker.builder(redis).autoRefresh(true).listener(stuck).build();
                ModernLocker b = ModernLocker.builder(redis).build()) {
            long t0 = System.nanoTime();
            Lock lock = a.tryLock("gone", Duration.ofMillis(600));
            srv.raw.flushall();
            assertTrue(stuck.entered.await(5, TimeUnit.SECONDS), "the watchdog found it gone and reported the loss");
            Lock other = b.tryLock("gone", Duration.ofSeconds(10));
            try {
                assertLostWithin(lock, t0 + TimeUnit.MILLISECONDS.toNanos(600 + 200));
            } finally {
                stuck.release.countDown();
                other.unlock();
            }
        }
    }

    /** Asserts done() completed with a LostException by the deadline (System.nanoTime), another client holding. */
    private static void assertLostWithin(Lock lock, long deadline) throws InterruptedException {
        try {
            lock.done().get(Math.max(deadline - System.nanoTime(), 1), TimeUnit.NANOSECONDS);
            throw new AssertionError("done() completed normally: the lock was lost");
        } catch (ExecutionException e) {
            assertInstanceOf(LostException.class, e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("done() still open 200 ms past the lease's end, while another client holds "
                    + "the lock: the loss signal waits for the listener", e);
        }
    }
}
