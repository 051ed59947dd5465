package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * The lease timer does not wake its thread for a point later than the one
 * it sleeps towards: these are the cases where it must wake, or run.
 */
class LeaseTimerTest {
    static long in(long millis) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Test
    void aPointArmedBeforeTheOneTheThreadSleepsTowardsWakesIt() throws Exception {
        LeaseTimer timer = new LeaseTimer("test-lease-timer");
        List<String> ran = new CopyOnWriteArrayList<>();
        CountDownLatch early = new CountDownLatch(1);
        timer.schedule(() -> ran.add("late"), in(60_000)); // the thread now sleeps towards this
        Thread.sleep(50);
        timer.schedule(() -> {
            ran.add("early");
            early.countDown();
        }, in(20));
        assertTrue(early.await(30, TimeUnit.SECONDS), "the earlier point ran, not only at the later one's time");
        assertEquals(List.of("early"), ran);
    }

    @Test
    void aCancelledPointNeverRunsAndTheNextStillDoes() throws Exception {
        LeaseTimer timer = new LeaseTimer("test-lease-timer");
        List<String> ran = new CopyOnWriteArrayList<>();
        CountDownLatch last = new CountDownLatch(1);
        LeaseTimer.Task pointA = timer.schedule(() -> ran.add("a"), in(100));
        // later than a: no wake-up; the thread finds it when it wakes for a
        timer.schedule(() -> ran.add("b"), in(150));
        timer.cancel(pointA); // a's wake-up still comes, finds a gone and sleeps towards b
        timer.schedule(() -> {
            ran.add("c");
            last.countDown();
        }, in(200));
        assertTrue(last.await(30, TimeUnit.SECONDS));
        assertEquals(List.of("b", "c"), ran, "in order, a not at all");
    }

    @Test
    void pointsArmedWhileTheQueueIsEmptyOrPastRunAndAFailingTaskStopsNothing() throws Exception {
        LeaseTimer timer = new LeaseTimer("test-lease-timer");
        CountDownLatch done = new CountDownLatch(2);
        timer.schedule(() -> {
            throw new IllegalStateException("a task's failure");
        }, in(-5)); // past: runs at once
        timer.schedule(done::countDown, in(-1));
        Thread.sleep(100); // the queue is empty, the thread waits with no deadline
        timer.schedule(done::countDown, in(10));
        assertTrue(done.await(30, TimeUnit.SECONDS), "a point armed on an idle timer wakes it");
        LeaseTimer.Task cancelled = timer.schedule(() -> {
            throw new AssertionError("cancelled");
        }, in(10));
        timer.cancel(cancelled);
        timer.cancel(cancelled); // twice, or after it would have run: a no-op
        CountDownLatch after = new CountDownLatch(1);
        timer.schedule(after::countDown, in(30));
        assertTrue(after.await(30, TimeUnit.SECONDS));
        assertFalse(Thread.currentThread().isInterrupted());
    }

    /**
     * A point armed while the thread runs a task — its next wake-up then
     * still names the task's point, long past, so no signal is sent — is
     * found when the task ends, and runs on time: no wake-up is skipped.
     */
    @Test
    void aPointArmedWhileATaskRunsIsFoundWhenItEnds() throws Exception {
        LeaseTimer timer = new LeaseTimer("test-lease-timer");
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ran = new CountDownLatch(1);
        timer.schedule(() -> {
            running.countDown();
            try {
                // a long task, for the test only (a give-up takes a lock's stateLock, never held across I/O)
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, in(0));
        assertTrue(running.await(30, TimeUnit.SECONDS));
        long atNanos = in(100);
        timer.schedule(ran::countDown, atNanos);
        release.countDown();
        assertTrue(ran.await(30, TimeUnit.SECONDS), "the point armed during the task ran");
        long late = System.nanoTime() - atNanos;
        assertTrue(late >= 0, "not before its time");
    }
}
