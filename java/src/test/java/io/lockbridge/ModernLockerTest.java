package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

/**
 * ModernLocker against a real redis-server: the bytes Go's modern.Locker
 * writes (key, token shape, PX, fence counter, release notice), bad input,
 * the loss signal, fencing across a restart without persistence, and
 * unknown outcomes never sent again.
 */
class ModernLockerTest extends ServerTest {
    static String s(byte[] v) {
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }

    /** The server's TIME in µs. */
    static long serverMicros() {
        List<byte[]> t = srv.raw.time();
        return Long.parseLong(s(t.get(0))) * 1_000_000L + Long.parseLong(s(t.get(1)));
    }

    /** EVAL and EVALSHA calls the server ran so far (INFO commandstats). */
    static long scriptCalls() {
        long n = 0;
        for (String line : srv.raw.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:")) {
                n += Long.parseLong(line.replaceAll("^cmdstat_\\w+:calls=(\\d+),.*", "$1"));
            }
        }
        return n;
    }

    /** Runs op on a thread of its own. */
    static <T> CompletableFuture<T> asyncGet(java.util.function.Supplier<T> op) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(op.get());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, "modern-test");
        t.setDaemon(true);
        t.start();
        return f;
    }

    @Test
    void storesWhatGoStores() {
        try (ModernLocker m = ModernLocker.builder(redis).build()) {
            Lock lock = m.tryLock("orders", Duration.ofMillis(1500));
            String token = srv.get("orders");
            assertTrue(token.matches("[A-Za-z0-9_-]{22}"), "16 random bytes, unpadded base64url (Go's NewToken): " + token);
            long pttl = srv.raw.pttl(b("orders"));
            assertTrue(pttl > 1300 && pttl <= 1500, "PX 1500: " + pttl);
            assertEquals("string", srv.raw.type(b("orders")));
            assertEquals(1L, srv.raw.dbsize(), "nothing but the key");
            assertEquals(Phase.MODERN, lock.phase());
            assertEquals(0, lock.fence(), "no fence without fencing");
            assertTrue(lock.isHeld());
            lock.unlock();
            assertNull(srv.raw.get(b("orders")));
            assertTrue(lock.done().isDone() && !lock.done().isCompletedExceptionally());
        }
    }

    @Test
    void sub_millisecondLeaseIsTruncatedAsGo() {
        try (ModernLocker m = ModernLocker.builder(redis).build()) {
            m.tryLock("trunc", Duration.ofNanos(2_999_999_999L));
            long pttl = srv.raw.pttl(b("trunc"));
            assertTrue(pttl > 2900 && pttl <= 2999, "PX 2999: " + pttl);
        }
    }

    @Test
    void aMissLearnsTheHoldersPttl() {
        try (ModernLocker m = ModernLocker.builder(redis).build()) {
            m.tryLock("held", Duration.ofSeconds(20));
            NotObtainedException e = assertThrows(NotObtainedException.class, () -> m.tryLock("held", Duration.ofSeconds(1)));
            assertTrue(e.holderLeft().toMillis() > 19_000 && e.holderLeft().toMillis() <= 20_000, "" + e.holderLeft());
            srv.raw.set(b("forever"), b("someone"));
            e = assertThrows(NotObtainedException.class, () -> m.tryLock("forever", Duration.ofSeconds(1)));
            assertEquals(Duration.ZERO, e.holderLeft(), "no expiry: the backoff decides");
            assertEquals("someone", srv.get("forever"), "untouched");
        }
    }

    @Test
    void derivedKeyIsMigratesModernKey() {
        LegacyProfile p = LegacyProfile.defaults();
        try (ModernLocker m = ModernLocker.builder(redis).derivedFrom(p).fencing(true).build();
                MigrateLocker mig = MigrateLocker.builder(redis).legacy(p).phase(Phase.MODERN).build()) {
            assertEquals("{orders}:modern", s(m.key("orders")));
            assertEquals("{tenant-1}:orders:modern", s(m.key("{tenant-1}:orders")));
            Lock lock = m.tryLock("orders", Duration.ofSeconds(5));
            assertTrue(srv.get("{orders}:modern").matches("[A-Za-z0-9_-]{22}"));
            assertEquals(Long.toString(lock.fence()), srv.get("{orders}:modern:fence"), "the fence counter in the modern key's slot");
            assertThrows(NotObtainedException.class, () -> mig.tryLock("orders", Duration.ofSeconds(1)), "the same lock as a migrate lock in modern");
            lock.unlock();
            mig.tryLock("orders", Duration.ofSeconds(1)).unlock();
        }
        try (ModernLocker plain = ModernLocker.builder(redis).build()) {
            assertEquals("orders", s(plain.key("orders")));
        }
    }

    @Test
    void fencingAsGo() {
        try (ModernLocker m = ModernLocker.builder(redis).fencing(true).build()) {
            long before = serverMicros();
            Lock a = m.tryLock("fenced", Duration.ofSeconds(5));
            assertTrue(a.fence() >= before, "floored at the server's TIME in µs: " + a.fence() + " < " + before);
            assertEquals(Long.toString(a.fence()), srv.get("{fenced}:fence"), "the counter {key}:fence holds it");
            assertEquals(-1, srv.raw.pttl(b("{fenced}:fence")), "the counter never expires");
            assertThrows(NotObtainedException.class, () -> m.tryLock("fenced", Duration.ofSeconds(1)));
            assertEquals(Long.toString(a.fence()), srv.get("{fenced}:fence"), "a miss hands out no fence");
            a.unlock();
            // A counter ahead of the clock: counter + 1.
            long ahead = serverMicros() + 3_600_000_000L;
            srv.raw.set(b("{fenced}:fence"), b(Long.toString(ahead)));
            Lock c = m.tryLock("fenced", Duration.ofSeconds(5));
            assertEquals(ahead + 1, c.fence());
            c.unlock();
            // A tagged key: key + ":fence".
            Lock t = m.tryLock("{tag}x", Duration.ofSeconds(5));
            assertEquals(Long.toString(t.fence()), srv.get("{tag}x:fence"));
            t.unlock();
            // An unusable counter: FENCE error, nothing written.
            srv.raw.set(b("{bad}:fence"), b("nope"));
            RedisErrorException e = assertThrows(RedisErrorException.class, () -> m.tryLock("bad", Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("FENCE"), e.getMessage());
            assertNull(srv.raw.get(b("bad")), "nothing written");
        }
    }

    @Test
    void fencesIncreaseAcrossARestartWithoutPersistence() throws Exception {
        try (ModernLocker m = ModernLocker.builder(redis).fencing(true).build()) {
            long last = 0;
            for (int i = 0; i < 5; i++) {
                Lock l = m.tryLock("restart", Duration.ofSeconds(5));
                assertTrue(l.fence() > last, l.fence() + " after " + last);
                last = l.fence();
                l.unlock();
            }
            srv.restart();
            assertNull(srv.raw.get(b("{restart}:fence")), "the counter is gone with the restart");
            Lock l = null;
            for (int i = 0; l == null; i++) { // the first command finds the old connection dropped
                try {
                    l = m.tryLock("restart", Duration.ofSeconds(5));
                } catch (RedisUnavailableException | UnknownOutcomeException e) {
                    if (i > 5) {
                        throw e;
                    }
                } catch (NotObtainedException e) {
                    throw new AssertionError("the restarted server is empty", e);
                }
            }
            assertTrue(l.fence() > last, "after the restart: " + l.fence() + " after " + last);
            l.unlock();
        }
    }

    @Test
    void releasePublishesTheNoticeGoListensFor() throws Exception {
        RedisClient c = RedisClient.create(srv.uri());
        try (ModernLocker m = ModernLocker.builder(redis).build();
                StatefulRedisPubSubConnection<String, String> ps = c.connectPubSub()) {
            CompletableFuture<String> got = new CompletableFuture<>();
            ps.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    got.complete(channel + " " + message);
                }
            });
            ps.sync().subscribe("{notice}:released");
            m.tryLock("notice", Duration.ofSeconds(5)).unlock();
            assertEquals("{notice}:released released", got.get(5, TimeUnit.SECONDS));
        } finally {
            c.shutdown();
        }
    }

    @Test
    void aWaiterWakesOnTheReleaseNotNextPoll() throws Exception {
        // A backoff of 5 s: only the notice can wake the waiter within 1 s.
        try (ModernLocker holder = ModernLocker.builder(redis).build();
                ModernLocker waiter = ModernLocker.builder(redis).backoff(Backoff.exponential(Duration.ofSeconds(5), Duration.ofSeconds(5))).build()) {
            Lock h = holder.tryLock("wake", Duration.ofSeconds(30));
            CompletableFuture<Lock> w = asyncGet(() -> waiter.lock("wake", Duration.ofSeconds(5), Duration.ofSeconds(20)));
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (srv.raw.pubsubNumsub(b("{wake}:released")).getOrDefault(b("{wake}:released"), 0L) == 0 && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            Thread.sleep(50);
            long t0 = System.nanoTime();
            h.unlock();
            Lock got = w.get(10, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 1000, "woken by the notice in " + ms + " ms");
            got.unlock();
        }
    }

    @Test
    void badInput() {
        assertThrows(InvalidException.class, () -> ModernLocker.builder(null));
        try (ModernLocker m = ModernLocker.builder(redis).fencing(true).build()) {
            assertThrows(InvalidException.class, () -> m.tryLock("", Duration.ofSeconds(1)));
            assertThrows(InvalidException.class, () -> m.tryLock(null, Duration.ofSeconds(1)));
            assertThrows(InvalidException.class, () -> m.tryLock("k", Duration.ZERO));
            assertThrows(InvalidException.class, () -> m.tryLock("k", Duration.ofNanos(999_999)));
            assertThrows(InvalidException.class, () -> m.tryLock("k", null));
            assertThrows(InvalidException.class, () -> m.tryLock("k", Duration.ofMillis((1L << 40) + 1)));
            assertThrows(InvalidException.class, () -> m.lock("k", Duration.ofSeconds(1), Duration.ofSeconds(-1)));
            assertThrows(InvalidException.class, () -> m.tryLock("x".repeat((64 << 10) + 1), Duration.ofSeconds(1)));
            // An untagged key holding '}' whose "{key}:fence" leaves its slot: no fence counter possible.
            String odd = null;
            for (int i = 0; odd == null; i++) {
                String k = "a}" + i;
                if (Keys.companion(b(k), ModernLocker.FENCE_SUFFIX) == null) {
                    odd = k;
                }
            }
            String oddKey = odd;
            assertThrows(InvalidException.class, () -> m.tryLock(oddKey, Duration.ofSeconds(1)));
            srv.raw.lpush(b("list"), b("x"));
            RedisErrorException e = assertThrows(RedisErrorException.class, () -> m.tryLock("list", Duration.ofSeconds(1)));
            assertTrue(e.getMessage().contains("WRONGTYPE"), e.getMessage());
            assertEquals(1L, srv.raw.dbsize(), "nothing written but the list");
            Lock l = m.tryLock("k", Duration.ofSeconds(5));
            assertThrows(InvalidException.class, () -> l.refresh(Duration.ofMillis((1L << 40) + 1)));
            assertTrue(l.isHeld(), "a refused refresh changes nothing");
            l.unlock();
            assertThrows(NotHeldException.class, l::unlock);
        }
        ModernLocker closed = ModernLocker.builder(redis).build();
        closed.close();
        assertThrows(InvalidException.class, () -> closed.tryLock("k", Duration.ofSeconds(1)));
    }

    @Test
    void notHeldVerdicts() throws Exception {
        try (ModernLocker m = ModernLocker.builder(redis).build()) {
            Lock a = m.tryLock("gone", Duration.ofSeconds(5));
            srv.raw.del(b("gone"));
            NotHeldException e = assertThrows(NotHeldException.class, a::unlock);
            assertEquals(NotHeldException.Reason.GONE, e.reason());
            assertInstanceOf(LostException.class, LossSignalFaultTest.cause(a.done()));

            Lock b = m.tryLock("taken", Duration.ofSeconds(5));
            srv.raw.set(b("taken"), b("other"));
            e = assertThrows(NotHeldException.class, () -> b.refresh(Duration.ofSeconds(5)));
            assertEquals(NotHeldException.Reason.TAKEN, e.reason());
            assertEquals("other", srv.get("taken"), "untouched");
            assertFalse(b.isHeld());
        }
    }

    @Test
    void withoutTheWatchdogTheLockEndsAtItsLease() throws Exception {
        try (ModernLocker m = ModernLocker.builder(redis).build()) {
            long t0 = System.nanoTime();
            Lock l = m.tryLock("lease", Duration.ofMillis(600));
            AtomicLong done = LossSignalFaultTest.doneAt(l);
            LossSignalFaultTest.sleepUntil(t0 + TimeUnit.MILLISECONDS.toNanos(600));
            LostException e = LossSignalFaultTest.assertLostNow(l);
            assertTrue(e.getMessage().contains("lease ran out"), e.getMessage());
            assertTrue(done.get() - t0 <= TimeUnit.MILLISECONDS.toNanos(600 - 50 + 20), "at ttl - ttl/12: " + (done.get() - t0) / 1_000_000 + " ms");
        }
    }

    @Test
    void theWatchdogKeepsItAndItsRefreshIsGos() throws Exception {
        try (ModernLocker m = ModernLocker.builder(redis).autoRefresh(true).build()) {
            Lock l = m.tryLock("dog", Duration.ofMillis(600));
            Thread.sleep(2000);
            assertTrue(l.isHeld(), "refreshed every ttl/3");
            assertFalse(l.done().isDone());
            long pttl = srv.raw.pttl(b("dog"));
            assertTrue(pttl > 0 && pttl <= 600, "PEXPIRE 600: " + pttl);
            l.unlock();
            assertNull(srv.raw.get(b("dog")));
        }
    }

    @Test
    void faultStalledRefreshSignalsTheLossByTheLeaseEnd() throws Exception {
        try (Redis r = Redis.of(srv.uri(), Duration.ofSeconds(3));
                ModernLocker m = ModernLocker.builder(r).autoRefresh(true).build()) {
            Lock warm = m.tryLock("warm", Duration.ofSeconds(5));
            warm.refresh(Duration.ofSeconds(5));
            warm.unlock();
            long t0 = System.nanoTime();
            Lock l = m.tryLock("stall", Duration.ofMillis(900));
            srv.signal("STOP");
            try {
                LossSignalFaultTest.sleepUntil(t0 + TimeUnit.MILLISECONDS.toNanos(900));
                LostException e = LossSignalFaultTest.assertLostNow(l);
                assertTrue(e.getMessage().contains("lost"), e.getMessage());
            } finally {
                srv.signal("CONT");
            }
        }
    }

    /** A release whose reply is lost: UnknownOutcomeException, the lock counts as lost, and the release ran once — never sent again. */
    @Test
    void faultLostReleaseReplyIsUnknownAndNotResent() throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis pr = Redis.of(proxy.uri(), Duration.ofMillis(800));
                ModernLocker m = ModernLocker.builder(pr).build()) {
            m.tryLock("warm", Duration.ofSeconds(5)).unlock(); // the scripts are loaded: one EVALSHA each below
            Lock l = m.tryLock("unknown", Duration.ofSeconds(10));
            long calls = scriptCalls();
            proxy.dropReplies(true);
            assertThrows(UnknownOutcomeException.class, l::unlock);
            proxy.dropReplies(false);
            Thread.sleep(200);
            assertEquals(calls + 1, scriptCalls(), "the release ran once, and was not sent again");
            assertNull(srv.raw.get(b("unknown")), "it ran");
            assertInstanceOf(LostException.class, LossSignalFaultTest.cause(l.done()));
            assertThrows(NotHeldException.class, l::unlock, "an ended lock sends nothing");
            assertEquals(calls + 1, scriptCalls());
        }
    }

    /** Calls of command (lower case) the server ran so far (INFO commandstats). */
    static long calls(String command) {
        for (String line : srv.raw.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                return Long.parseLong(line.replaceAll("^cmdstat_\\w+:calls=(\\d+),.*", "$1"));
            }
        }
        return 0;
    }

    /**
     * After a locker's first attempt (the script: an ACL without script
     * rights refuses it before anything is written), an uncontended cycle
     * sends what a bare lock sends, as Go's: SET NX PX and the release
     * script; a miss reads the holder's PTTL with modern/ttl.lua.
     */
    @Test
    void anUncontendedCycleIsSetNxPxAndTheReleaseScript() throws Exception {
        try (ModernLocker m = ModernLocker.builder(redis).build(); ModernLocker other = ModernLocker.builder(redis).build()) {
            long scripts = scriptCalls();
            long sets = calls("set");
            m.tryLock("plain", Duration.ofSeconds(5)).unlock();
            assertEquals(scripts + 2, scriptCalls(), "the first acquire is the script");
            assertEquals(sets + 1, calls("set"), "the script's SET (commandstats counts a script's commands too)");
            m.tryLock("plain", Duration.ofSeconds(5)).unlock();
            assertEquals(scripts + 3, scriptCalls(), "then only the release is a script");
            assertEquals(sets + 2, calls("set"), "and the acquire SET NX PX");
            Lock held = m.tryLock("plain", Duration.ofSeconds(20));
            assertEquals(22, s(srv.raw.get(b("plain"))).length(), "a 16-byte token, base64url");
            assertTrue(srv.raw.pttl(b("plain")) > 19_000);
            other.tryLock("w", Duration.ofSeconds(1)).unlock(); // other's first attempt: the script
            scripts = scriptCalls();
            sets = calls("set");
            NotObtainedException e = assertThrows(NotObtainedException.class, () -> other.tryLock("plain", Duration.ofSeconds(1)));
            assertTrue(e.holderLeft().toMillis() > 19_000, "" + e.holderLeft());
            assertEquals(sets + 1, calls("set"));
            assertEquals(scripts + 1, scriptCalls(), "the miss read the PTTL");
            CompletableFuture<Lock> w = asyncGet(() -> other.lock("plain", Duration.ofSeconds(5), Duration.ofSeconds(10)));
            Thread.sleep(300);
            held.unlock();
            w.get(10, TimeUnit.SECONDS).unlock();
        }
    }

    /** The plain SET's reply is lost: the key is read back (a GET, no resend), and the lock is held. */
    @Test
    void faultLostSetReplyIsReadBackNotResent() throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis pr = Redis.of(proxy.uri(), Duration.ofMillis(800));
                ModernLocker m = ModernLocker.builder(pr).build()) {
            m.tryLock("warm", Duration.ofSeconds(5)).unlock(); // the first attempt is the script; the next ones SET
            long sets = calls("set");
            proxy.dropReplies(true);
            CompletableFuture<Lock> f = asyncGet(() -> m.tryLock("setback", Duration.ofSeconds(10)));
            Thread.sleep(300); // the SET ran, its reply thrown away
            proxy.dropReplies(false); // the read back, on a new connection after the timeout, gets its replies
            Lock l = f.get(10, TimeUnit.SECONDS);
            assertEquals(sets + 1, calls("set"), "the SET ran once");
            assertTrue(l.isHeld());
            l.unlock();
            assertEquals(0L, srv.raw.exists(b("setback")));
        }
    }

    /** An acquire whose reply is lost is read back (GETs, no resend): held, with the fence its acquire handed out. */
    @Test
    void faultLostAcquireReplyIsReadBackNotResent() throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis pr = Redis.of(proxy.uri(), Duration.ofMillis(800));
                ModernLocker m = ModernLocker.builder(pr).fencing(true).build()) {
            m.tryLock("warm", Duration.ofSeconds(5)).unlock();
            long calls = scriptCalls();
            proxy.dropReplies(true);
            CompletableFuture<Lock> f = asyncGet(() -> m.tryLock("readback", Duration.ofSeconds(10)));
            Thread.sleep(300); // the acquire ran, its reply thrown away
            proxy.dropReplies(false); // the read back, on a new connection after the timeout, gets its replies
            Lock l = f.get(10, TimeUnit.SECONDS);
            assertEquals(calls + 1, scriptCalls(), "the acquire ran once");
            assertTrue(l.isHeld());
            assertEquals(srv.get("{readback}:fence"), Long.toString(l.fence()), "the fence of our acquire");
            assertTrue(l.fence() > 0);
            l.unlock();
            assertEquals(0L, srv.raw.exists(b("readback")));
        }
    }

    @Test
    void interoperatesWithTheServerBytesOfAnotherHolder() {
        // A lock Go took (any token in the key): Java waits it out, and cannot release it.
        try (ModernLocker m = ModernLocker.builder(redis).build()) {
            srv.raw.psetex(b("go"), 300, b("gotoken-AAAAAAAAAAAAAAAA"));
            long t0 = System.nanoTime();
            Lock l = m.lock("go", Duration.ofSeconds(5), Duration.ofSeconds(5));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 1000, "never sleeps past the holder's PTTL: " + ms + " ms");
            assertArrayEquals(b(srv.get("go")), srv.raw.get(b("go")));
            l.unlock();
        }
    }
}
