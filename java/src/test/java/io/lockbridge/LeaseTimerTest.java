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
    static long in(long ms) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    }

    @Test
    void aPointArmedBeforeTheOneTheThreadSleepsTowardsWakesIt() throws Exception {
        LeaseTimer t = new LeaseTimer("test-lease-timer");
        List<String> ran = new CopyOnWriteArrayList<>();
        CountDownLatch early = new CountDownLatch(1);
        t.schedule(() -> ran.add("late"), in(60_000)); // the thread now sleeps towards this
        Thread.sleep(50);
        t.schedule(() -> {
            ran.add("early");
            early.countDown();
        }, in(20));
        assertTrue(early.await(30, TimeUnit.SECONDS), "the earlier point ran, not only at the later one's time");
        assertEquals(List.of("early"), ran);
    }

    @Test
    void aCancelledPointNeverRunsAndTheNextStillDoes() throws Exception {
        LeaseTimer t = new LeaseTimer("test-lease-timer");
        List<String> ran = new CopyOnWriteArrayList<>();
        CountDownLatch last = new CountDownLatch(1);
        LeaseTimer.Task a = t.schedule(() -> ran.add("a"), in(100));
        t.schedule(() -> ran.add("b"), in(150)); // later than a: no wake-up; the thread finds it when it wakes for a
        t.cancel(a); // a's wake-up still comes, finds a gone and sleeps towards b
        t.schedule(() -> {
            ran.add("c");
            last.countDown();
        }, in(200));
        assertTrue(last.await(30, TimeUnit.SECONDS));
        assertEquals(List.of("b", "c"), ran, "in order, a not at all");
    }

    @Test
    void pointsArmedWhileTheQueueIsEmptyOrPastRunAndAFailingTaskStopsNothing() throws Exception {
        LeaseTimer t = new LeaseTimer("test-lease-timer");
        CountDownLatch done = new CountDownLatch(2);
        t.schedule(() -> {
            throw new IllegalStateException("a task's failure");
        }, in(-5)); // past: runs at once
        t.schedule(done::countDown, in(-1));
        Thread.sleep(100); // the queue is empty, the thread waits with no deadline
        t.schedule(done::countDown, in(10));
        assertTrue(done.await(30, TimeUnit.SECONDS), "a point armed on an idle timer wakes it");
        LeaseTimer.Task x = t.schedule(() -> {
            throw new AssertionError("cancelled");
        }, in(10));
        t.cancel(x);
        t.cancel(x); // twice, or after it would have run: a no-op
        CountDownLatch after = new CountDownLatch(1);
        t.schedule(after::countDown, in(30));
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
        LeaseTimer t = new LeaseTimer("test-lease-timer");
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ran = new CountDownLatch(1);
        t.schedule(() -> {
            running.countDown();
            try {
                release.await(); // a long task, for the test only (a give-up takes a lock's stateLock, never held across I/O)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, in(0));
        assertTrue(running.await(30, TimeUnit.SECONDS));
        long at = in(100);
        t.schedule(ran::countDown, at);
        release.countDown();
        assertTrue(ran.await(30, TimeUnit.SECONDS), "the point armed during the task ran");
        long late = System.nanoTime() - at;
        assertTrue(late >= 0, "not before its time");
    }
}
