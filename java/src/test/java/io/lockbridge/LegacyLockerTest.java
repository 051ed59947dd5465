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
    static Clock at(long ms) {
        return Clock.fixed(Instant.ofEpochMilli(ms), ZoneOffset.UTC);
    }

    @Test
    void writesWhatTheJavaSeedWrites() {
        LegacyLocker l = LegacyLocker.builder(redis).profile(LegacyProfile.defaults().clock(at(1_700_000_000_000L))).build();
        Lock lock = l.tryLock("orders", Duration.ofSeconds(60));
        assertEquals("1700000060001", srv.get("orders"));
        assertEquals(-1L, srv.raw.pttl(b("orders")), "no TTL, as Java");
        assertThrows(NotObtainedException.class, () -> l.tryLock("orders", Duration.ofSeconds(60)));
        // Our clock says 2023: W is long past by the server's clock, which
        // may refuse (never permit) a release.
        NotHeldException e = assertThrows(NotHeldException.class, lock::unlock);
        assertEquals(NotHeldException.Reason.EXPIRED, e.reason());
        assertEquals("1700000060001", srv.get("orders"), "left to expire by its value");
        assertThrows(NotHeldException.class, lock::unlock, "a second unlock");

        srv.raw.flushall();
        Lock now = LegacyLocker.builder(redis).build().tryLock("orders", Duration.ofSeconds(60));
        now.unlock();
        assertNull(srv.get("orders"));
    }

    @Test
    void everyProfileWritesItsCodecsBytes() {
        for (KeyCodec kc : KeyCodec.values()) {
            for (ValueCodec vc : ValueCodec.values()) {
                srv.raw.flushall();
                LegacyProfile p = LegacyProfile.defaults().keyCodec(kc).valueCodec(vc).unit(TimeUnit.SECONDS).plusOne(false)
                        .clock(at(1_700_000_000_000L));
                Lock lock = LegacyLocker.builder(redis).profile(p).build().tryLock("lock:order", Duration.ofSeconds(30));
                byte[] stored = srv.raw.get(kc.encode("lock:order"));
                assertArrayEquals(vc.encode(1_700_000_030L), stored, kc + "/" + vc);
                long before = System.currentTimeMillis() / 1000;
                Lock live = LegacyLocker.builder(redis).profile(p.clock(Clock.systemUTC())).build().tryLock("lock:order2", Duration.ofSeconds(30));
                long after = System.currentTimeMillis() / 1000;
                Long w = vc.decode(srv.raw.get(kc.encode("lock:order2")));
                assertTrue(w != null && w >= before + 30 && w <= after + 30, kc + "/" + vc + ": " + w);
                live.unlock();
                assertNull(srv.raw.get(kc.encode("lock:order2")), kc + "/" + vc);
            }
        }
    }

    @Test
    void takesOverOnlyAnExpiredValue() {
        long now = System.currentTimeMillis();
        LegacyLocker l = LegacyLocker.builder(redis).build();
        srv.raw.set(b("orders"), b(Long.toString(now + 60_000)));
        NotObtainedException e = assertThrows(NotObtainedException.class, () -> l.tryLock("orders", Duration.ofSeconds(1)));
        assertTrue(e.holderLeft().toMillis() > 50_000, e.holderLeft().toString());
        srv.raw.set(b("orders"), b(Long.toString(now - 1)));
        Lock lock = l.tryLock("orders", Duration.ofSeconds(10));
        assertTrue(Long.parseLong(srv.get("orders")) > now + 9_000);
        lock.unlock();
    }

    @Test
    void neverTakesOverAForeignValue() {
        LegacyLocker l = LegacyLocker.builder(redis).build();
        for (String v : new String[] {"uuid:123", "1.7E12", "\"1\"", " 1", "1350000060.0"}) {
            srv.raw.set(b("orders"), b(v));
            assertThrows(NotObtainedException.class, () -> l.tryLock("orders", Duration.ofSeconds(1)), v);
            assertEquals(v, srv.get("orders"));
        }
    }

    @Test
    void releaseLeavesASuccessorsValue() {
        LegacyLocker l = LegacyLocker.builder(redis).build();
        Lock lock = l.tryLock("orders", Duration.ofSeconds(10));
        // A successor (after our value was removed by hand) writes far outside our window.
        srv.raw.set(b("orders"), b(Long.toString(System.currentTimeMillis() + 600_000)));
        NotHeldException e = assertThrows(NotHeldException.class, lock::unlock);
        assertEquals(NotHeldException.Reason.TAKEN, e.reason());
        assertFalse(lock.isHeld());
        assertTrue(lock.done().isCompletedExceptionally());
        assertTrue(srv.get("orders") != null, "the successor's value stays");
    }

    @Test
    void releaseAfterOurExpiryByOurClockIsRefused() {
        long t0 = System.currentTimeMillis();
        LegacyProfile p = LegacyProfile.defaults().clock(at(t0));
        Lock lock = LegacyLocker.builder(redis).profile(p).build().tryLock("orders", Duration.ofMillis(100));
        // The same lock, released by a clock past W: the Java rule refuses it.
        LegacyLocker.LegacyLock late = new LegacyLocker.LegacyLock(redis, p.clock(at(t0 + 200)), "orders", b("orders"),
                ((LegacyLocker.LegacyLock) lock).expiry(), Duration.ofMillis(100), Phase.LEGACY, System.nanoTime(), Duration.ofMillis(100));
        NotHeldException e = assertThrows(NotHeldException.class, late::unlock);
        assertEquals(NotHeldException.Reason.EXPIRED, e.reason());
        assertEquals(Long.toString(t0 + 101), srv.get("orders"), "left to expire by its value");
    }

    @Test
    void waitsAndGetsTheLockOnceItExpires() {
        LegacyLocker l = LegacyLocker.builder(redis).build();
        Lock first = l.tryLock("orders", Duration.ofMillis(200));
        Lock second = l.lock("orders", Duration.ofSeconds(5), Duration.ofSeconds(5));
        assertTrue(second.isHeld());
        assertThrows(NotHeldException.class, first::unlock);
        second.unlock();
    }

    @Test
    void badInputIsInvalid() {
        LegacyLocker l = LegacyLocker.builder(redis).build();
        assertThrows(InvalidException.class, () -> l.tryLock("", Duration.ofSeconds(1)));
        assertThrows(InvalidException.class, () -> l.tryLock("x", Duration.ZERO));
        assertThrows(InvalidException.class, () -> LegacyLocker.builder(redis).profile(LegacyProfile.defaults().unit(TimeUnit.SECONDS)).build()
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
        LegacyLocker l = LegacyLocker.builder(redis).backoff(Backoff.exponential(Duration.ofSeconds(40), Duration.ofSeconds(40))).build();
        Lock held = l.tryLock("woken", Duration.ofSeconds(60));
        java.util.concurrent.CompletableFuture<Lock> w = ModernLockerTest.asyncGet(() -> l.lock("woken", Duration.ofSeconds(60), Duration.ofSeconds(60)));
        Thread.sleep(300); // it missed and sleeps its backoff
        held.unlock();
        Lock got = w.get(15, java.util.concurrent.TimeUnit.SECONDS);
        assertTrue(got.isHeld(), "woken by the release, not by its backoff");
        got.unlock();
        l.close();
    }
}
