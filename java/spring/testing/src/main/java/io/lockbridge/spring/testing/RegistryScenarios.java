package io.lockbridge.spring.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.BiFunction;
import java.util.function.Function;

import io.lockbridge.Fixtures;

/**
 * The rolling deploy from Spring Integration's RedisLockRegistry to the
 * lockbridge LockRegistry, written once for both Spring Integration lines:
 * each line's test hands in its two registries on one redis-server (each
 * with its own connections: two instances of the fleet), as functions from
 * a lock key to the registry's lock, both with registry key "locks" and a
 * lease of {@link #EXPIRE}.
 */
public final class RegistryScenarios {
    /** The lease both registries are built with. */
    public static final Duration EXPIRE = Duration.ofSeconds(1);

    private RegistryScenarios() {}

    /** Both take registryKey:lockKey, and each refuses while the other holds it. */
    public static void sameKeyEachRefusesTheOther(Fixtures.Standalone srv, Function<String, Lock> old,
            Function<String, Lock> neu) throws InterruptedException {
        Lock newLock = neu.apply("k1");
        assertTrue(newLock.tryLock());
        String token = srv.get("locks:k1");
        assertNotNull(token, "lockbridge holds locks:k1");
        long pttl = srv.pttl("locks:k1");
        assertTrue(pttl > 0 && pttl <= EXPIRE.toMillis(), "PX expireAfter, got " + pttl);
        assertFalse(other(() -> old.apply("k1").tryLock(200, TimeUnit.MILLISECONDS)), "RedisLockRegistry refused");
        newLock.unlock();
        assertFalse(srv.exists("locks:k1"));

        Lock oldLock = old.apply("k1");
        assertTrue(oldLock.tryLock());
        String theirs = srv.get("locks:k1");
        assertNotNull(theirs);
        assertNotEquals(token, theirs);
        assertFalse(other(() -> neu.apply("k1").tryLock(200, TimeUnit.MILLISECONDS)), "lockbridge refused");
        oldLock.unlock();
        assertFalse(srv.exists("locks:k1"));
    }

    /**
     * The semantics both registries share, asserted on reg: reentrancy,
     * tryLock with a timeout, interruption, unlock by a non-owner, and
     * unlock after the lease was lost. other gives a lock of a new instance
     * (a new registry) on each call: the other instances of the fleet.
     */
    public static void semantics(Fixtures.Standalone srv, Function<String, Lock> reg, Function<String, Lock> other,
            String name) throws Exception {
        String key = "locks:" + name;
        Lock lock = reg.apply(name);
        assertTrue(lock.tryLock(1, TimeUnit.SECONDS));
        assertTrue(lock.tryLock(), "reentrant");
        lock.unlock();
        assertTrue(srv.exists(key), "held until the last unlock");
        assertFalse(RegistryScenarios.<Boolean>other(() -> lock.tryLock()), "another thread of this process waits");
        assertThrows(IllegalStateException.class, () -> {
            try {
                otherThrowing(() -> {
                    lock.unlock();
                    return null;
                });
            } catch (java.util.concurrent.ExecutionException e) {
                throw e.getCause();
            }
        }, "unlock by a thread that does not hold it");
        long start = System.nanoTime();
        assertFalse(other(() -> other.apply(name).tryLock(300, TimeUnit.MILLISECONDS)));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(290), "tryLock waited its timeout");
        lock.unlock();
        assertFalse(srv.exists(key));

        // lockInterruptibly: an interrupt ends the wait with InterruptedException.
        Lock theirs = other.apply(name);
        assertTrue(other(() -> {
            return theirs.tryLock();
        }));
        AtomicReference<Throwable> got = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                lock.lockInterruptibly();
                got.set(new AssertionError("locked while another instance holds it"));
            } catch (Throwable e) {
                got.set(e);
            }
        });
        waiter.start();
        Thread.sleep(200);
        waiter.interrupt();
        waiter.join(5_000);
        assertFalse(waiter.isAlive());
        // RedisLockRegistry, interrupted inside a Redis call rather than its
        // sleep, wraps the interrupt (CannotAcquireLockException caused by
        // Lettuce's RedisCommandInterruptedException, caused by the
        // InterruptedException): either way the interrupt ended the wait.
        assertTrue(causedByInterrupt(got.get()), "got " + got.get());

        // tryLock with a timeout obtains once the other instance's lease ends (it never unlocks).
        assertTrue(lock.tryLock(EXPIRE.toMillis() * 3, TimeUnit.MILLISECONDS),
                "obtained after the other's lease ended");

        // unlock after the lease was lost: ConcurrentModificationException, and the new holder's key untouched.
        Thread.sleep(EXPIRE.toMillis() + 200);
        String otherName = name;
        assertTrue(other(() -> other.apply(otherName).tryLock(2, TimeUnit.SECONDS)),
                "the other instance took the expired lock");
        String newHolder = srv.get(key);
        assertThrows(ConcurrentModificationException.class, lock::unlock);
        assertEquals(newHolder, srv.get(key), "the new holder's key is untouched");
    }

    /**
     * A re-entry renews the lease: RedisLockRegistry's re-entrant tryLock
     * runs its obtain script again, whose PEXPIRE moves the lease to
     * expireAfter from now (Spring Integration's LockRegistryLeaderInitiator
     * keeps its leadership that way: a re-entrant tryLock every heartbeat).
     * A holder that re-enters every half lease keeps the lock well past one
     * lease; the other instance never gets it meanwhile.
     */
    public static void reentryRenewsTheLease(Fixtures.Standalone srv, Function<String, Lock> reg,
            Function<String, Lock> other, String name) throws Exception {
        String key = "locks:" + name;
        Lock lock = reg.apply(name);
        assertTrue(lock.tryLock());
        long start = System.nanoTime();
        while (System.nanoTime() - start < EXPIRE.multipliedBy(2).toNanos()) {
            Thread.sleep(EXPIRE.toMillis() / 2);
            assertTrue(lock.tryLock(), "re-entered");
            lock.unlock();
            long pttl = srv.pttl(key);
            assertTrue(pttl > EXPIRE.toMillis() / 2, "the re-entry renewed the lease to expireAfter: PTTL " + pttl);
        }
        assertFalse(RegistryScenarios.<Boolean>other(() -> other.apply(name).tryLock()),
                "another instance took the lock while its holder kept re-entering it");
        lock.unlock();
        assertFalse(srv.exists(key));
    }

    /**
     * A re-entry after the lease was lost and another instance took the
     * lock is not obtained (RedisLockRegistry's obtain script finds another
     * value and fails): the holder learns it is no longer the holder, and
     * its last unlock throws ConcurrentModificationException, leaving the
     * new holder's key.
     */
    public static void reentryAfterLossIsRefused(Fixtures.Standalone srv, Function<String, Lock> reg,
            Function<String, Lock> other, String name) throws Exception {
        String key = "locks:" + name;
        Lock lock = reg.apply(name);
        assertTrue(lock.tryLock());
        Thread.sleep(EXPIRE.toMillis() + 200);
        assertTrue(RegistryScenarios.<Boolean>other(() -> other.apply(name).tryLock()),
                "the other instance took the expired lock");
        String newHolder = srv.get(key);
        assertFalse(lock.tryLock(), "re-entry after another instance took the lock");
        assertFalse(lock.tryLock(100, TimeUnit.MILLISECONDS),
                "re-entry with a wait, while another instance holds the lock");
        assertEquals(newHolder, srv.get(key), "the new holder's key is untouched");
        assertThrows(ConcurrentModificationException.class, lock::unlock);
        assertEquals(newHolder, srv.get(key), "the new holder's key is untouched");
    }

    /** Who is leader, counted by a guard that is not the lock. */
    public static final class Leaders {
        private final AtomicInteger leading = new AtomicInteger();
        private final AtomicInteger overlaps = new AtomicInteger();
        private final AtomicInteger[] granted = {new AtomicInteger(), new AtomicInteger()};
        private final AtomicInteger[] revoked = {new AtomicInteger(), new AtomicInteger()};

        /** Side side (0 or 1) was granted leadership. */
        public void granted(int side) {
            granted[side].incrementAndGet();
            if (leading.incrementAndGet() > 1) {
                overlaps.incrementAndGet();
            }
        }

        /** Side side's leadership was revoked. */
        public void revoked(int side) {
            revoked[side].incrementAndGet();
            leading.decrementAndGet();
        }
    }

    /** One side's leader election, stopped by close. */
    public interface Election extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * Spring Integration's LockRegistryLeaderInitiator on each side, one
     * role: side 0, started first, leads; for three leases side 1 runs too
     * and must not lead (side 0's re-entrant tryLock every heartbeat renews
     * the lock); once side 0 stops, side 1 leads. start builds and starts
     * side i's initiator (heartbeat well below the lease), reporting to the
     * Leaders given.
     */
    public static void leadersNeverOverlap(BiFunction<Integer, Leaders, Election> start) throws Exception {
        Leaders leaders = new Leaders();
        Election first = start.apply(0, leaders);
        Election second = null;
        try {
            awaitAtLeast(leaders.granted[0], Duration.ofSeconds(5));
            assertEquals(1, leaders.granted[0].get(), "side 0 leads");
            second = start.apply(1, leaders);
            Thread.sleep(EXPIRE.multipliedBy(3).toMillis());
            assertEquals(0, leaders.overlaps.get(), "two leaders at once");
            assertEquals(0, leaders.granted[1].get(), "side 1 was granted the leadership side 0 still held");
            assertEquals(0, leaders.revoked[0].get(), "side 0 lost its leadership while renewing it every heartbeat");
            first.close();
            first = null;
            awaitAtLeast(leaders.revoked[0], EXPIRE.multipliedBy(3));
            awaitAtLeast(leaders.granted[1], EXPIRE.multipliedBy(3));
            assertEquals(1, leaders.granted[1].get(), "side 1 leads once side 0 stopped");
        } finally {
            if (first != null) {
                first.close();
            }
            if (second != null) {
                second.close();
            }
        }
    }

    private static void awaitAtLeast(AtomicInteger count, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (count.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    /** Threads of both instances contend for one lock: never two inside, both get it. */
    public static void neverOverlap(Function<String, Lock> old, Function<String, Lock> neu)
            throws InterruptedException {
        Exclusion.Result result = Exclusion.contend(List.of(old.apply("shared"), neu.apply("shared")), 2,
                Duration.ofSeconds(3), Duration.ofMillis(5));
        assertNull(result.failure());
        assertEquals(0, result.overlaps());
        assertTrue(result.acquired()[0] > 0 && result.acquired()[1] > 0,
                "both instances locked: " + result.acquired()[0] + " / " + result.acquired()[1]);
    }

    /**
     * A holder on each side crashes (never unlocks, never refreshes): the
     * other side takes the lock once its lease has ended, not before. Each
     * function gives a lock of a new instance on each call.
     */
    public static void crashTakeoversBothWays(Function<String, Lock> old, Function<String, Lock> neu) throws Exception {
        takeover(old, neu, "crash-old");
        takeover(neu, old, "crash-new");
    }

    private static void takeover(Function<String, Lock> crashed, Function<String, Lock> taker, String name)
            throws Exception {
        // The lease starts on the server between the crashed holder's send
        // and its reply, so no takeover may come before `before` + EXPIRE
        // (less a margin for the two clocks' reads on this one host). The
        // taker's own start is no bound: its thread may start late.
        long before = System.nanoTime();
        assertTrue(other(() -> crashed.apply(name).tryLock()), "the holder that will crash locked");
        // its thread is gone: nothing unlocks or refreshes the lock
        AtomicLong takerStart = new AtomicLong();
        Exclusion.Takeover result = other(() -> {
            takerStart.set(System.nanoTime());
            return Exclusion.takeover(taker.apply(name), EXPIRE.multipliedBy(4));
        });
        assertTrue(result.obtained(), "taken over");
        Duration sinceLocked = Duration.ofNanos(takerStart.get() - before).plus(result.after());
        assertTrue(sinceLocked.compareTo(EXPIRE.minusMillis(150)) >= 0, "not before the lease ended: " + sinceLocked);
    }

    private static boolean causedByInterrupt(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    /** Runs call on another thread (a lock call of another thread of the process) and returns its result. */
    static <T> T other(java.util.concurrent.Callable<T> call) throws InterruptedException {
        try {
            return otherThrowing(call);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }

    static <T> T otherThrowing(java.util.concurrent.Callable<T> call)
            throws InterruptedException, java.util.concurrent.ExecutionException {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                result.complete(call.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        thread.start();
        try {
            return result.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("timed out", e);
        }
    }
}
