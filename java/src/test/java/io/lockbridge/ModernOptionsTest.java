package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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
        try (ModernLocker m = ModernLocker.builder(redis).build()) {
            Lock l = m.tryLock("orders", Duration.ofSeconds(10));
            Duration ttl = l.ttl();
            assertTrue(ttl.compareTo(Duration.ofSeconds(9)) > 0 && ttl.compareTo(Duration.ofSeconds(10)) <= 0, "PTTL of our key: " + ttl);
            Duration left = l.remaining();
            assertTrue(left.compareTo(Duration.ofSeconds(9)) > 0 && left.compareTo(Duration.ofSeconds(10)) <= 0, "local lease: " + left);
            srv.raw.persist(b("orders"));
            assertEquals(Duration.ofMillis(-1), l.ttl(), "no expiry: negative, as Go");
            l.unlock();
            assertEquals(Duration.ZERO, l.remaining(), "released: nothing left");
            assertEquals(NotHeldException.Reason.ENDED, assertThrows(NotHeldException.class, l::ttl).reason());

            // Gone: NotHeld (GONE), and the lock counts as lost.
            Lock gone = m.tryLock("orders", Duration.ofSeconds(10));
            srv.raw.del(b("orders"));
            assertEquals(NotHeldException.Reason.GONE, assertThrows(NotHeldException.class, gone::ttl).reason());
            ExecutionException e = assertThrows(ExecutionException.class, () -> gone.done().get(1, TimeUnit.SECONDS));
            assertInstanceOf(LostException.class, e.getCause());
            assertFalse(gone.isHeld());

            // Taken: another token on the key.
            Lock taken = m.tryLock("orders", Duration.ofSeconds(10));
            srv.raw.set(b("orders"), b("someone-else"));
            assertEquals(NotHeldException.Reason.TAKEN, assertThrows(NotHeldException.class, taken::ttl).reason());
            assertEquals("someone-else", srv.get("orders"), "a read: nothing changed");
        }
        // Other lockers' locks read no server TTL.
        try (LegacyLocker legacy = LegacyLocker.builder(redis).build()) {
            Lock l = legacy.tryLock("legacy", Duration.ofSeconds(10));
            assertThrows(InvalidException.class, l::ttl);
            assertTrue(l.remaining().compareTo(Duration.ZERO) > 0);
            l.unlock();
        }
    }

    @Test
    void tokensMakeEachAcquiresToken() {
        int[] n = {0};
        try (ModernLocker m = ModernLocker.builder(redis).tokens(() -> "host-1/42/" + (++n[0])).build()) {
            Lock l = m.tryLock("orders", Duration.ofSeconds(10));
            assertEquals("host-1/42/1", srv.get("orders"));
            l.unlock();
            assertNull(srv.get("orders"), "released with that token");
        }
        for (Supplier<String> bad : List.<Supplier<String>>of(() -> "", () -> null, () -> "x".repeat(1025))) {
            try (ModernLocker m = ModernLocker.builder(redis).tokens(bad).build()) {
                assertThrows(InvalidException.class, () -> m.tryLock("orders", Duration.ofSeconds(10)));
                assertThrows(InvalidException.class, () -> m.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(1)));
                assertNull(srv.get("orders"), "nothing written");
            }
        }
        try (ModernLocker m = ModernLocker.builder(redis).tokens(() -> "é".repeat(512)).build()) {
            m.tryLock("orders", Duration.ofSeconds(10)).unlock(); // 1,024 bytes in UTF-8: the longest
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
            CompletableFuture<Lock> got = ModernLockerTest.asyncGet(() -> poller.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(20)));
            Thread.sleep(500); // several polls
            assertFalse(got.isDone());
            assertEquals(List.of(0L), List.copyOf(srv.raw.pubsubNumsub(b("{orders}:released")).values()), "a poller does not subscribe");
            held.unlock();
            Lock l = got.get(20, TimeUnit.SECONDS);
            assertTrue(l.isHeld());
            l.unlock();
        }
    }

    /** A standalone server has no replica: WAIT 1 acknowledges nothing, the acquire is released and lock() gives up at once. */
    @Test
    void faultWaitForReplicasWithoutReplicaIsNotHeld() {
        try (ModernLocker m = ModernLocker.builder(redis).fencing(true).waitForReplicas(1, Duration.ofMillis(50)).build()) {
            long t0 = System.nanoTime();
            ReplicationException e = assertThrows(ReplicationException.class, () -> m.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(30)));
            assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(20).toNanos(), "no further attempt: lock() returned before its wait");
            assertEquals(1, e.want());
            assertEquals(0, e.acked());
            assertTrue(e.released(), e.getMessage());
            assertNull(srv.get("orders"), "the acquire was released");
            assertTrue(srv.get("{orders}:fence") != null, "the fence was handed out (and is not handed out again)");
        }
    }

    @Test
    void faultWaitForReplicasAcknowledgedOrNot() throws Exception {
        try (Topology.Node master = new Topology.Node(false, null);
                Topology.Node replica = new Topology.Node(false, null, "--replicaof", "127.0.0.1", Integer.toString(master.port));
                Redis r = Redis.of(master.uri());
                ModernLocker m = ModernLocker.builder(r).fencing(true).waitForReplicas(1, Duration.ofSeconds(2)).build()) {
            Topology.eventually("replica in sync", () -> replica.cmd.info("replication").contains("master_link_status:up"));
            Lock l = m.tryLock("orders", Duration.ofSeconds(30));
            // Acknowledged: the replica has the key and the counter already.
            assertEquals(master.cmd.get("orders"), replica.cmd.get("orders"));
            assertEquals(Long.toString(l.fence()), replica.cmd.get("{orders}:fence"));
            l.unlock();

            // The replica stopped (SIGSTOP): nobody acknowledges within 300 ms.
            ProcessHandle p = ProcessHandle.of(pid(replica)).orElseThrow();
            signal(p.pid(), "STOP");
            try (ModernLocker m2 = ModernLocker.builder(r).waitForReplicas(1, Duration.ofMillis(300)).build()) {
                ReplicationException e = assertThrows(ReplicationException.class, () -> m2.tryLock("orders", Duration.ofSeconds(30)));
                assertEquals(0, e.acked());
                assertTrue(e.released());
                assertNull(master.cmd.get("orders"), "released on the master");
            } finally {
                signal(p.pid(), "CONT");
            }
        }
    }

    static long pid(Topology.Node n) {
        return Long.parseLong(n.cmd.info("server").lines().filter(l -> l.startsWith("process_id:")).findFirst().orElseThrow().substring(11).trim());
    }

    static void signal(long pid, String sig) throws Exception {
        assertEquals(0, new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start().waitFor());
    }
}
