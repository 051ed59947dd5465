package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

/**
 * The options of Go's modern.Locker that ModernLocker has too, on real
 * redis-servers: Lock.ttl() (Go's TTL) and remaining(), tokens (Go's
 * WithTokenFunc), pollers (WithPollers), waitForReplicas (WithWait, on a
 * master with a replica: acknowledged, and a replica stopped with SIGSTOP).
 */
class ModernOptionsTest extends ServerTest {
    @Test
    void ttlReadsTheServersLeaseAndRemainingTheLocalOne() throws Exception {
        try (ModernLocker locker = ModernLocker.builder(redis).build()) {
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
            Duration ttl = lock.ttl();
            assertTrue(ttl.compareTo(Duration.ofSeconds(9)) > 0 && ttl.compareTo(Duration.ofSeconds(10)) <= 0,
                    "PTTL of our key: " + ttl);
            Duration left = lock.remaining();
            assertTrue(left.compareTo(Duration.ofSeconds(9)) > 0 && left.compareTo(Duration.ofSeconds(10)) <= 0,
                    "local lease: " + left);
            srv.raw.persist(b("orders"));
            assertEquals(Duration.ofMillis(-1), lock.ttl(), "no expiry: negative, as Go");
            lock.unlock();
            assertEquals(Duration.ZERO, lock.remaining(), "released: nothing left");
            assertEquals(NotHeldException.Reason.ENDED, assertThrows(NotHeldException.class, lock::ttl).reason());

            // Gone: NotHeld (GONE), and the lock counts as lost.
            Lock gone = locker.tryLock("orders", Duration.ofSeconds(10));
            srv.raw.del(b("orders"));
            assertEquals(NotHeldException.Reason.GONE, assertThrows(NotHeldException.class, gone::ttl).reason());
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> gone.done().get(1, TimeUnit.SECONDS));
            assertInstanceOf(LostException.class, failed.getCause());
            assertFalse(gone.isHeld());

            // Taken: another token on the key.
            Lock taken = locker.tryLock("orders", Duration.ofSeconds(10));
            srv.raw.set(b("orders"), b("someone-else"));
            assertEquals(NotHeldException.Reason.TAKEN, assertThrows(NotHeldException.class, taken::ttl).reason());
            assertEquals("someone-else", srv.get("orders"), "a read: nothing changed");
        }
        // Other lockers' locks read no server TTL.
        try (LegacyLocker legacy = LegacyLocker.builder(redis).build()) {
            Lock lock = legacy.tryLock("legacy", Duration.ofSeconds(10));
            assertThrows(InvalidException.class, lock::ttl);
            assertTrue(lock.remaining().compareTo(Duration.ZERO) > 0);
            lock.unlock();
        }
    }

    @Test
    void tokensMakeEachAcquiresToken() {
        int[] counter = {0};
        try (ModernLocker locker = ModernLocker.builder(redis).tokens(() -> "host-1/42/" + (++counter[0])).build()) {
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
            assertEquals("host-1/42/1", srv.get("orders"));
            lock.unlock();
            assertNull(srv.get("orders"), "released with that token");
        }
        for (Supplier<String> bad : List.<Supplier<String>>of(() -> "", () -> null, () -> "x".repeat(1025))) {
            try (ModernLocker locker = ModernLocker.builder(redis).tokens(bad).build()) {
                assertThrows(InvalidException.class, () -> locker.tryLock("orders", Duration.ofSeconds(10)));
                assertThrows(InvalidException.class,
                        () -> locker.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(1)));
                assertNull(srv.get("orders"), "nothing written");
            }
        }
        try (ModernLocker locker = ModernLocker.builder(redis).tokens(() -> "é".repeat(512)).build()) {
            locker.tryLock("orders", Duration.ofSeconds(10)).unlock(); // 1,024 bytes in UTF-8: the longest
        }
    }

    @Test
    void badOptionsAreInvalid() {
        ModernLocker.Builder bld = ModernLocker.builder(redis);
        assertThrows(InvalidException.class, () -> bld.pollers(Duration.ofMillis(-1)));
        assertThrows(InvalidException.class, () -> bld.pollers(null));
        assertThrows(InvalidException.class, () -> bld.waitForReplicas(0, Duration.ofSeconds(1)));
        assertThrows(InvalidException.class, () -> bld.waitForReplicas(1, Duration.ZERO));
        assertThrows(InvalidException.class, () -> bld.waitForReplicas(1, Duration.ofNanos(999_999)));
        assertThrows(InvalidException.class, () -> bld.waitForReplicas(1, null));
        assertThrows(NullPointerException.class, () -> bld.tokens(null));
    }

    /**
     * A poller does not subscribe to the release notices (they must not cut
     * its pause short) and still gets the lock once it is free.
     */
    @Test
    void pollersWaitWithoutTheNotice() throws Exception {
        try (ModernLocker holder = ModernLocker.builder(redis).build();
                ModernLocker poller = ModernLocker.builder(redis).pollers(Duration.ofMillis(100)).build()) {
            Lock held = holder.tryLock("orders", Duration.ofSeconds(30));
            CompletableFuture<Lock> got = ModernLockerTest.asyncGet(
                    () -> poller.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(20)));
            Thread.sleep(500); // several polls
            assertFalse(got.isDone());
            assertEquals(List.of(0L), List.copyOf(srv.raw.pubsubNumsub(b("{orders}:released")).values()),
                    "a poller does not subscribe");
            held.unlock();
            Lock lock = got.get(20, TimeUnit.SECONDS);
            assertTrue(lock.isHeld());
            lock.unlock();
        }
    }

    /**
     * A standalone server has no replica: WAIT 1 acknowledges nothing, the
     * acquire is released and lock() gives up at once.
     */
    @Test
    void faultWaitForReplicasWithoutReplicaIsNotHeld() {
        try (ModernLocker locker = ModernLocker.builder(redis).fencing(true).waitForReplicas(1, Duration.ofMillis(50))
                .build()) {
            long start = System.nanoTime();
            ReplicationException replication = assertThrows(ReplicationException.class,
                    () -> locker.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(30)));
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(20).toNanos(),
                    "no further attempt: lock() returned before its wait");
            assertEquals(1, replication.want());
            assertEquals(0, replication.acked());
            assertTrue(replication.released(), replication.getMessage());
            assertNull(srv.get("orders"), "the acquire was released");
            assertTrue(srv.get("{orders}:fence") != null, "the fence was handed out (and is not handed out again)");
        }
    }

    @Test
    void faultWaitForReplicasAcknowledgedOrNot() throws Exception {
        try (Topology.Node master = new Topology.Node(false, null);
                Topology.Node replica = new Topology.Node(false, null, "--replicaof", "127.0.0.1",
                        Integer.toString(master.port));
                Redis redis = Redis.of(master.uri());
                ModernLocker locker = ModernLocker.builder(redis).fencing(true)
                        .waitForReplicas(1, Duration.ofSeconds(2)).build()) {
            Topology.eventually("replica in sync", () -> replica.cmd.info("replication")
                    .contains("master_link_status:up"));
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(30));
            // Acknowledged: the replica has the key and the counter already.
            assertEquals(master.cmd.get("orders"), replica.cmd.get("orders"));
            assertEquals(Long.toString(lock.fence()), replica.cmd.get("{orders}:fence"));
            lock.unlock();

            // The replica stopped (SIGSTOP): nobody acknowledges within 300 ms.
            ProcessHandle process = ProcessHandle.of(pid(replica)).orElseThrow();
            signal(process.pid(), "STOP");
            try (ModernLocker shortWait = ModernLocker.builder(redis).waitForReplicas(1, Duration.ofMillis(300))
                    .build()) {
                ReplicationException replication = assertThrows(ReplicationException.class,
                        () -> shortWait.tryLock("orders", Duration.ofSeconds(30)));
                assertEquals(0, replication.acked());
                assertTrue(replication.released());
                assertNull(master.cmd.get("orders"), "released on the master");
            } finally {
                signal(process.pid(), "CONT");
            }
        }
    }

    /**
     * waitForReplicas promises that a failover to a replica that acknowledged
     * keeps the lock, so a refresh counts only once acknowledged too. The
     * replica acknowledges the acquire and a first refresh, is cut off, and
     * a refresh to 1 min runs on the master alone; the master crashes and
     * the replica is promoted, where the key expires at the last PX it got.
     * A refresh extended on the master's answer alone would leave the first
     * holder's lease running when a second one gets in: it must throw
     * ReplicationException and leave the lease's end as it was.
     */
    @Test
    void faultWaitForReplicasRefreshNotAcknowledged() throws Exception {
        try (Topology.Replicated topology = new Topology.Replicated();
                Redis onMaster = Redis.of(topology.master.uri());
                ModernLocker locker = ModernLocker.builder(onMaster).waitForReplicas(1, Duration.ofMillis(500))
                        .build()) {
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(2));
            lock.refresh(Duration.ofSeconds(2)); // acknowledged: counted
            topology.detach();
            ReplicationException refused = null;
            try {
                lock.refresh(Duration.ofMinutes(1));
            } catch (ReplicationException e) {
                refused = e;
                assertEquals(0, e.acked());
                assertTrue(lock.expiresAt().isBefore(Instant.now().plusSeconds(2)),
                        "a refresh no replica acknowledged does not extend the lease: " + lock.expiresAt());
                assertTrue(lock.isHeld(), "the lock is still held until its lease ends");
            }
            topology.failover();
            try (Redis onPromoted = Redis.of(topology.replica.uri());
                    ModernLocker other = ModernLocker.builder(onPromoted).build()) {
                Lock next = tryUntil(other, "orders", Duration.ofSeconds(10));
                assertTrue(lock.done().isDone(), "two holders: a second one got the key on the promoted replica "
                        + "while the first one's lease runs until " + lock.expiresAt());
                assertInstanceOf(ReplicationException.class, refused, "the refresh was not counted");
                next.unlock();
            }
        }
    }

    /**
     * The auto-refresh of a lock whose replica was cut off: its refreshes
     * run on the master but are not acknowledged, so none counts; it tries
     * again until its give-up point, and the lock is lost there, before
     * the key can expire on the replica a failover promotes.
     */
    @Test
    void faultWaitForReplicasAutoRefreshNotAcknowledged() throws Exception {
        Duration ttl = Duration.ofSeconds(2);
        try (Topology.Replicated topology = new Topology.Replicated();
                Redis onMaster = Redis.of(topology.master.uri());
                ModernLocker locker = ModernLocker.builder(onMaster).autoRefresh(true)
                        .waitForReplicas(1, Duration.ofMillis(200)).build()) {
            Lock lock = locker.tryLock("orders", ttl);
            Thread.sleep(ttl.multipliedBy(3).dividedBy(2).toMillis());
            assertTrue(lock.isHeld(), "acknowledged refreshes keep it past its first ttl");
            topology.detach();
            Thread.sleep(ttl.multipliedBy(3).dividedBy(4).toMillis()); // refreshes that reach the master alone
            topology.failover();
            try (Redis onPromoted = Redis.of(topology.replica.uri());
                    ModernLocker other = ModernLocker.builder(onPromoted).build()) {
                Lock next = tryUntil(other, "orders", Duration.ofSeconds(10));
                assertTrue(lock.done().isDone(), "two holders: a second one got the key on the promoted replica "
                        + "while the first one's lease runs until " + lock.expiresAt());
                ExecutionException lost = assertThrows(ExecutionException.class, () -> lock.done().get());
                assertInstanceOf(LostException.class, lost.getCause());
                next.unlock();
            }
        }
    }

    /** tryLock every 10 ms until it gets the lock, for up to within. */
    private static Lock tryUntil(ModernLocker locker, String name, Duration within) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        while (true) {
            try {
                return locker.tryLock(name, Duration.ofMinutes(1));
            } catch (NotObtainedException | RedisErrorException e) {
                if (System.nanoTime() > end) {
                    throw new AssertionError(name + " not obtained within " + within, e);
                }
                Thread.sleep(10);
            }
        }
    }

    static long pid(Topology.Node node) {
        return Long.parseLong(node.cmd.info("server").lines().filter(l -> l.startsWith("process_id:")).findFirst()
                .orElseThrow().substring(11).trim());
    }

    static void signal(long pid, String sig) throws Exception {
        assertEquals(0, new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start().waitFor());
    }
}
