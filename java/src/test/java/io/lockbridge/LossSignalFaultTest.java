package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 26 in Java: the loss signal is a timer and every verdict is honest.
 * done() completes, as a loss, before the lock's local lease ends (the send
 * time of the last confirmed grant plus its ttl), whatever is in flight —
 * a hung refresh, a refresh whose reply is lost, an unlock waiting for a
 * stalled refresh, a common pool busy with blocking work — and whether or
 * not anything refreshes the lock; an unlock whose reply never came is an
 * unknown outcome, never a release; a lock whose local lease ran out is
 * over: a late refresh does not revive it, and its locker's heartbeats keep
 * reporting it until its server-side lease has surely ended. Faults: the
 * server paused with SIGSTOP, or its replies swallowed by a
 * {@link FaultProxy} (the command runs, its reply never comes).
 */
class LossSignalFaultTest extends ServerTest {
    /** The moment lock's done() completed (System.nanoTime()), 0 until then. */
    static AtomicLong doneAt(Lock lock) {
        AtomicLong doneNanos = new AtomicLong();
        lock.done().whenComplete((v, e) -> doneNanos.set(System.nanoTime()));
        return doneNanos;
    }

    /** Runs task on a thread of its own (never the common pool, which one test fills). */
    static CompletableFuture<Void> async(Runnable task) {
        CompletableFuture<Void> future = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                task.run();
                future.complete(null);
            } catch (Throwable e) {
                future.completeExceptionally(e);
            }
        }, "loss-signal-test");
        thread.setDaemon(true);
        thread.start();
        return future;
    }

    static void sleepUntil(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    static Throwable cause(CompletableFuture<?> future) {
        Throwable thrown = future.handle((v, e) -> e).join();
        assertNotNull(thrown, "it failed");
        return thrown instanceof java.util.concurrent.CompletionException && thrown.getCause() != null
                ? thrown.getCause() : thrown;
    }

    /** Waits up to 10 s for future, which must fail; returns why. */
    static Throwable failureOf(CompletableFuture<?> future) throws InterruptedException {
        try {
            future.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("still running after 10 s", e);
        }
        throw new AssertionError("it succeeded");
    }

    /** done() completed by now, as a loss (LostException); returns it. */
    static LostException assertLostNow(Lock lock) {
        assertFalse(lock.isHeld(), "the lease has ended");
        assertTrue(lock.done().isDone(), "done() completed by the end of the local lease");
        return assertInstanceOf(LostException.class, cause(lock.done()));
    }

    /**
     * A manual refresh hangs (its reply swallowed, the connection left
     * open) beside the watchdog, whose tick waits for it: done() completes
     * by the local lease's end all the same — the give-up timer waits for
     * nothing in flight. (Go's finding 1; lockbridge-java had this shape.)
     */
    @Test
    void faultHungRefreshBesideTheWatchdogStillSignalsTheLoss() throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofSeconds(3));
                MigrateLocker locker = MigrateLocker.builder(proxied).phase(Phase.MODERN).autoRefresh(true).build()) {
            Lock warm = locker.tryLock("warm", Duration.ofSeconds(5));
            warm.refresh(Duration.ofSeconds(5)); // the refresh script is loaded: the one below runs at once
            warm.unlock();
            long start = System.nanoTime();
            Lock lock = locker.tryLock("hung", Duration.ofMillis(1200));
            proxy.dropReplies(true);
            CompletableFuture<Void> manual = async(() -> lock.refresh(Duration.ofMillis(1200)));
            sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(1200));
            LostException lost = assertLostNow(lock);
            assertTrue(lost.getMessage().contains("no refresh succeeded"), lost.getMessage());
            proxy.dropReplies(false);
            assertInstanceOf(UnknownOutcomeException.class, failureOf(manual));
        }
    }

    /**
     * A shortening refresh (6 s lock, refresh to 1.2 s) whose reply is
     * lost: the server cut the lease to 1.2 s, and another client gets in
     * then. A call in flight may shorten the local lease, never hold it
     * open: the local end becomes min(end, send + new ttl) when it is sent,
     * so done() completes before the other client gets in (its give-up point,
     * ttl/12 = 100 ms before that end, leaves room for a loaded machine's
     * thread wake-ups). Before, done() completed only when the refresh timed
     * out (2 s), 0.8 s into the other client's hold.
     */
    @Test
    void faultLostShorteningRefreshShortensTheLocalLease() throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofSeconds(2));
                MigrateLocker viaProxy = MigrateLocker.builder(proxied).phase(Phase.MODERN).build();
                MigrateLocker direct = MigrateLocker.builder(redis).phase(Phase.MODERN).build()) {
            Lock lock = viaProxy.tryLock("shorten", Duration.ofSeconds(6));
            lock.refresh(Duration.ofSeconds(6)); // the refresh script is loaded
            AtomicLong done = doneAt(lock);
            proxy.dropReplies(true);
            long sent = System.nanoTime();
            CompletableFuture<Void> shorten = async(() -> lock.refresh(Duration.ofMillis(1200)));
            Lock other = null;
            long end = sent + TimeUnit.SECONDS.toNanos(4);
            while (other == null && System.nanoTime() < end) {
                try {
                    other = direct.tryLock("shorten", Duration.ofSeconds(10));
                } catch (NotObtainedException e) {
                    Thread.sleep(2);
                }
            }
            long otherIn = System.nanoTime();
            assertNotNull(other, "the server's lease was cut to 1.2 s: another client gets in");
            assertTrue(done.get() != 0 && done.get() - otherIn < 0,
                    "done() completed before another client got in (it completed "
                    + (done.get() == 0 ? "not yet" : (done.get() - sent) / 1_000_000 + " ms after the send")
                    + ", the other got in " + (otherIn - sent) / 1_000_000 + " ms after)");
            assertTrue(done.get() - sent <= TimeUnit.MILLISECONDS.toNanos(1200), "by send + the new ttl");
            assertLostNow(lock);
            assertInstanceOf(UnknownOutcomeException.class, failureOf(shorten));
            proxy.dropReplies(false);
            other.unlock();
        }
    }

    interface Locker extends AutoCloseable {
        Lock tryLock(String name, Duration ttl);

        @Override
        void close();
    }

    static Stream<Arguments> lockers(boolean auto) {
        Stream.Builder<Arguments> cases = Stream.builder();
        cases.add(Arguments.of("LegacyLocker", (Function<Redis, Locker>) redis -> {
            LegacyLocker legacy = LegacyLocker.builder(redis).autoRefresh(auto).build();
            return new Locker() {
                public Lock tryLock(String name, Duration ttl) {
                    return legacy.tryLock(name, ttl);
                }

                public void close() {
                    legacy.close();
                }
            };
        }));
        cases.add(Arguments.of("ModernLocker", (Function<Redis, Locker>) redis -> {
            ModernLocker modern = ModernLocker.builder(redis).fencing(true).autoRefresh(auto).build();
            return new Locker() {
                public Lock tryLock(String name, Duration ttl) {
                    return modern.tryLock(name, ttl);
                }

                public void close() {
                    modern.close();
                }
            };
        }));
        for (Phase phase : Phase.values()) {
            cases.add(Arguments.of("MigrateLocker " + phase, (Function<Redis, Locker>) redis -> {
                MigrateLocker migrate = MigrateLocker.builder(redis).phase(phase).autoRefresh(auto).build();
                return new Locker() {
                    public Lock tryLock(String name, Duration ttl) {
                        return migrate.tryLock(name, ttl);
                    }

                    public void close() {
                        migrate.close();
                    }
                };
            }));
        }
        return cases.build();
    }

    static Stream<Arguments> plainLockers() {
        return lockers(false);
    }

    /**
     * The key is lost during the hold (as by eviction, or a restart without
     * persistence), another client takes the lock, and the first holder's
     * release reply is lost: the release ran and found another token, but
     * the holder cannot know it. The verdict is an unknown outcome
     * (UnknownOutcomeException), never "released", and the other client's
     * lock is untouched. lockbridge-java never asks again, so no second
     * answer ("taken") can be read as a release. (Go's finding 3.)
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("plainLockers")
    void faultUnlockAfterTheKeyWasLostAndTheReplyDroppedIsUnknown(String what,
            Function<Redis, Locker> make) throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofSeconds(1));
                Locker viaProxy = make.apply(proxied);
                Locker direct = make.apply(redis)) {
            viaProxy.tryLock("warm", Duration.ofSeconds(5)).unlock(); // the release script is loaded
            Lock lock = viaProxy.tryLock("verdict", Duration.ofSeconds(10));
            assertTrue(srv.raw.del(b("verdict"), b("{verdict}:modern")) >= 1, "the key is lost");
            // 30 s: a legacy value outside the holder's owner window (its W ± 5 s).
            // Within it the legacy scheme, which has no token, cannot tell the
            // successor's value from ours (docs/safety.md).
            Lock other = direct.tryLock("verdict", Duration.ofSeconds(30));
            proxy.dropReplies(true);
            UnknownOutcomeException unknown = assertThrows(UnknownOutcomeException.class, lock::unlock,
                    "never released");
            proxy.dropReplies(false);
            assertInstanceOf(LostException.class, cause(lock.done()));
            assertTrue(other.isHeld());
            assertTrue(srv.raw.exists(b("verdict"), b("{verdict}:modern")) >= 1, "the other client's lock stands");
            other.unlock(); // ours: the first release did not touch it
            assertNotNull(unknown.getMessage());
        }
    }

    /**
     * A lock nothing refreshes signals the end of its lease: done()
     * completes with a LostException saying the lease ran out, ttl/12
     * before its local end. Before, done() never completed.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("plainLockers")
    void faultLockWithoutWatchdogSignalsTheEndOfItsLease(String what, Function<Redis, Locker> make) throws Exception {
        try (Locker locker = make.apply(redis)) {
            long start = System.nanoTime();
            Lock lock = locker.tryLock("plain", Duration.ofMillis(1200));
            AtomicLong done = doneAt(lock);
            sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(1200));
            LostException lost = assertLostNow(lock);
            assertTrue(lost.getMessage().contains("lease ran out"), lost.getMessage());
            assertTrue(done.get() - start >= TimeUnit.MILLISECONDS.toNanos(1000), "not before ttl/12 before the end");
            assertEquals(NotHeldException.Reason.ENDED,
                    assertThrows(NotHeldException.class, () -> lock.refresh(Duration.ofSeconds(1))).reason(),
                    "no refresh revives it");
        }
    }

    /**
     * The give-up timer does not run on ForkJoinPool.commonPool(): with
     * the pool's workers all blocked (as by an application's blocking I/O)
     * and the watchdog's refresh stalled (SIGSTOP), done() still completes
     * by the lease's end. Before, it completed only when the stalled refresh
     * timed out (5 s into a 1.2 s lease). The test JVM runs a common pool of
     * 4 (pom.xml): with 1, CompletableFuture would not use it.
     */
    @Test
    void faultGiveUpTimerIsNotStarvedByABusyCommonPool() throws Exception {
        int parallelism = ForkJoinPool.getCommonPoolParallelism();
        assertTrue(parallelism > 1, "a common pool CompletableFuture uses (parallelism " + parallelism + ")");
        java.util.concurrent.atomic.AtomicBoolean release = new java.util.concurrent.atomic.AtomicBoolean();
        try (MigrateLocker locker = MigrateLocker.builder(redis).phase(Phase.MODERN).autoRefresh(true).build()) {
            locker.tryLock("warm", Duration.ofSeconds(5)).refresh(Duration.ofSeconds(5));
            for (int i = 0; i < 4 * parallelism; i++) {
                ForkJoinPool.commonPool().execute(() -> {
                    while (!release.get()) {
                        try {
                            Thread.sleep(20); // blocking, unmanaged
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });
            }
            long start = System.nanoTime();
            Lock lock = locker.tryLock("starved", Duration.ofMillis(1200));
            srv.signal("STOP");
            try {
                sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(1200));
                assertLostNow(lock);
            } finally {
                srv.signal("CONT");
            }
        } finally {
            release.set(true);
        }
    }

    /**
     * unlock() while the watchdog's refresh is stalled (SIGSTOP): unlock
     * waits for the refresh, and the give-up timer stays armed meanwhile,
     * so done() completes by the lease's end. Before, unlock turned the
     * timer off first, and done() waited for the stalled refresh (5 s).
     */
    @Test
    void faultUnlockWaitingForAStalledRefreshKeepsTheTimerArmed() throws Exception {
        try (MigrateLocker locker = MigrateLocker.builder(redis).phase(Phase.MODERN).autoRefresh(true).build()) {
            locker.tryLock("warm", Duration.ofSeconds(5)).refresh(Duration.ofSeconds(5));
            long start = System.nanoTime();
            Lock lock = locker.tryLock("unlocking", Duration.ofMillis(1200));
            sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(300));
            CompletableFuture<Void> unlock;
            srv.signal("STOP");
            try {
                sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(550)); // the refresh of 400 ms is in flight
                unlock = async(lock::unlock);
                sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(1200));
                assertLostNow(lock);
                assertFalse(unlock.isDone(), "unlock still waits for the stalled refresh");
            } finally {
                srv.signal("CONT");
            }
            // The late refresh does not revive the lock, and unlock says so.
            NotHeldException notHeld = assertInstanceOf(NotHeldException.class, failureOf(unlock));
            assertEquals(NotHeldException.Reason.ENDED, notHeld.reason());
            assertFalse(lock.isHeld());
        }
    }

    /**
     * A refresh sent before the local lease's give-up point whose reply
     * comes back after the lease ran out (the server paused 500 ms), and
     * the legacy owner window still lets it rewrite the value: the lock is
     * over all the same — the refresh fails (NotHeldException ENDED), done()
     * said lost at ttl/12 before the end — and the follower's heartbeats keep
     * reporting it, in its phase, until its server-side lease has surely
     * ended. Before, the heartbeats stopped reporting it once its local lease
     * ran out, and the refresh gave it a new lease outside the reported set:
     * the controller could step past a lock still held and refreshed.
     */
    @Test
    void faultLateRefreshDoesNotReviveALockAndItStaysReported() throws Exception {
        srv.setPhase("revive", "", Phase.LEGACY, "init");
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("revive")
                .phaseInterval(Duration.ofMillis(50)) .phaseLease(Duration.ofSeconds(3)).build()) {
            Lock warm = locker.tryLock("warm", Duration.ofSeconds(5));
            warm.refresh(Duration.ofSeconds(5));
            warm.unlock();
            long start = System.nanoTime();
            Lock lock = locker.tryLock("revive", Duration.ofMillis(2400));
            assertEquals(Phase.LEGACY, lock.phase());
            long storedBefore = Long.parseLong(srv.get("revive"));
            sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(2050)); // before the give-up point (2.2 s)
            CompletableFuture<Void> refresh = FollowerFaultTest.acrossAPause(() -> {
                lock.refresh(Duration.ofMillis(2400));
                return null;
            }, Duration.ofMillis(500));
            long storedAfter = Long.parseLong(srv.get("revive"));
            assertTrue(storedAfter > storedBefore, "the late refresh ran and rewrote the value (" + storedBefore
                    + " -> " + storedAfter + ")");
            NotHeldException notHeld = assertInstanceOf(NotHeldException.class, FollowerFaultTest.failure(refresh),
                    "no refresh revives it");
            assertEquals(NotHeldException.Reason.ENDED, notHeld.reason());
            assertLostNow(lock);

            Thread.sleep(200); // heartbeats every 50 ms
            long wallLeft = storedAfter - System.currentTimeMillis();
            assertTrue(wallLeft > 200, "the value still keeps others out for " + wallLeft + " ms");
            var entry = FollowerFaultTest.entry("revive", locker.clientId());
            assertEquals("legacy", entry.get("held_oldest"), "still reported while its server-side lease lasts: "
                    + entry);
            assertTrue((Long) entry.get("held_ms") >= wallLeft, "for at least what the value has left: " + entry);
            MigrateLockerTest.eventually("reported until its server-side lease has surely ended, not for ever",
                    () -> FollowerFaultTest.entry("revive", locker.clientId()).get("held_oldest") == null);
            assertTrue(System.currentTimeMillis() > storedAfter, "not dropped before the value's expiry");
        }
    }
}
