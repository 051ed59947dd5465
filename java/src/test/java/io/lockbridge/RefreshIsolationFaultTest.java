package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * One locker's auto-refreshed locks on different cluster nodes: a node that
 * stalls (SIGSTOP, shorter than the cluster's node timeout: no failover)
 * stalls the refresh of the lock it serves for up to the command timeout.
 * The locks on the other nodes must go on being refreshed (Go refreshes
 * each lock on a goroutine of its own). Before, every lock of a locker was
 * refreshed on one watchdog thread: the stalled refresh held back the
 * others' past their give-up point, and a lock on a healthy node was
 * reported lost.
 */
class RefreshIsolationFaultTest {
    @Test
    void faultAStalledNodeDoesNotStarveTheRefreshOfLocksOnOtherNodes() throws Exception {
        try (Topology.Cluster cluster = new Topology.Cluster(); Redis redis = Redis.cluster(cluster.seeds());
                ModernLocker locker = ModernLocker.builder(redis).autoRefresh(true).build()) {
            String onStalled = TopologyFaultTest.nameOn(cluster, 0, "stalled-");
            String onHealthy = TopologyFaultTest.nameOn(cluster, 1, "healthy-");
            Duration ttl = Duration.ofSeconds(3); // refreshed every 1 s; given up 2.75 s after the last refresh
            Lock stalled = locker.tryLock(onStalled, ttl);
            Lock healthy = locker.tryLock(onHealthy, ttl);
            long pid = ModernOptionsTest.pid(cluster.nodes.get(0));
            ModernOptionsTest.signal(pid, "STOP");
            try {
                Thread.sleep(4500); // the stalled node's refresh waits for it (command timeout 5 s)
                assertTrue(healthy.isHeld() && !healthy.done().isDone(),
                        "the lock on the healthy node is still refreshed: " + healthy.done());
                assertFalse(stalled.isHeld(), "the lock on the stalled node ran out");
            } finally {
                ModernOptionsTest.signal(pid, "CONT");
            }
            healthy.unlock();
        }
    }
}
