package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** LegacyLocker on a real redis-server: the bytes it writes, takeover, foreign values, the owner window. */
class LegacyLockerTest extends ServerTest {
    static Clock at(long millis) {
        return Clock.fixed(Instant.ofEpochMilli(millis), ZoneOffset.UTC);
    }

    @Test
    void writesWhatTheJavaSeedWrites() {
        LegacyLocker locker = LegacyLocker.builder(redis)
                .profile(LegacyProfile.defaults().clock(at(1_700_000_000_000L))).build();
        Lock lock = locker.tryLock("orders", Duration.ofSeconds(60));
        assertEquals("1700000060001", srv.get("orders"));
        assertEquals(-1L, srv.raw.pttl(b("orders")), "no TTL, as Java");
        assertThrows(NotObtainedException.class, () -> locker.tryLock("orders", Duration.ofSeconds(60)));
        // Our clock says 2023: W is long past by the server's clock, which
        // may refuse (never permit) a release.
        NotHeldException notHeld = assertThrows(NotHeldException.class, lock::unlock);
        assertEquals(NotHeldException.Reason.EXPIRED, notHeld.reason());
        assertEquals("1700000060001", srv.get("orders"), "left to expire by its value");
        assertThrows(NotHeldException.class, lock::unlock, "a second unlock");

        srv.raw.flushall();
        Lock now = LegacyLocker.builder(redis).build().tryLock("orders", Duration.ofSeconds(60));
        now.unlock();
        assertNull(srv.get("orders"));
    }

    @Test
    void everyProfileWritesItsCodecsBytes() {
        for (KeyCodec keyCodec : KeyCodec.values()) {
            for (ValueCodec valueCodec : ValueCodec.values()) {
                srv.raw.flushall();
                LegacyProfile profile = LegacyProfile.defaults().keyCodec(keyCodec).valueCodec(valueCodec)
                        .unit(TimeUnit.SECONDS).plusOne(false) .clock(at(1_700_000_000_000L));
                Lock lock = LegacyLocker.builder(redis).profile(profile).build()
                        .tryLock("lock:order", Duration.ofSeconds(30));
                byte[] stored = srv.raw.get(keyCodec.encode("lock:order"));
                assertArrayEquals(valueCodec.encode(1_700_000_030L), stored, keyCodec + "/" + valueCodec);
                long before = System.currentTimeMillis() / 1000;
                Lock live = LegacyLocker.builder(redis).profile(profile.clock(Clock.systemUTC())).build()
                        .tryLock("lock:order2", Duration.ofSeconds(30));
                long after = System.currentTimeMillis() / 1000;
                Long liveExpiry = valueCodec.decode(srv.raw.get(keyCodec.encode("lock:order2")));
                assertTrue(liveExpiry != null && liveExpiry >= before + 30 && liveExpiry <= after + 30,
                        keyCodec + "/" + valueCodec + ": " + liveExpiry);
                live.unlock();
                assertNull(srv.raw.get(keyCodec.encode("lock:order2")), keyCodec + "/" + valueCodec);
            }
        }
    }

    @Test
    void takesOverOnlyAnExpiredValue() {
        long now = System.currentTimeMillis();
        LegacyLocker locker = LegacyLocker.builder(redis).build();
        srv.raw.set(b("orders"), b(Long.toString(now + 60_000)));
        NotObtainedException notObtained = assertThrows(NotObtainedException.class,
                () -> locker.tryLock("orders", Duration.ofSeconds(1)));
        assertTrue(notObtained.holderLeft().toMillis() > 50_000, notObtained.holderLeft().toString());
        srv.raw.set(b("orders"), b(Long.toString(now - 1)));
        Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
        assertTrue(Long.parseLong(srv.get("orders")) > now + 9_000);
        lock.unlock();
    }

    @Test
    void neverTakesOverAForeignValue() {
        LegacyLocker locker = LegacyLocker.builder(redis).build();
        for (String foreign : new String[] {"uuid:123", "1.7E12", "\"1\"", " 1", "1350000060.0"}) {
            srv.raw.set(b("orders"), b(foreign));
            assertThrows(NotObtainedException.class, () -> locker.tryLock("orders", Duration.ofSeconds(1)), foreign);
            assertEquals(foreign, srv.get("orders"));
        }
    }

    @Test
    void releaseLeavesASuccessorsValue() {
        LegacyLocker locker = LegacyLocker.builder(redis).build();
        Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
        // A successor (after our value was removed by hand) writes far outside our window.
        srv.raw.set(b("orders"), b(Long.toString(System.currentTimeMillis() + 600_000)));
        NotHeldException notHeld = assertThrows(NotHeldException.class, lock::unlock);
        assertEquals(NotHeldException.Reason.TAKEN, notHeld.reason());
        assertFalse(lock.isHeld());
        assertTrue(lock.done().isCompletedExceptionally());
        assertTrue(srv.get("orders") != null, "the successor's value stays");
    }

    @Test
    void releaseAfterOurExpiryByOurClockIsRefused() {
        long nowMillis = System.currentTimeMillis();
        LegacyProfile profile = LegacyProfile.defaults().clock(at(nowMillis));
        Lock lock = LegacyLocker.builder(redis).profile(profile).build().tryLock("orders", Duration.ofMillis(100));
        // The same lock, released by a clock past W: the Java rule refuses it.
        LegacyLocker.LegacyLock late = new LegacyLocker.LegacyLock(redis, profile.clock(at(nowMillis + 200)), "orders",
                b("orders"),
                ((LegacyLocker.LegacyLock) lock).expiry(), Duration.ofMillis(100), Phase.LEGACY, System.nanoTime(),
                Duration.ofMillis(100));
        NotHeldException notHeld = assertThrows(NotHeldException.class, late::unlock);
        assertEquals(NotHeldException.Reason.EXPIRED, notHeld.reason());
        assertEquals(Long.toString(nowMillis + 101), srv.get("orders"), "left to expire by its value");
    }

    @Test
    void waitsAndGetsTheLockOnceItExpires() {
        LegacyLocker locker = LegacyLocker.builder(redis).build();
        Lock first = locker.tryLock("orders", Duration.ofMillis(200));
        Lock second = locker.lock("orders", Duration.ofSeconds(5), Duration.ofSeconds(5));
        assertTrue(second.isHeld());
        assertThrows(NotHeldException.class, first::unlock);
        second.unlock();
    }

    @Test
    void badInputIsInvalid() {
        LegacyLocker locker = LegacyLocker.builder(redis).build();
        assertThrows(InvalidException.class, () -> locker.tryLock("", Duration.ofSeconds(1)));
        assertThrows(InvalidException.class, () -> locker.tryLock("x", Duration.ZERO));
        assertThrows(InvalidException.class, () -> LegacyLocker.builder(redis)
                .profile(LegacyProfile.defaults().unit(TimeUnit.SECONDS)).build()
                .tryLock("x", Duration.ofMillis(500)));
        assertThrows(InvalidException.class, () -> LegacyLocker.builder(null));
    }

    /**
     * The legacy lock publishes no release notice, so a waiter polls; but a
     * release by its own locker wakes it at once (here long before its
     * 20-40 s backoff would).
     */
    @Test
    void aReleaseByTheSameLockerWakesItsWaiter() throws Exception {
        LegacyLocker locker = LegacyLocker.builder(redis)
                .backoff(Backoff.exponential(Duration.ofSeconds(40), Duration.ofSeconds(40))).build();
        Lock held = locker.tryLock("woken", Duration.ofSeconds(60));
        java.util.concurrent.CompletableFuture<Lock> waiting = ModernLockerTest.asyncGet(
                () -> locker.lock("woken", Duration.ofSeconds(60), Duration.ofSeconds(60)));
        Thread.sleep(300); // it missed and sleeps its backoff
        held.unlock();
        Lock got = waiting.get(15, java.util.concurrent.TimeUnit.SECONDS);
        assertTrue(got.isHeld(), "woken by the release, not by its backoff");
        got.unlock();
        locker.close();
    }
}
