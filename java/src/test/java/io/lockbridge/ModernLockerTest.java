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
    static String s(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    /** The server's TIME in µs. */
    static long serverMicros() {
        List<byte[]> time = srv.raw.time();
        return Long.parseLong(s(time.get(0))) * 1_000_000L + Long.parseLong(s(time.get(1)));
    }

    /** EVAL and EVALSHA calls the server ran so far (INFO commandstats). */
    static long scriptCalls() {
        long total = 0;
        for (String line : srv.raw.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:")) {
                total += Long.parseLong(line.replaceAll("^cmdstat_\\w+:calls=(\\d+),.*", "$1"));
            }
        }
        return total;
    }

    /** Runs task on a thread of its own. */
    static <T> CompletableFuture<T> asyncGet(java.util.function.Supplier<T> task) {
        CompletableFuture<T> future = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                future.complete(task.get());
            } catch (Throwable e) {
                future.completeExceptionally(e);
            }
        }, "modern-test");
        thread.setDaemon(true);
        thread.start();
        return future;
    }

    @Test
    void storesWhatGoStores() {
        try (ModernLocker locker = ModernLocker.builder(redis).build()) {
            Lock lock = locker.tryLock("orders", Duration.ofMillis(1500));
            String token = srv.get("orders");
            assertTrue(token.matches("[A-Za-z0-9_-]{22}"), "16 random bytes, unpadded base64url (Go's NewToken): "
                    + token);
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
        try (ModernLocker locker = ModernLocker.builder(redis).build()) {
            locker.tryLock("trunc", Duration.ofNanos(2_999_999_999L));
            long pttl = srv.raw.pttl(b("trunc"));
            assertTrue(pttl > 2900 && pttl <= 2999, "PX 2999: " + pttl);
        }
    }

    @Test
    void aMissLearnsTheHoldersPttl() {
        try (ModernLocker locker = ModernLocker.builder(redis).build()) {
            locker.tryLock("held", Duration.ofSeconds(20));
            NotObtainedException notObtained = assertThrows(NotObtainedException.class,
                    () -> locker.tryLock("held", Duration.ofSeconds(1)));
            assertTrue(notObtained.holderLeft().toMillis() > 19_000 && notObtained.holderLeft().toMillis() <= 20_000,
                    "" + notObtained.holderLeft());
            srv.raw.set(b("forever"), b("someone"));
            notObtained = assertThrows(NotObtainedException.class,
                    () -> locker.tryLock("forever", Duration.ofSeconds(1)));
            assertEquals(Duration.ZERO, notObtained.holderLeft(), "no expiry: the backoff decides");
            assertEquals("someone", srv.get("forever"), "untouched");
        }
    }

    @Test
    void derivedKeyIsMigratesModernKey() {
        LegacyProfile profile = LegacyProfile.defaults();
        try (ModernLocker locker = ModernLocker.builder(redis).derivedFrom(profile).fencing(true).build();
                MigrateLocker mig = MigrateLocker.builder(redis).legacy(profile).phase(Phase.MODERN).build()) {
            assertEquals("{orders}:modern", s(locker.key("orders")));
            assertEquals("{tenant-1}:orders:modern", s(locker.key("{tenant-1}:orders")));
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(5));
            assertTrue(srv.get("{orders}:modern").matches("[A-Za-z0-9_-]{22}"));
            assertEquals(Long.toString(lock.fence()), srv.get("{orders}:modern:fence"),
                    "the fence counter in the modern key's slot");
            assertThrows(NotObtainedException.class, () -> mig.tryLock("orders", Duration.ofSeconds(1)),
                    "the same lock as a migrate lock in modern");
            lock.unlock();
            mig.tryLock("orders", Duration.ofSeconds(1)).unlock();
        }
        try (ModernLocker plain = ModernLocker.builder(redis).build()) {
            assertEquals("orders", s(plain.key("orders")));
        }
    }

    @Test
    void fencingAsGo() {
        try (ModernLocker locker = ModernLocker.builder(redis).fencing(true).build()) {
            long before = serverMicros();
            Lock first = locker.tryLock("fenced", Duration.ofSeconds(5));
            assertTrue(first.fence() >= before, "floored at the server's TIME in µs: " + first.fence() + " < "
                    + before);
            assertEquals(Long.toString(first.fence()), srv.get("{fenced}:fence"), "the counter {key}:fence holds it");
            assertEquals(-1, srv.raw.pttl(b("{fenced}:fence")), "the counter never expires");
            assertThrows(NotObtainedException.class, () -> locker.tryLock("fenced", Duration.ofSeconds(1)));
            assertEquals(Long.toString(first.fence()), srv.get("{fenced}:fence"), "a miss hands out no fence");
            first.unlock();
            // A counter ahead of the clock: counter + 1.
            long ahead = serverMicros() + 3_600_000_000L;
            srv.raw.set(b("{fenced}:fence"), b(Long.toString(ahead)));
            Lock pastCounter = locker.tryLock("fenced", Duration.ofSeconds(5));
            assertEquals(ahead + 1, pastCounter.fence());
            pastCounter.unlock();
            // A tagged key: key + ":fence".
            Lock tagged = locker.tryLock("{tag}x", Duration.ofSeconds(5));
            assertEquals(Long.toString(tagged.fence()), srv.get("{tag}x:fence"));
            tagged.unlock();
            // An unusable counter: FENCE error, nothing written.
            srv.raw.set(b("{bad}:fence"), b("nope"));
            RedisErrorException error = assertThrows(RedisErrorException.class,
                    () -> locker.tryLock("bad", Duration.ofSeconds(5)));
            assertTrue(error.getMessage().contains("FENCE"), error.getMessage());
            assertNull(srv.raw.get(b("bad")), "nothing written");
        }
    }

    @Test
    void fencesIncreaseAcrossARestartWithoutPersistence() throws Exception {
        try (ModernLocker locker = ModernLocker.builder(redis).fencing(true).build()) {
            long last = 0;
            for (int i = 0; i < 5; i++) {
                Lock lock = locker.tryLock("restart", Duration.ofSeconds(5));
                assertTrue(lock.fence() > last, lock.fence() + " after " + last);
                last = lock.fence();
                lock.unlock();
            }
            srv.restart();
            assertNull(srv.raw.get(b("{restart}:fence")), "the counter is gone with the restart");
            Lock lock = null;
            for (int i = 0; lock == null; i++) { // the first command finds the old connection dropped
                try {
                    lock = locker.tryLock("restart", Duration.ofSeconds(5));
                } catch (RedisUnavailableException | UnknownOutcomeException e) {
                    if (i > 5) {
                        throw e;
                    }
                } catch (NotObtainedException e) {
                    throw new AssertionError("the restarted server is empty", e);
                }
            }
            assertTrue(lock.fence() > last, "after the restart: " + lock.fence() + " after " + last);
            lock.unlock();
        }
    }

    @Test
    void releasePublishesTheNoticeGoListensFor() throws Exception {
        RedisClient client = RedisClient.create(srv.uri());
        try (ModernLocker locker = ModernLocker.builder(redis).build();
                StatefulRedisPubSubConnection<String, String> pubsub = client.connectPubSub()) {
            CompletableFuture<String> got = new CompletableFuture<>();
            pubsub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    got.complete(channel + " " + message);
                }
            });
            pubsub.sync().subscribe("{notice}:released");
            locker.tryLock("notice", Duration.ofSeconds(5)).unlock();
            assertEquals("{notice}:released released", got.get(5, TimeUnit.SECONDS));
        } finally {
            client.shutdown();
        }
    }

    @Test
    void aWaiterWakesOnTheReleaseNotNextPoll() throws Exception {
        // A backoff of 5 s: only the notice can wake the waiter within 1 s.
        try (ModernLocker holder = ModernLocker.builder(redis).build();
                ModernLocker waiter = ModernLocker.builder(redis)
                        .backoff(Backoff.exponential(Duration.ofSeconds(5), Duration.ofSeconds(5))).build()) {
            Lock held = holder.tryLock("wake", Duration.ofSeconds(30));
            CompletableFuture<Lock> waiting = asyncGet(
                    () -> waiter.lock("wake", Duration.ofSeconds(5), Duration.ofSeconds(20)));
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (srv.raw.pubsubNumsub(b("{wake}:released")).getOrDefault(b("{wake}:released"), 0L) == 0
                    && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            Thread.sleep(50);
            long start = System.nanoTime();
            held.unlock();
            Lock got = waiting.get(10, TimeUnit.SECONDS);
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(elapsedMs < 1000, "woken by the notice in " + elapsedMs + " ms");
            got.unlock();
        }
    }

    @Test
    void badInput() {
        assertThrows(InvalidException.class, () -> ModernLocker.builder(null));
        try (ModernLocker locker = ModernLocker.builder(redis).fencing(true).build()) {
            assertThrows(InvalidException.class, () -> locker.tryLock("", Duration.ofSeconds(1)));
            assertThrows(InvalidException.class, () -> locker.tryLock(null, Duration.ofSeconds(1)));
            assertThrows(InvalidException.class, () -> locker.tryLock("k", Duration.ZERO));
            assertThrows(InvalidException.class, () -> locker.tryLock("k", Duration.ofNanos(999_999)));
            assertThrows(InvalidException.class, () -> locker.tryLock("k", null));
            assertThrows(InvalidException.class, () -> locker.tryLock("k", Duration.ofMillis((1L << 40) + 1)));
            assertThrows(InvalidException.class, () -> locker.lock("k", Duration.ofSeconds(1), Duration.ofSeconds(-1)));
            assertThrows(InvalidException.class,
                    () -> locker.tryLock("x".repeat((64 << 10) + 1), Duration.ofSeconds(1)));
            // An untagged key holding '}' whose "{key}:fence" leaves its slot: no fence counter possible.
            String odd = null;
            for (int i = 0; odd == null; i++) {
                String name = "a}" + i;
                if (Keys.companion(b(name), ModernLocker.FENCE_SUFFIX) == null) {
                    odd = name;
                }
            }
            String oddKey = odd;
            assertThrows(InvalidException.class, () -> locker.tryLock(oddKey, Duration.ofSeconds(1)));
            srv.raw.lpush(b("list"), b("x"));
            RedisErrorException error = assertThrows(RedisErrorException.class,
                    () -> locker.tryLock("list", Duration.ofSeconds(1)));
            assertTrue(error.getMessage().contains("WRONGTYPE"), error.getMessage());
            assertEquals(1L, srv.raw.dbsize(), "nothing written but the list");
            Lock lock = locker.tryLock("k", Duration.ofSeconds(5));
            assertThrows(InvalidException.class, () -> lock.refresh(Duration.ofMillis((1L << 40) + 1)));
            assertTrue(lock.isHeld(), "a refused refresh changes nothing");
            lock.unlock();
            assertThrows(NotHeldException.class, lock::unlock);
        }
        ModernLocker closed = ModernLocker.builder(redis).build();
        closed.close();
        assertThrows(InvalidException.class, () -> closed.tryLock("k", Duration.ofSeconds(1)));
    }

    @Test
    void notHeldVerdicts() throws Exception {
        try (ModernLocker locker = ModernLocker.builder(redis).build()) {
            Lock gone = locker.tryLock("gone", Duration.ofSeconds(5));
            srv.raw.del(b("gone"));
            NotHeldException notHeld = assertThrows(NotHeldException.class, gone::unlock);
            assertEquals(NotHeldException.Reason.GONE, notHeld.reason());
            assertInstanceOf(LostException.class, LossSignalFaultTest.cause(gone.done()));

            Lock taken = locker.tryLock("taken", Duration.ofSeconds(5));
            srv.raw.set(b("taken"), b("other"));
            notHeld = assertThrows(NotHeldException.class, () -> taken.refresh(Duration.ofSeconds(5)));
            assertEquals(NotHeldException.Reason.TAKEN, notHeld.reason());
            assertEquals("other", srv.get("taken"), "untouched");
            assertFalse(taken.isHeld());
        }
    }

    @Test
    void withoutTheWatchdogTheLockEndsAtItsLease() throws Exception {
        try (ModernLocker locker = ModernLocker.builder(redis).build()) {
            long start = System.nanoTime();
            Lock lock = locker.tryLock("lease", Duration.ofMillis(600));
            AtomicLong done = LossSignalFaultTest.doneAt(lock);
            LossSignalFaultTest.sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(600));
            LostException lost = LossSignalFaultTest.assertLostNow(lock);
            assertTrue(lost.getMessage().contains("lease ran out"), lost.getMessage());
            assertTrue(done.get() - start <= TimeUnit.MILLISECONDS.toNanos(600 - 50 + 20),
                    "at ttl - ttl/12: " + (done.get() - start) / 1_000_000 + " ms");
        }
    }

    @Test
    void theWatchdogKeepsItAndItsRefreshIsGos() throws Exception {
        try (ModernLocker locker = ModernLocker.builder(redis).autoRefresh(true).build()) {
            Lock lock = locker.tryLock("dog", Duration.ofMillis(600));
            Thread.sleep(2000);
            assertTrue(lock.isHeld(), "refreshed every ttl/3");
            assertFalse(lock.done().isDone());
            long pttl = srv.raw.pttl(b("dog"));
            assertTrue(pttl > 0 && pttl <= 600, "PEXPIRE 600: " + pttl);
            lock.unlock();
            assertNull(srv.raw.get(b("dog")));
        }
    }

    @Test
    void faultStalledRefreshSignalsTheLossByTheLeaseEnd() throws Exception {
        try (Redis timed = Redis.of(srv.uri(), Duration.ofSeconds(3));
                ModernLocker locker = ModernLocker.builder(timed).autoRefresh(true).build()) {
            Lock warm = locker.tryLock("warm", Duration.ofSeconds(5));
            warm.refresh(Duration.ofSeconds(5));
            warm.unlock();
            long start = System.nanoTime();
            Lock lock = locker.tryLock("stall", Duration.ofMillis(900));
            srv.signal("STOP");
            try {
                LossSignalFaultTest.sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(900));
                LostException lost = LossSignalFaultTest.assertLostNow(lock);
                assertTrue(lost.getMessage().contains("lost"), lost.getMessage());
            } finally {
                srv.signal("CONT");
            }
        }
    }

    /**
     * A release whose reply is lost: UnknownOutcomeException, the lock counts
     * as lost, and the release ran once — never sent again.
     */
    @Test
    void faultLostReleaseReplyIsUnknownAndNotResent() throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofMillis(800));
                ModernLocker locker = ModernLocker.builder(proxied).build()) {
            locker.tryLock("warm", Duration.ofSeconds(5)).unlock(); // the scripts are loaded: one EVALSHA each below
            Lock lock = locker.tryLock("unknown", Duration.ofSeconds(10));
            long calls = scriptCalls();
            proxy.dropReplies(true);
            assertThrows(UnknownOutcomeException.class, lock::unlock);
            proxy.dropReplies(false);
            Thread.sleep(200);
            assertEquals(calls + 1, scriptCalls(), "the release ran once, and was not sent again");
            assertNull(srv.raw.get(b("unknown")), "it ran");
            assertInstanceOf(LostException.class, LossSignalFaultTest.cause(lock.done()));
            assertThrows(NotHeldException.class, lock::unlock, "an ended lock sends nothing");
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
        try (ModernLocker locker = ModernLocker.builder(redis).build();
                ModernLocker other = ModernLocker.builder(redis).build()) {
            long scripts = scriptCalls();
            long sets = calls("set");
            locker.tryLock("plain", Duration.ofSeconds(5)).unlock();
            assertEquals(scripts + 2, scriptCalls(), "the first acquire is the script");
            assertEquals(sets + 1, calls("set"), "the script's SET (commandstats counts a script's commands too)");
            locker.tryLock("plain", Duration.ofSeconds(5)).unlock();
            assertEquals(scripts + 3, scriptCalls(), "then only the release is a script");
            assertEquals(sets + 2, calls("set"), "and the acquire SET NX PX");
            Lock held = locker.tryLock("plain", Duration.ofSeconds(20));
            assertEquals(22, s(srv.raw.get(b("plain"))).length(), "a 16-byte token, base64url");
            assertTrue(srv.raw.pttl(b("plain")) > 19_000);
            other.tryLock("w", Duration.ofSeconds(1)).unlock(); // other's first attempt: the script
            scripts = scriptCalls();
            sets = calls("set");
            NotObtainedException notObtained = assertThrows(NotObtainedException.class,
                    () -> other.tryLock("plain", Duration.ofSeconds(1)));
            assertTrue(notObtained.holderLeft().toMillis() > 19_000, "" + notObtained.holderLeft());
            assertEquals(sets + 1, calls("set"));
            assertEquals(scripts + 1, scriptCalls(), "the miss read the PTTL");
            CompletableFuture<Lock> waiting = asyncGet(
                    () -> other.lock("plain", Duration.ofSeconds(5), Duration.ofSeconds(10)));
            Thread.sleep(300);
            held.unlock();
            waiting.get(10, TimeUnit.SECONDS).unlock();
        }
    }

    /** The plain SET's reply is lost: the key is read back (a GET, no resend), and the lock is held. */
    @Test
    void faultLostSetReplyIsReadBackNotResent() throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofMillis(800));
                ModernLocker locker = ModernLocker.builder(proxied).build()) {
            // the first attempt is the script; the next ones SET
            locker.tryLock("warm", Duration.ofSeconds(5)).unlock();
            long sets = calls("set");
            proxy.dropReplies(true);
            CompletableFuture<Lock> attempt = asyncGet(() -> locker.tryLock("setback", Duration.ofSeconds(10)));
            Thread.sleep(300); // the SET ran, its reply thrown away
            proxy.dropReplies(false); // the read back, on a new connection after the timeout, gets its replies
            Lock lock = attempt.get(10, TimeUnit.SECONDS);
            assertEquals(sets + 1, calls("set"), "the SET ran once");
            assertTrue(lock.isHeld());
            lock.unlock();
            assertEquals(0L, srv.raw.exists(b("setback")));
        }
    }

    /** An acquire whose reply is lost is read back (GETs, no resend): held, with the fence its acquire handed out. */
    @Test
    void faultLostAcquireReplyIsReadBackNotResent() throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofMillis(800));
                ModernLocker locker = ModernLocker.builder(proxied).fencing(true).build()) {
            locker.tryLock("warm", Duration.ofSeconds(5)).unlock();
            long calls = scriptCalls();
            proxy.dropReplies(true);
            CompletableFuture<Lock> attempt = asyncGet(() -> locker.tryLock("readback", Duration.ofSeconds(10)));
            Thread.sleep(300); // the acquire ran, its reply thrown away
            proxy.dropReplies(false); // the read back, on a new connection after the timeout, gets its replies
            Lock lock = attempt.get(10, TimeUnit.SECONDS);
            assertEquals(calls + 1, scriptCalls(), "the acquire ran once");
            assertTrue(lock.isHeld());
            assertEquals(srv.get("{readback}:fence"), Long.toString(lock.fence()), "the fence of our acquire");
            assertTrue(lock.fence() > 0);
            lock.unlock();
            assertEquals(0L, srv.raw.exists(b("readback")));
        }
    }

    @Test
    void interoperatesWithTheServerBytesOfAnotherHolder() {
        // A lock Go took (any token in the key): Java waits it out, and cannot release it.
        try (ModernLocker locker = ModernLocker.builder(redis).build()) {
            srv.raw.psetex(b("go"), 300, b("gotoken-AAAAAAAAAAAAAAAA"));
            long start = System.nanoTime();
            Lock lock = locker.lock("go", Duration.ofSeconds(5), Duration.ofSeconds(5));
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(elapsedMs < 1000, "never sleeps past the holder's PTTL: " + elapsedMs + " ms");
            assertArrayEquals(b(srv.get("go")), srv.raw.get(b("go")));
            lock.unlock();
        }
    }
}
