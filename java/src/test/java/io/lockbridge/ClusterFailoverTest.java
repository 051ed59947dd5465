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

    static String s(byte[] v) {
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }

    /** A waiter on name through w (60 s backoff, 20 s wait), on a thread of its own. */
    static CompletableFuture<Lock> waiter(ModernLocker w, String name) {
        return ModernLockerTest.asyncGet(() -> w.lock(name, Duration.ofSeconds(10), Duration.ofSeconds(20)));
    }

    /** Waits until a waiter subscribed to channel on node n (SHARDNUMSUB there). */
    static void subscribedOn(Topology.Node n, String channel) throws InterruptedException {
        Topology.eventually("a waiter subscribed to " + channel + " on port " + n.port,
                () -> n.cmd.pubsubShardNumsub(channel).getOrDefault(channel, 0L) > 0);
    }

    @Test
    void faultWaitersAreWokenByTheNewMastersNoticeAfterAFailover() throws Exception {
        try (Topology.Cluster c = new Topology.Cluster(); Redis hr = Redis.cluster(c.seeds()); Redis wr = Redis.cluster(c.seeds());
                ModernLocker holder = ModernLocker.builder(hr).build();
                ModernLocker w = ModernLocker.builder(wr).backoff(Backoff.exponential(SLOW, SLOW)).build()) {
            String name = "orders";
            String channel = "{orders}:released";
            int slot = Keys.slot(name.getBytes(StandardCharsets.UTF_8));
            Topology.Node master = c.nodes.get(c.ownerOf(slot));
            Topology.Node replica = c.addReplica(c.ownerOf(slot));

            // Before: the notice wakes the waiter.
            Lock held = holder.tryLock(name, SLOW);
            CompletableFuture<Lock> got = waiter(w, name);
            subscribedOn(master, channel);
            held.unlock();
            got.get(30, TimeUnit.SECONDS).unlock();

            // The waiter comes after the failover: its first attempt gets
            // MOVED and it subscribes on the new master.
            c.failover(replica, slot);
            held = holder.tryLock(name, SLOW);
            got = waiter(w, name);
            subscribedOn(replica, channel);
            held.unlock();
            Lock l = got.get(30, TimeUnit.SECONDS);
            assertTrue(l.isHeld(), "woken by the new master's notice within its 20 s wait (backoff 60 s)");
            l.unlock();

            // The waiter subscribed before the failover: the demoted master
            // drops the subscription and the waiter subscribes on the slot's
            // new master (the old one again, failing back).
            held = holder.tryLock(name, SLOW);
            got = waiter(w, name);
            subscribedOn(replica, channel);
            c.failover(master, slot);
            subscribedOn(master, channel);
            held.unlock();
            l = got.get(30, TimeUnit.SECONDS);
            assertTrue(l.isHeld(), "a waiter subscribed before the failover is woken by the new master's notice");
            l.unlock();
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
        try (Topology.Cluster c = new Topology.Cluster(); Redis wr = Redis.cluster(c.seeds())) {
            String channel = "{orders}:released";
            byte[] ch = channel.getBytes(StandardCharsets.UTF_8);
            int slot = Keys.slot(ch);
            int from = c.ownerOf(slot);
            int to = (from + 1) % 3;
            AutoCloseable first = wr.subscribe(ch, () -> { });
            subscribedOn(c.nodes.get(from), channel);
            acl(c.nodes.get(to), "resetchannels"); // the slot's next owner refuses the channel
            c.moveSlot(slot, from, to);
            Topology.eventually("the new owner refused the subscription made again", () -> c.nodes.get(to).cmd.aclLog().stream()
                    .anyMatch(e -> channel.equals(e.get("object"))));
            acl(c.nodes.get(to), "allchannels");
            java.util.concurrent.atomic.AtomicInteger heard = new java.util.concurrent.atomic.AtomicInteger();
            AutoCloseable second = wr.subscribe(ch, heard::incrementAndGet);
            subscribedOn(c.nodes.get(to), channel);
            Topology.eventually("the newcomer hears a notice", () -> {
                c.nodes.get(to).cmd.spublish(channel, "released");
                return heard.get() > 0;
            });
            second.close();
            first.close();
        }
    }

    /** ACL SETUSER default rules on node n. */
    static void acl(Topology.Node n, String... rules) {
        io.lettuce.core.protocol.CommandArgs<String, String> a = new io.lettuce.core.protocol.CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8)
                .add("SETUSER").add("default");
        for (String r : rules) {
            a.add(r);
        }
        n.cmd.dispatch(io.lettuce.core.protocol.CommandType.ACL, new io.lettuce.core.output.StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8), a);
    }

    @Test
    void faultFencesIncreaseAcrossAFailoverAndALostCounter() throws Exception {
        try (Topology.Cluster c = new Topology.Cluster(); Redis r = Redis.cluster(c.seeds());
                ModernLocker m = ModernLocker.builder(r).fencing(true).build()) {
            String name = "orders";
            String counter = "{orders}:fence";
            int slot = Keys.slot(name.getBytes(StandardCharsets.UTF_8));
            Topology.Node master = c.nodes.get(c.ownerOf(slot));
            Topology.Node replica = c.addReplica(c.ownerOf(slot));
            long last = 0;
            for (int i = 0; i < 20; i++) {
                Lock l = m.tryLock(name, Duration.ofSeconds(10));
                assertTrue(l.fence() > last, l.fence() + " after " + last);
                last = l.fence();
                l.unlock();
            }
            assertEquals(Long.toString(last), master.cmd.get(counter));

            c.failover(replica, slot);
            Lock l = m.tryLock(name, Duration.ofSeconds(10));
            assertTrue(l.fence() > last, "after the failover: " + l.fence() + " after " + last);
            assertEquals(Long.toString(l.fence()), replica.cmd.get(counter), "handed out by the new master");
            last = l.fence();
            l.unlock();

            // A new master that never got the counter (a failover to a replica
            // that lagged): the clock term still puts the next fence above.
            replica.cmd.del(counter);
            l = m.tryLock(name, Duration.ofSeconds(10));
            assertTrue(l.fence() > last, "after the counter was lost: " + l.fence() + " after " + last);
            l.unlock();
        }
    }
}
