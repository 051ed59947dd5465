package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

/** MigrateLocker on a real redis-server: the keys of each phase, following, fail-closed, sightings, the watchdog. */
class MigrateLockerTest extends ServerTest {
    static MigrateLocker fixed(Phase phase) {
        return MigrateLocker.builder(redis).phase(phase).build();
    }

    /** Waits until cond holds; fails after 10 s (a hang, not a timing assertion). */
    static void eventually(String what, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("never: " + what);
            }
            Thread.sleep(10);
        }
    }

    @Test
    void dualWriteWritesBothKeysAndExcludesLegacyLockers() {
        try (MigrateLocker locker = fixed(Phase.DUAL_WRITE)) {
            long before = System.currentTimeMillis();
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
            long expiry = Long.parseLong(srv.get("orders"));
            assertTrue(expiry >= before + 10_001 && expiry <= System.currentTimeMillis() + 10_001,
                    "the Java value: " + expiry);
            assertEquals(22, srv.get("{orders}:modern").length(), "a 16-byte token, base64url");
            assertTrue(srv.raw.pttl(b("{orders}:modern")) > 9_000);
            assertEquals(-1L, srv.raw.pttl(b("orders")), "no TTL on the legacy key, as Java");
            assertThrows(NotObtainedException.class, () -> LegacyLocker.builder(redis).build()
                    .tryLock("orders", Duration.ofSeconds(1)));
            assertThrows(NotObtainedException.class, () -> fixed(Phase.DUAL_READ)
                    .tryLock("orders", Duration.ofSeconds(1)));
            lock.unlock();
            assertEquals(0, srv.raw.dbsize());
        }
    }

    @Test
    void dualReadWritesTheModernKeyOnly() {
        try (MigrateLocker locker = fixed(Phase.DUAL_READ)) {
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
            assertNull(srv.get("orders"));
            assertNotNull(srv.get("{orders}:modern"));
            assertThrows(NotObtainedException.class, () -> fixed(Phase.MODERN)
                    .tryLock("orders", Duration.ofSeconds(1)));
            lock.unlock();
            assertEquals(0, srv.raw.dbsize());
        }
    }

    @Test
    void modernTakesTheModernKeyAndPublishesItsRelease() throws Exception {
        try (MigrateLocker locker = fixed(Phase.MODERN)) {
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
            assertNull(srv.get("orders"));
            assertTrue(srv.raw.pttl(b("{orders}:modern")) > 9_000);
            // A waiter is woken by the release notice Go publishes too.
            Thread thread = new Thread(() -> {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
                lock.unlock();
            });
            thread.start();
            Lock next = locker.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(10));
            thread.join();
            assertTrue(next.isHeld());
            next.unlock();
            assertEquals(0, srv.raw.dbsize());
        }
    }

    /** How many times the server ran cmd (INFO commandstats, which counts the commands scripts run). */
    static long calls(String cmd) {
        for (String line : srv.raw.info("commandstats").split("\r\n")) {
            String prefix = "cmdstat_" + cmd + ":calls=";
            if (line.startsWith(prefix)) {
                return Long.parseLong(line.substring(prefix.length(), line.indexOf(',')));
            }
        }
        return 0;
    }

    /**
     * Releases publish only when someone waits, and a Java waiter counts: its
     * subscription makes the release (the same script Go runs) publish, and
     * it is woken by it. The waiter's backoff is an hour and the holder's
     * lease a minute, so only the notice, or the attempt after its
     * subscription was confirmed, can give it the lock within 20 s. The
     * holder releases at a random moment while the waiter attempts,
     * subscribes and attempts again, 100 times.
     */
    @Test
    void aJavaWaiterIsWokenByAReleaseThatCountsSubscribers() throws Exception {
        Backoff slow = Backoff.exponential(Duration.ofHours(1), Duration.ofHours(1));
        try (MigrateLocker holders = fixed(Phase.MODERN);
                MigrateLocker waiters = MigrateLocker.builder(redis).phase(Phase.MODERN).backoff(slow).build()) {
            long published = calls("publish");
            holders.tryLock("quiet", Duration.ofMinutes(1)).unlock();
            assertEquals(published, calls("publish"), "nobody waits: the release publishes nothing");

            java.util.Random rng = new java.util.Random(1);
            for (int i = 0; i < 100; i++) {
                String key = "woken-" + i;
                Lock held = holders.tryLock(key, Duration.ofMinutes(1));
                long delayMicros = rng.nextInt(2000);
                Thread thread = new Thread(() -> {
                    try {
                        TimeUnit.MICROSECONDS.sleep(delayMicros);
                    } catch (InterruptedException e) {
                        return;
                    }
                    held.unlock();
                });
                thread.start();
                Lock next;
                try {
                    next = waiters.lock(key, Duration.ofMinutes(1), Duration.ofSeconds(20));
                } catch (NotObtainedException e) {
                    throw new AssertionError("round " + i + " (release after " + delayMicros
                            + " µs): the waiter missed the release", e);
                } finally {
                    thread.join();
                }
                assertTrue(next.isHeld());
                next.unlock();
            }
            assertTrue(calls("publish") > published, "some releases found the waiter subscribed and published");
        }
    }

    @Test
    void aLegacyOnlyHolderBlocksAndIsSighted() throws Exception {
        srv.setPhase("ns1", "", Phase.DUAL_WRITE, "init");
        Lock legacy = LegacyLocker.builder(redis).build().tryLock("orders", Duration.ofSeconds(30));
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("ns1").build()) {
            assertThrows(NotObtainedException.class, () -> locker.tryLock("orders", Duration.ofSeconds(1)));
            Map<byte[], byte[]> sighting = srv.raw.hgetall(b("lockbridge:{ns1}:legacy-sighting"));
            assertEquals(3, sighting.size(), "at, key, count");
            assertEquals("1",
                    new String(srv.raw.hget(b("lockbridge:{ns1}:legacy-sighting"), b("count")),
                    StandardCharsets.UTF_8));
        }
        legacy.unlock();
    }

    /**
     * A sighting whose write failed (the sighting key holds a string: WRONGTYPE) is recorded at the next meeting, even
     * within the second in which a locker records at most one: else the controller would see no legacy locker.
     */
    @Test
    void faultFailedSightingIsRecordedAtTheNextMeeting() throws Exception {
        srv.setPhase("nsfail", "", Phase.DUAL_WRITE, "init");
        byte[] sighting = b("lockbridge:{nsfail}:legacy-sighting");
        Lock legacy = LegacyLocker.builder(redis).build().tryLock("invoices", Duration.ofSeconds(30));
        try (MigrateLocker m = MigrateLocker.builder(redis).followPhase("nsfail").build()) {
            srv.raw.set(sighting, b("not a hash"));
            assertThrows(NotObtainedException.class, () -> m.tryLock("invoices", Duration.ofSeconds(1)));
            srv.raw.del(sighting);
            assertThrows(NotObtainedException.class, () -> m.tryLock("invoices", Duration.ofSeconds(1)));
            assertEquals("invoices", new String(srv.raw.hget(sighting, b("key")), StandardCharsets.UTF_8),
                    "the next meeting records the sighting the failed write dropped");
            assertEquals("1", new String(srv.raw.hget(sighting, b("count")), StandardCharsets.UTF_8));
        }
        legacy.unlock();
    }

    @Test
    void followsThePhaseOneStepAtATimeAndHeartbeatsAsGo() throws Exception {
        srv.setPhase("ns2", "", Phase.LEGACY, "init");
        String id;
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("ns2").phaseInterval(Duration.ofMillis(50))
                .build()) {
            id = locker.clientId();
            assertEquals(Phase.LEGACY, locker.phase());
            String entry = new String(srv.raw.hget(b("lockbridge:{ns2}:clients"), b(locker.clientId())),
                    StandardCharsets.UTF_8);
            @SuppressWarnings("unchecked")
            Map<String, Object> parsed = (Map<String, Object>) Json.parse(entry);
            assertEquals(3L, parsed.get("v"));
            assertEquals(locker.clientId(), parsed.get("id"));
            assertEquals("legacy", parsed.get("phase"));
            assertEquals(ProcessHandle.current().pid(), parsed.get("pid"));
            assertTrue((Long) parsed.get("ns_init") > 0 && (Long) parsed.get("gen") > 0, entry);
            assertNotNull(srv.raw.zscore(b("lockbridge:{ns2}:clients-expiry"), b(locker.clientId())));

            Lock held = locker.tryLock("orders", Duration.ofSeconds(5));
            assertEquals(Phase.LEGACY, held.phase());
            srv.setPhase("ns2", "legacy", Phase.DUAL_WRITE, "step");
            eventually("the locker runs dual-write", () -> locker.phase() == Phase.DUAL_WRITE);
            assertTrue(held.isHeld(), "legacy and dual-write exclude each other: the legacy lock stands");
            Lock dualWrite = locker.tryLock("orders2", Duration.ofSeconds(5));
            assertEquals(Phase.DUAL_WRITE, dualWrite.phase());
            assertNotNull(srv.get("orders2"));
            assertNotNull(srv.get("{orders2}:modern"));
            srv.setPhase("ns2", "dual-write", Phase.DUAL_READ, "step");
            eventually("the locker runs dual-read", () -> locker.phase() == Phase.DUAL_READ);
            assertTrue(dualWrite.isHeld(), "dual-write and dual-read exclude each other");
            assertFalse(held.isHeld(), "a legacy lock is not excluded by dual-read lockers: ended");
            ExecutionException lost = assertThrows(ExecutionException.class, () -> held.done().get());
            assertTrue(lost.getCause() instanceof LostException, lost.getCause().toString());
            dualWrite.unlock();
            Lock dualRead = locker.tryLock("orders2", Duration.ofSeconds(5));
            assertEquals(Phase.DUAL_READ, dualRead.phase());
            assertNull(srv.get("orders2"));
            dualRead.unlock();
        }
        assertNull(srv.raw.hget(b("lockbridge:{ns2}:clients"), b("x")));
        if (srv.raw.hlen(b("lockbridge:{ns2}:clients")) != 0) {
            // A heartbeat got no reply in time (50 ms, on a loaded machine):
            // close then leaves the entry dead, never live, for the one that
            // may still land cannot revive it.
            Double expiry = srv.raw.zscore(b("lockbridge:{ns2}:clients-expiry"), b(id));
            assertNotNull(expiry, "an entry left by close has an expiry");
            assertTrue(expiry <= serverMillis() + 50, "close removed the entry, or left it dead: expiry " + expiry);
        }
    }

    /** The server's clock, in ms. */
    long serverMillis() {
        java.util.List<byte[]> time = srv.raw.time();
        return Long.parseLong(new String(time.get(0), StandardCharsets.UTF_8)) * 1000
                + Long.parseLong(new String(time.get(1), StandardCharsets.UTF_8)) / 1000;
    }

    @Test
    void refusesWhenThePhaseCannotBeTrusted() throws Exception {
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("ns3").phaseInterval(Duration.ofMillis(50))
                .build()) {
            PhaseUnknownException refused = assertThrows(PhaseUnknownException.class,
                    () -> locker.tryLock("orders", Duration.ofSeconds(1)));
            assertEquals(PhaseUnknownException.Reason.UNINITIALIZED, refused.reason());
            assertEquals(0, srv.raw.exists(b("orders"), b("{orders}:modern")));
        }
        srv.raw.flushall();
        srv.setPhase("ns3", "", Phase.DUAL_READ, "init");
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("ns3").phaseInterval(Duration.ofMillis(50))
                .build()) {
            locker.tryLock("orders", Duration.ofSeconds(1)).unlock();
            srv.raw.del(b("lockbridge:{ns3}:phase"));
            eventually("the locker refuses", () -> {
                try {
                    locker.tryLock("orders", Duration.ofSeconds(1)).unlock();
                    return false;
                } catch (PhaseUnknownException e) {
                    return e.reason() == PhaseUnknownException.Reason.LOST;
                }
            });
            srv.raw.set(b("lockbridge:{ns3}:phase"), b("dual read"));
            PhaseUnknownException refused = assertThrows(PhaseUnknownException.class,
                    () -> locker.tryLock("orders", Duration.ofSeconds(1)));
            assertEquals(PhaseUnknownException.Reason.UNREADABLE, refused.reason());
            assertEquals(0, srv.raw.exists(b("orders"), b("{orders}:modern")), "fail closed: nothing written");
        }
    }

    @Test
    void theWatchdogRefreshesAndSignalsALostLock() throws Exception {
        try (MigrateLocker locker = MigrateLocker.builder(redis).phase(Phase.DUAL_WRITE).autoRefresh(true).build()) {
            Lock lock = locker.tryLock("orders", Duration.ofMillis(1500));
            long firstExpiry = Long.parseLong(srv.get("orders"));
            eventually("refreshed (every ttl/3)", () -> Long.parseLong(srv.get("orders")) > firstExpiry + 400);
            assertTrue(lock.isHeld());
            srv.raw.del(b("{orders}:modern")); // an operator deletes it
            ExecutionException lost = assertThrows(ExecutionException.class,
                    () -> lock.done().get(10, TimeUnit.SECONDS));
            assertTrue(lost.getCause() instanceof LostException, lost.getCause().toString());
            NotHeldException notHeld = assertThrows(NotHeldException.class, lock::unlock);
            assertEquals(NotHeldException.Reason.ENDED, notHeld.reason());
        }
    }

    @Test
    void jdkProfileKeysAndModernKeyShareASlot() {
        LegacyProfile profile = LegacyProfile.defaults().keyCodec(KeyCodec.JDK_STRING)
                .valueCodec(ValueCodec.JDK_STRING);
        try (MigrateLocker locker = MigrateLocker.builder(redis).legacy(profile).phase(Phase.DUAL_WRITE).build()) {
            Lock lock = locker.tryLock("lock:order", Duration.ofSeconds(5));
            byte[] legacyKey = KeyCodec.JDK_STRING.encode("lock:order");
            assertNotNull(ValueCodec.JDK_STRING.decode(srv.raw.get(legacyKey)));
            byte[] modernKey = locker.keys("lock:order").get(1);
            assertEquals(Keys.slot(legacyKey), Keys.slot(modernKey));
            assertNotNull(srv.raw.get(modernKey));
            lock.unlock();
            assertEquals(0, srv.raw.dbsize());
        }
    }

    /** In the legacy phase a release publishes nothing; the same locker's release still wakes its waiter at once. */
    @Test
    void aLegacyPhaseReleaseByTheSameLockerWakesItsWaiter() throws Exception {
        try (MigrateLocker locker = MigrateLocker.builder(redis).phase(Phase.LEGACY)
                .backoff(Backoff.exponential(Duration.ofSeconds(40), Duration.ofSeconds(40))) .build()) {
            Lock held = locker.tryLock("woken", Duration.ofSeconds(60));
            java.util.concurrent.CompletableFuture<Lock> waiting = ModernLockerTest.asyncGet(
                    () -> locker.lock("woken", Duration.ofSeconds(60), Duration.ofSeconds(60)));
            Thread.sleep(300); // it missed and sleeps its backoff
            held.unlock();
            Lock got = waiting.get(15, java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(got.isHeld(), "woken by the release, not by its backoff");
            got.unlock();
        }
    }
}
