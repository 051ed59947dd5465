package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/**
 * The lockers' {@link LockListener} on a real redis-server: the events
 * have the meaning of Go's instruments (docs/observability.md), each one
 * in a scenario where that meaning and a count taken from outside the
 * locker differ.
 */
class ListenerTest extends ServerTest {
    /** Every event, as "kind system [detail]". */
    static final class Recorder implements LockListener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final List<Long> waits = new CopyOnWriteArrayList<>();

        @Override
        public void contended(String system) {
            events.add("contended " + system);
        }

        @Override
        public void waited(String system, long nanos) {
            events.add("waited " + system);
            waits.add(nanos);
        }

        @Override
        public void refreshed(String system, Refresh outcome) {
            events.add("refreshed " + system + " " + outcome.tag());
        }

        @Override
        public void lost(String system) {
            events.add("lost " + system);
        }

        @Override
        public void sighted(String namespace) {
            events.add("sighted " + namespace);
        }

        long count(String event) {
            return events.stream().filter(event::equals).count();
        }
    }

    @Test
    void eachFailedAttemptOfLockIsContentionAndItsSleepsAreItsWait() {
        Recorder rec = new Recorder();
        Lock holder = ModernLocker.builder(redis).build().tryLock("jobs", Duration.ofSeconds(30));
        AtomicInteger attempts = new AtomicInteger();
        // The token function runs before each attempt is sent: the fourth
        // finds the holder gone, so the first three missed.
        ModernLocker waiter = ModernLocker.builder(redis).listener(rec).notifications(false)
                .backoff(Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(20))) .tokens(() -> {
                    if (attempts.incrementAndGet() == 4) {
                        holder.unlock();
                    }
                    return MigrateLocker.token();
                }).build();
        try (waiter) {
            Lock lock = waiter.lock("jobs", Duration.ofSeconds(30), Duration.ofSeconds(20));
            assertEquals(4, attempts.get());
            assertEquals(3, rec.count("contended modern"), rec.events.toString());
            assertEquals(1, rec.count("waited modern"), "one record per lock() call that waited: " + rec.events);
            assertTrue(rec.waits.get(0) > 0, rec.waits.toString());

            assertThrows(NotObtainedException.class, () -> waiter.tryLock("jobs", Duration.ofSeconds(1)));
            assertEquals(4, rec.count("contended modern"), "a tryLock not obtained is an attempt that found it held");
            lock.unlock();

            waiter.lock("jobs", Duration.ofSeconds(30), Duration.ofSeconds(1)).unlock();
            assertEquals(1, rec.count("waited modern"), "a lock() that got in at once did not wait");
            assertEquals(4, rec.count("contended modern"));
            assertFalse(rec.events.stream().anyMatch(e -> e.startsWith("refreshed") || e.startsWith("lost")),
                    "no auto-refresh: " + rec.events);
        }
    }

    @Test
    void legacyLockAttemptsAreCountedOnceEach() {
        Recorder rec = new Recorder();
        Lock holder = LegacyLocker.builder(redis).build().tryLock("legacy-jobs", Duration.ofSeconds(30));
        try (LegacyLocker locker = LegacyLocker.builder(redis).listener(rec)
                .backoff(Backoff.exponential(Duration.ofMillis(10), Duration.ofMillis(10))).build()) {
            assertThrows(NotObtainedException.class,
                    () -> locker.lock("legacy-jobs", Duration.ofSeconds(30), Duration.ofMillis(200)));
            long misses = rec.count("contended legacy");
            assertTrue(misses >= 2, "each attempt of the wait: " + rec.events);
            assertEquals(1, rec.count("waited legacy"));
            assertThrows(NotObtainedException.class, () -> locker.tryLock("legacy-jobs", Duration.ofSeconds(1)));
            assertEquals(misses + 1, rec.count("contended legacy"), "tryLock: one attempt, counted once");
        }
        holder.unlock();
    }

    @Test
    void backgroundRefreshesAreCountedAndACallersRefreshIsNot() throws Exception {
        Recorder rec = new Recorder();
        try (ModernLocker locker = ModernLocker.builder(redis).listener(rec).autoRefresh(true).build();
                ModernLocker plain = ModernLocker.builder(redis).listener(rec).build()) {
            Lock lock = locker.tryLock("refreshed", Duration.ofMillis(300)); // refreshed every 100 ms
            MigrateLockerTest.eventually("three background refreshes",
                    () -> rec.count("refreshed modern refreshed") >= 3);
            lock.unlock();
            long before = rec.count("refreshed modern refreshed");
            Lock manual = plain.tryLock("manual", Duration.ofSeconds(10));
            manual.refresh(Duration.ofSeconds(10));
            manual.unlock();
            assertEquals(before, rec.count("refreshed modern refreshed"),
                    "Lock.refresh by the caller is not the refresher's: " + rec.events);
            assertEquals(0, rec.count("lost modern"), rec.events.toString());
        }
    }

    @Test
    void anAutoRefreshedLockFoundGoneIsLostOnce() throws Exception {
        Recorder rec = new Recorder();
        try (ModernLocker locker = ModernLocker.builder(redis).listener(rec).autoRefresh(true).build()) {
            Lock lock = locker.tryLock("gone", Duration.ofMillis(600));
            srv.raw.del(b("gone"));
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> lock.done().get(10, TimeUnit.SECONDS));
            assertTrue(failed.getCause() instanceof LostException, failed.getCause().toString());
            MigrateLockerTest.eventually("the refresh reported", () -> rec.count("refreshed modern not_held") == 1);
            MigrateLockerTest.eventually("the loss reported", () -> rec.count("lost modern") == 1);
            assertThrows(NotHeldException.class, lock::unlock);
            assertEquals(1, rec.count("lost modern"), "a lock is lost once: " + rec.events);
        }
    }

    @Test
    void aLockNoRefresherKeepsIsNotCountedLostOutsideMigrate() throws Exception {
        Recorder rec = new Recorder();
        try (ModernLocker locker = ModernLocker.builder(redis).listener(rec).build()) {
            Lock lock = locker.tryLock("ranout", Duration.ofMillis(120));
            assertThrows(ExecutionException.class, () -> lock.done().get(10, TimeUnit.SECONDS));
            assertTrue(rec.events.isEmpty(), "Go counts the losses of the locks its refresher keeps: " + rec.events);
        }
    }

    @Test
    void aMigrateLockAPhaseMoveEndedIsLost() throws Exception {
        Recorder rec = new Recorder();
        srv.setPhase("lnsmove", "", Phase.LEGACY, "init");
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("lnsmove")
                .phaseInterval(Duration.ofMillis(50)).listener(rec).build()) {
            Lock held = locker.tryLock("orders", Duration.ofSeconds(30));
            srv.setPhase("lnsmove", "legacy", Phase.DUAL_WRITE, "step");
            MigrateLockerTest.eventually("dual-write", () -> locker.phase() == Phase.DUAL_WRITE);
            srv.setPhase("lnsmove", "dual-write", Phase.DUAL_READ, "step");
            MigrateLockerTest.eventually("dual-read", () -> locker.phase() == Phase.DUAL_READ);
            assertThrows(ExecutionException.class, () -> held.done().get(10, TimeUnit.SECONDS));
            MigrateLockerTest.eventually("the loss reported", () -> rec.count("lost migrate") == 1);
            assertEquals(1, rec.count("lost migrate"), rec.events.toString());
        }
    }

    @Test
    void aRecordedLegacySightingIsCounted() {
        Recorder rec = new Recorder();
        srv.setPhase("lnssight", "", Phase.DUAL_WRITE, "init");
        Lock legacy = LegacyLocker.builder(redis).build().tryLock("orders", Duration.ofSeconds(30));
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("lnssight").listener(rec).build()) {
            assertThrows(NotObtainedException.class, () -> locker.tryLock("orders", Duration.ofSeconds(1)));
            assertThrows(NotObtainedException.class, () -> locker.tryLock("orders", Duration.ofSeconds(1)));
            assertEquals(1, rec.count("sighted lnssight"), "at most one recorded a second: " + rec.events);
            assertEquals(2, rec.count("contended migrate"), rec.events.toString());
            assertEquals("1", new String(srv.raw.hget(b("lockbridge:{lnssight}:legacy-sighting"), b("count"))));
        }
        legacy.unlock();
    }

    @Test
    void aListenerThatThrowsNeverFailsTheLock() throws Exception {
        AtomicReference<String> seen = new AtomicReference<>();
        LockListener bad = new LockListener() {
            @Override
            public void contended(String system) {
                seen.set(system);
                throw new IllegalStateException("listener bug");
            }
        };
        try (ModernLocker locker = ModernLocker.builder(redis).listener(bad).build()) {
            Lock lock = locker.tryLock("bad", Duration.ofSeconds(5));
            assertThrows(NotObtainedException.class, () -> locker.tryLock("bad", Duration.ofSeconds(5)));
            assertEquals("modern", seen.get());
            lock.unlock();
        }
    }
}
