package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * ModernLocker in a Redis Cluster across a failover of the lock's master
 * (CLUSTER FAILOVER on its replica, {@link Topology.Cluster#failover}):
 * waiters are still woken by the release notice — the new master publishes
 * only when it counts a subscriber, so lockbridge must subscribe there —
 * and fences keep increasing, also when the new master lost the counter.
 *
 * <p>Each waiter has a 60 s backoff and the holder a 60 s lease, and waits
 * at most 20 s: only the notice can wake it in time (the test asserts
 * that it got the lock, not how fast).
 */
class ClusterFailoverTest {
    static final Duration SLOW = Duration.ofSeconds(60);

    static String s(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    /** A waiter on name through locker (60 s backoff, 20 s wait), on a thread of its own. */
    static CompletableFuture<Lock> waiter(ModernLocker locker, String name) {
        return ModernLockerTest.asyncGet(() -> locker.lock(name, Duration.ofSeconds(10), Duration.ofSeconds(20)));
    }

    /** Waits until a waiter subscribed to channel on node (SHARDNUMSUB there). */
    static void subscribedOn(Topology.Node node, String channel) throws InterruptedException {
        Topology.eventually("a waiter subscribed to " + channel + " on port " + node.port,
                () -> node.cmd.pubsubShardNumsub(channel).getOrDefault(channel, 0L) > 0);
    }

    /**
     * {@link #subscribedOn}, failing at once with the waiter's own outcome
     * when it ended first (its 20 s wait ran out, say): its subscription is
     * gone with it and will not be made again.
     */
    static void subscribedOn(Topology.Node node, String channel, CompletableFuture<Lock> waiter)
            throws InterruptedException {
        Topology.eventually("a waiter subscribed to " + channel + " on port " + node.port, () -> {
            if (waiter.isDone()) {
                throw new AssertionError("the waiter ended before it subscribed on port " + node.port + ": "
                        + waiter.handle((lock, e) -> e == null ? "got the lock" : e.toString()).join());
            }
            return node.cmd.pubsubShardNumsub(channel).getOrDefault(channel, 0L) > 0;
        });
    }

    @Test
    void faultWaitersAreWokenByTheNewMastersNoticeAfterAFailover() throws Exception {
        try (Topology.Cluster cluster = new Topology.Cluster(); Redis holderRedis = Redis.cluster(cluster.seeds());
                Redis waiterRedis = Redis.cluster(cluster.seeds());
                ModernLocker holder = ModernLocker.builder(holderRedis).build();
                ModernLocker waiterLocker = ModernLocker.builder(waiterRedis).backoff(Backoff.exponential(SLOW, SLOW))
                        .build()) {
            String name = "orders";
            String channel = "{orders}:released";
            int slot = Keys.slot(name.getBytes(StandardCharsets.UTF_8));
            Topology.Node master = cluster.nodes.get(cluster.ownerOf(slot));
            Topology.Node replica = cluster.addReplica(cluster.ownerOf(slot));

            // Before: the notice wakes the waiter.
            Lock held = holder.tryLock(name, SLOW);
            CompletableFuture<Lock> got = waiter(waiterLocker, name);
            subscribedOn(master, channel);
            held.unlock();
            got.get(30, TimeUnit.SECONDS).unlock();

            // The waiter comes after the failover: its first attempt gets
            // MOVED and it subscribes on the new master.
            cluster.failover(replica, slot);
            held = holder.tryLock(name, SLOW);
            got = waiter(waiterLocker, name);
            subscribedOn(replica, channel);
            held.unlock();
            Lock lock = got.get(30, TimeUnit.SECONDS);
            assertTrue(lock.isHeld(), "woken by the new master's notice within its 20 s wait (backoff 60 s)");
            lock.unlock();

            // The waiter subscribed before the failover: the demoted master
            // drops the subscription and the waiter subscribes on the slot's
            // new master (the old one again, failing back).
            held = holder.tryLock(name, SLOW);
            got = waiter(waiterLocker, name);
            subscribedOn(replica, channel);
            cluster.failover(master, slot);
            subscribedOn(master, channel, got);
            held.unlock();
            lock = got.get(30, TimeUnit.SECONDS);
            assertTrue(lock.isHeld(), "a waiter subscribed before the failover is woken by the new master's notice");
            lock.unlock();
        }
    }

    /**
     * The listeners of a channel on one Redis share its sharded
     * subscription. When its node drops it (the slot moved away) it is made
     * again on the slot's new owner in the background; when that fails (here
     * the new owner refuses the channel for a while: an ACL without it) the
     * channel is subscribed nowhere, and a listener that comes afterwards
     * must subscribe it itself. Before, the dropped subscription still
     * counted as confirmed: the newcomer sent no SSUBSCRIBE and heard
     * nothing — as long as the channel had listeners, no waiter of the key
     * in this process heard a release notice again.
     */
    @Test
    void faultListenerAfterAFailedResubscribeSubscribesItself() throws Exception {
        try (Topology.Cluster cluster = new Topology.Cluster(); Redis waiterRedis = Redis.cluster(cluster.seeds())) {
            String channel = "{orders}:released";
            byte[] channelBytes = channel.getBytes(StandardCharsets.UTF_8);
            int slot = Keys.slot(channelBytes);
            int from = cluster.ownerOf(slot);
            int to = (from + 1) % 3;
            AutoCloseable first = waiterRedis.subscribe(channelBytes, () -> { });
            subscribedOn(cluster.nodes.get(from), channel);
            acl(cluster.nodes.get(to), "resetchannels"); // the slot's next owner refuses the channel
            cluster.moveSlot(slot, from, to);
            Topology.eventually("the new owner refused the subscription made again",
                    () -> cluster.nodes.get(to).cmd.aclLog().stream() .anyMatch(e -> channel.equals(e.get("object"))));
            acl(cluster.nodes.get(to), "allchannels");
            java.util.concurrent.atomic.AtomicInteger heard = new java.util.concurrent.atomic.AtomicInteger();
            AutoCloseable second = waiterRedis.subscribe(channelBytes, heard::incrementAndGet);
            subscribedOn(cluster.nodes.get(to), channel);
            Topology.eventually("the newcomer hears a notice", () -> {
                cluster.nodes.get(to).cmd.spublish(channel, "released");
                return heard.get() > 0;
            });
            second.close();
            first.close();
        }
    }

    /** ACL SETUSER default rules on node. */
    static void acl(Topology.Node node, String... rules) {
        io.lettuce.core.protocol.CommandArgs<String, String> args = new io.lettuce.core.protocol.CommandArgs<>(
                io.lettuce.core.codec.StringCodec.UTF8) .add("SETUSER").add("default");
        for (String rule : rules) {
            args.add(rule);
        }
        node.cmd.dispatch(io.lettuce.core.protocol.CommandType.ACL,
                new io.lettuce.core.output.StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8), args);
    }

    @Test
    void faultFencesIncreaseAcrossAFailoverAndALostCounter() throws Exception {
        try (Topology.Cluster cluster = new Topology.Cluster(); Redis redis = Redis.cluster(cluster.seeds());
                ModernLocker locker = ModernLocker.builder(redis).fencing(true).build()) {
            String name = "orders";
            String counter = "{orders}:fence";
            int slot = Keys.slot(name.getBytes(StandardCharsets.UTF_8));
            Topology.Node master = cluster.nodes.get(cluster.ownerOf(slot));
            Topology.Node replica = cluster.addReplica(cluster.ownerOf(slot));
            long last = 0;
            for (int i = 0; i < 20; i++) {
                Lock lock = locker.tryLock(name, Duration.ofSeconds(10));
                assertTrue(lock.fence() > last, lock.fence() + " after " + last);
                last = lock.fence();
                lock.unlock();
            }
            assertEquals(Long.toString(last), master.cmd.get(counter));

            cluster.failover(replica, slot);
            Lock lock = locker.tryLock(name, Duration.ofSeconds(10));
            assertTrue(lock.fence() > last, "after the failover: " + lock.fence() + " after " + last);
            assertEquals(Long.toString(lock.fence()), replica.cmd.get(counter), "handed out by the new master");
            last = lock.fence();
            lock.unlock();

            // A new master that never got the counter (a failover to a replica
            // that lagged): the clock term still puts the next fence above.
            replica.cmd.del(counter);
            lock = locker.tryLock(name, Duration.ofSeconds(10));
            assertTrue(lock.fence() > last, "after the counter was lost: " + lock.fence() + " after " + last);
            lock.unlock();
        }
    }
}
