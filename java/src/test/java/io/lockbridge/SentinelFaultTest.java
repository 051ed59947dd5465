package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * A master that Sentinel replaced while it was paused (SIGSTOP past
 * down-after-milliseconds: Sentinel fails over to the replica) and that then
 * comes back: until Sentinel reaches it and demotes it (seconds later; never
 * while a cut between it and the sentinels lasts) it still takes writes as a
 * master. A connection lockbridge pooled before the failover reaches it; a
 * lock taken there is a second holder beside the one a client that asked
 * the sentinels takes on the new master. Go's lockers (go-redis's failover
 * client) close such connections on the sentinels' +switch-master;
 * lockbridge-java watches the sentinels' events too.
 */
class SentinelFaultTest {
    interface Step {
        void run() throws Exception;
    }

    /**
     * Pauses topology's master, runs before, waits until Sentinel names the replica
     * as master, runs after, and resumes the old master (still a master in
     * its own eyes).
     */
    static void failoverWhilePaused(Topology.Sentinel topology, Step before, Step after) throws Exception {
        long pid = ModernOptionsTest.pid(topology.master);
        ModernOptionsTest.signal(pid, "STOP");
        try {
            before.run();
            Topology.eventually("the sentinel named the replica as master", () -> {
                var addr = topology.scmd.getMasterAddrByName("mymaster");
                return addr != null && ((InetSocketAddress) addr).getPort() == topology.replica.port;
            });
            after.run();
        } finally {
            ModernOptionsTest.signal(pid, "CONT");
        }
    }

    /** The old master, back, still a master: the window the tests lock in. */
    static void assertStillMaster(Topology.Node old) {
        assertEquals("master", old.fresh().role().get(0), "the old master is back and not demoted yet");
    }

    /**
     * Before: the locker's next tryLock borrowed its idle connection to the
     * old master and took the lock there, while another client held it on
     * the new master (two holders).
     */
    @Test
    void faultPooledConnectionToAReplacedMasterIsNotLockedOn() throws Exception {
        try (Topology.Sentinel topology = new Topology.Sentinel();
                Redis redis = Redis.of(topology.uri(), Duration.ofSeconds(1));
                ModernLocker locker = ModernLocker.builder(redis).build()) {
            locker.tryLock("warm", Duration.ofSeconds(1)).unlock(); // a pooled connection to the master
            failoverWhilePaused(topology, () -> {}, () -> {});
            try (Redis otherRedis = Redis.of(topology.uri(), Duration.ofSeconds(1));
                    ModernLocker other = ModernLocker.builder(otherRedis).build()) {
                Lock theirs = other.tryLock("orders", Duration.ofSeconds(30));
                assertStillMaster(topology.master);
                assertThrows(NotObtainedException.class, () -> locker.tryLock("orders", Duration.ofSeconds(30)),
                        "the sentinel names the new master, where the lock is held");
                assertNull(topology.master.cmd.get("orders"), "nothing written on the old master");
                theirs.unlock();
                locker.tryLock("orders", Duration.ofSeconds(30)).unlock(); // on the new master
            }
        }
    }

    /**
     * An acquire sent to the master just before it was paused runs when it
     * comes back, after the failover, and its reply arrives in time. Before:
     * the caller was handed a lock held on the old master only, beside
     * another client's on the new one. Now the reply is not trusted and the
     * acquire is settled by reading the key on the master the sentinel names:
     * never held there.
     */
    @Test
    void faultReplyFromAReplacedMasterIsNotTrusted() throws Exception {
        try (Topology.Sentinel topology = new Topology.Sentinel();
                Redis redis = Redis.of(topology.uri(), Duration.ofSeconds(20));
                ModernLocker locker = ModernLocker.builder(redis).build()) {
            locker.tryLock("warm", Duration.ofSeconds(1)).unlock();
            CompletableFuture<Lock> ours = new CompletableFuture<>();
            failoverWhilePaused(topology, () -> CompletableFuture.runAsync(() -> {
                try {
                    ours.complete(locker.tryLock("orders", Duration.ofSeconds(60)));
                } catch (RuntimeException e) {
                    ours.completeExceptionally(e);
                }
            }), () -> {});
            // A client that asks the sentinels now locks on the new master.
            try (Redis otherRedis = Redis.of(topology.uri(), Duration.ofSeconds(1));
                    ModernLocker other = ModernLocker.builder(otherRedis).build()) {
                Lock theirs = other.tryLock("orders", Duration.ofSeconds(60));
                ExecutionException failed = assertThrows(ExecutionException.class, () -> ours.get(30, TimeUnit.SECONDS),
                        "held on the old master only: a second holder");
                // Not obtained when the reply came (from the replaced master);
                // unknown when the retired connection closed before it: its
                // acquire may still run there (a negative read-back settles
                // nothing without a kill, which Sentinel cannot aim).
                assertTrue(failed.getCause() instanceof NotObtainedException
                        || failed.getCause() instanceof UnknownOutcomeException, failed.getCause().toString());
                theirs.unlock();
            }
        }
    }

    /**
     * A waiter subscribed to the release notices on the old master, which
     * stays paused (its pub/sub connection stays open, so Lettuce does not
     * reconnect it, and Sentinel cannot demote it): after the failover it
     * subscribes again on the new master and is woken by the release there
     * (60 s backoff: only the notice wakes it in time). Before, it heard
     * nothing until Sentinel demoted the old master, once back.
     */
    @Test
    void faultWaiterIsWokenByTheNewMastersNotice() throws Exception {
        Duration slow = Duration.ofSeconds(60);
        try (Topology.Sentinel topology = new Topology.Sentinel();
                Redis holderRedis = Redis.of(topology.uri(), Duration.ofSeconds(1));
                Redis waiterRedis = Redis.of(topology.uri(), Duration.ofSeconds(1));
                ModernLocker holder = ModernLocker.builder(holderRedis).build();
                ModernLocker waiter = ModernLocker.builder(waiterRedis).backoff(Backoff.exponential(slow, slow))
                        .build()) {
            Lock held = holder.tryLock("orders", slow);
            assertEquals(1L, topology.master.cmd.waitForReplication(1, 5000), "the replica has the lock");
            CompletableFuture<Lock> got = ModernLockerTest.asyncGet(
                    () -> waiter.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(40)));
            String channel = "{orders}:released";
            Topology.eventually("the waiter subscribed on the master",
                    () -> topology.master.cmd.pubsubNumsub(channel).getOrDefault(channel, 0L) > 0);
            failoverWhilePaused(topology, () -> {}, () -> {
                Topology.eventually("the waiter subscribed on the new master",
                        () -> topology.replica.cmd.pubsubNumsub(channel).getOrDefault(channel, 0L) > 0);
                Thread.sleep(200); // the waiter is asleep in its backoff again
                held.unlock(); // on the new master, which publishes
                Lock lock = got.get(20, TimeUnit.SECONDS);
                assertTrue(lock.isHeld());
                lock.unlock();
            });
        }
    }

    /**
     * The waiters of a key on one Redis share its subscription; after a
     * failover it is made again on the new master in the background, and
     * when that fails (here the new master refuses the channel for a while:
     * an ACL without it) the channel is no longer subscribed anywhere. A
     * waiter that comes afterwards must subscribe it itself. Before, the
     * subscription still counted as confirmed: the newcomer sent no
     * SUBSCRIBE, heard no release notice and slept its whole backoff (60 s
     * here) — as long as the key had waiters, no waiter of it in this
     * process heard a notice again.
     */
    @Test
    void faultWaiterAfterAFailedResubscribeSubscribesItself() throws Exception {
        Duration slow = Duration.ofSeconds(60);
        try (Topology.Sentinel topology = new Topology.Sentinel();
                Redis holderRedis = Redis.of(topology.uri(), Duration.ofSeconds(1));
                Redis waiterRedis = Redis.of(topology.uri(), Duration.ofSeconds(1));
                ModernLocker holder = ModernLocker.builder(holderRedis).build();
                ModernLocker waiter = ModernLocker.builder(waiterRedis).backoff(Backoff.exponential(slow, slow))
                        .build()) {
            Lock held = holder.tryLock("orders", slow);
            assertEquals(1L, topology.master.cmd.waitForReplication(1, 5000), "the replica has the lock");
            CompletableFuture<Lock> first = ModernLockerTest.asyncGet(
                    () -> waiter.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(40)));
            String channel = "{orders}:released";
            Topology.eventually("the first waiter subscribed on the master",
                    () -> topology.master.cmd.pubsubNumsub(channel).getOrDefault(channel, 0L) > 0);
            // the replica, master soon, refuses the lock's channel
            acl(topology.replica, "resetchannels", "&__sentinel__:*");
            failoverWhilePaused(topology, () -> {}, () -> {
                Topology.eventually("the new master refused the subscription made again",
                        () -> topology.replica.cmd.aclLog().stream() .anyMatch(e -> channel.equals(e.get("object"))));
                acl(topology.replica, "allchannels");
                CompletableFuture<Lock> second = ModernLockerTest.asyncGet(
                        () -> waiter.lock("orders", Duration.ofSeconds(10), Duration.ofSeconds(40)));
                Topology.eventually("the second waiter subscribed on the new master",
                        () -> topology.replica.cmd.pubsubNumsub(channel).getOrDefault(channel, 0L) > 0);
                Thread.sleep(200); // both waiters asleep in their backoff
                held.unlock(); // on the new master, which publishes
                Lock lock = CompletableFuture.anyOf(first, second).thenApply(Lock.class::cast)
                        .get(20, TimeUnit.SECONDS);
                assertTrue(lock.isHeld());
                lock.unlock();
                // woken by lock's release
                Lock other = (first.getNow(null) == lock ? second : first).get(20, TimeUnit.SECONDS);
                other.unlock();
            });
        }
    }

    /** ACL SETUSER default rules on node. */
    private static void acl(Topology.Node node, String... rules) {
        io.lettuce.core.protocol.CommandArgs<String, String> args = new io.lettuce.core.protocol.CommandArgs<>(
                io.lettuce.core.codec.StringCodec.UTF8) .add("SETUSER").add("default");
        for (String rule : rules) {
            args.add(rule);
        }
        node.cmd.dispatch(io.lettuce.core.protocol.CommandType.ACL,
                new io.lettuce.core.output.StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8), args);
    }

    /**
     * No sentinel's events can be heard (the one sentinel killed): a failover
     * would go unnoticed, so a lock call refuses before sending anything,
     * with RedisUnavailableException, instead of writing on a pooled
     * connection to a master that may have been replaced.
     */
    @Test
    void faultUnheardSentinelsRefuseBeforeSending() throws Exception {
        try (Topology.Sentinel topology = new Topology.Sentinel();
                Redis redis = Redis.of(topology.uri(), Duration.ofSeconds(1));
                ModernLocker locker = ModernLocker.builder(redis).build()) {
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(30));
            ModernOptionsTest.signal(ModernOptionsTest.pid(topology.sentinel), "KILL");
            // Each try names a key of its own: a try in flight while the
            // watch loses the sentinel may end unknown (it was sent), and its
            // key may then exist; the refused one must not.
            java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
            Topology.eventually("the lock calls refuse", () -> {
                String name = "other-" + tries.incrementAndGet();
                try {
                    locker.tryLock(name, Duration.ofSeconds(30)).unlock();
                    return false;
                } catch (UnknownOutcomeException e) {
                    return false;
                } catch (RedisUnavailableException e) {
                    return e.getMessage().contains("nothing sent");
                }
            });
            assertThrows(RedisUnavailableException.class, lock::unlock);
            assertTrue(lock.isHeld(), "nothing was sent: the lock is still ours until its lease ends");
            assertEquals(1L, topology.master.cmd.exists("orders"));
            assertEquals(0L, topology.master.cmd.exists("other-" + tries.get()), "the refused try sent nothing");
        }
    }
}
