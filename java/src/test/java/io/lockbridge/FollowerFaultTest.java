package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

/**
 * The faults of a following MigrateLocker found in Go's migrate and fixed
 * there, each on a real redis-server: Close while holding, late heartbeats,
 * an acquire or refresh outliving its phase lease (the server paused with
 * SIGSTOP while it is in flight), ttls overflowing the registry's hold.
 */
class FollowerFaultTest extends ServerTest {
    @SuppressWarnings("unchecked")
    static Map<String, Object> entry(String namespace, String id) {
        byte[] raw = srv.raw.hget(b("lockbridge:{" + namespace + "}:clients"), b(id));
        return raw == null ? null : (Map<String, Object>) Json.parse(new String(raw, StandardCharsets.UTF_8));
    }

    static long serverMillis() {
        List<byte[]> time = srv.raw.time();
        return Long.parseLong(new String(time.get(0), StandardCharsets.UTF_8)) * 1000
                + Long.parseLong(new String(time.get(1), StandardCharsets.UTF_8)) / 1000;
    }

    /**
     * A locker closed while it holds a lock stays counted, in the lock's
     * phase, until the lock's lease has ended (plus 1 s). Before, close
     * removed the entry at once (and, since forget.lua takes the liveness
     * margin, failed): the controller could roll back past the lock.
     */
    @Test
    void faultCloseWhileHoldingStaysCounted() throws Exception {
        srv.setPhase("close1", "", Phase.MODERN, "init");
        MigrateLocker locker = MigrateLocker.builder(redis).followPhase("close1").phaseInterval(Duration.ofMillis(50))
                .build();
        String id = locker.clientId();
        Lock lock = locker.tryLock("orders", Duration.ofSeconds(30));
        assertEquals(Phase.MODERN, lock.phase());
        locker.close(); // the lock stays valid to the end of its lease
        Map<String, Object> stored = entry("close1", id);
        assertNotNull(stored, "the entry stays while the lock lives");
        assertEquals("modern", stored.get("held_oldest"));
        assertEquals("modern", stored.get("held_newest"));
        long heldMs = (Long) stored.get("held_ms");
        assertTrue(heldMs > 25_000 && heldMs <= 30_000, "held_ms " + heldMs);
        Double exp = srv.raw.zscore(b("lockbridge:{close1}:clients-expiry"), b(id));
        assertNotNull(exp);
        long until = exp.longValue() - serverMillis();
        assertTrue(until > 25_000 && until <= 31_000, "counted for the lock's lease plus 1 s: " + until + " ms");
        assertTrue(lock.isHeld());
        lock.unlock();

        // With nothing held, close removes the entry (forget.lua, forced, margin 0).
        MigrateLocker idle = MigrateLocker.builder(redis).followPhase("close1").phaseInterval(Duration.ofMillis(50))
                .build();
        idle.tryLock("orders", Duration.ofSeconds(30)).unlock();
        idle.close();
        assertEquals(null, entry("close1", idle.clientId()));
    }

    /**
     * Every heartbeat carries a seq one above the last, so heartbeat.lua
     * writes nothing over a newer entry: a heartbeat held up in the network
     * cannot put back an older phase or hold. A heartbeat whose entry is the
     * one its last confirmed write stored only touches it (renews its
     * expiry). Here a newer entry (seq 2^53-1) that is not the locker's
     * stands; the locker's heartbeats, touches (sent before it, by their
     * seq) and writes alike, leave it as it is — and, since the registry
     * then no longer counts the locker, renew no phase lease: it refuses
     * (Go: TestFaultHeartbeatThatDidNotLandRenewsNoLease) until the entry is
     * gone.
     */
    @Test
    void faultLateHeartbeatDoesNotOverwriteANewerOne() throws Exception {
        srv.setPhase("seq1", "", Phase.LEGACY, "init");
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("seq1")
                .phaseInterval(Duration.ofMillis(50)) .phaseLease(Duration.ofMillis(150)).build()) {
            assertEquals(Phase.LEGACY, locker.phase());
            Map<String, Object> first = entry("seq1", locker.clientId());
            assertTrue((Long) first.get("seq") >= 1, "seq from 1");
            double exp = srv.raw.zscore(b("lockbridge:{seq1}:clients-expiry"), b(locker.clientId()));
            MigrateLockerTest.eventually("a touch renews the expiry",
                    () -> srv.raw.zscore(b("lockbridge:{seq1}:clients-expiry"), b(locker.clientId())) > exp);
            assertEquals(first, entry("seq1", locker.clientId()), "and leaves the entry");

            String newer = "{\"v\":3,\"seq\":9007199254740991,\"id\":\"" + locker.clientId()
                    + "\",\"phase\":\"modern\",\"host\":\"h\",\"pid\":1,\"ns_init\":0,\"gen\":0}";
            srv.raw.hset(b("lockbridge:{seq1}:clients"), b(locker.clientId()), b(newer));
            Thread.sleep(100); // a heartbeat in flight has landed
            long seen = srv.raw.zscore(b("lockbridge:{seq1}:clients-seen"), b(locker.clientId())).longValue();
            Thread.sleep(300); // several heartbeats
            PhaseUnknownException refused = assertThrows(PhaseUnknownException.class,
                    () -> locker.tryLock("seq-orders", Duration.ofSeconds(5)),
                    "a reading whose heartbeat wrote nothing renews no lease");
            assertEquals(PhaseUnknownException.Reason.LEASE_LAPSED, refused.reason());
            assertEquals(newer,
                    new String(srv.raw.hget(b("lockbridge:{seq1}:clients"), b(locker.clientId())),
                    StandardCharsets.UTF_8), "a heartbeat with a lower seq changes nothing");
            assertEquals(seen, srv.raw.zscore(b("lockbridge:{seq1}:clients-seen"), b(locker.clientId())).longValue());

            // forgotten: its next heartbeat writes its own
            srv.raw.hdel(b("lockbridge:{seq1}:clients"), b(locker.clientId()));
            MigrateLockerTest.eventually("it locks again once its entry is its own", () -> {
                try {
                    locker.tryLock("seq-orders", Duration.ofSeconds(5)).unlock();
                    return true;
                } catch (PhaseUnknownException e) {
                    return false;
                }
            });
        }
    }

    /**
     * A heartbeat whose reply did not come in time (the command timeout)
     * may still be on its way to the server: its connection is dropped, not
     * its bytes. Close must not leave the registry before it lands, or it
     * lands after the leave and registers the closed locker again, at its
     * phase, for its whole hold — a member that no longer exists, which
     * blocks the controller's steps and counts as evidence of its phase (Go:
     * TestFaultHeartbeatGivenUpOnLandsAfterClose, where the heartbeat is
     * awaited). Java cannot await a heartbeat whose connection it dropped:
     * close leaves an entry with a newer seq, dead at once, which the late
     * heartbeat cannot overwrite.
     */
    @Test
    void faultHeartbeatGivenUpOnLandsAfterClose() throws Exception {
        srv.raw.scriptLoad(Scripts.HEARTBEAT.source()); // loaded, so that the held EVALSHA runs when it lands
        long held = 1500;
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofMillis(300))) {
            MigrateLocker locker = MigrateLocker.builder(proxied).phase(Phase.DUAL_WRITE).namespace("late1").build();
            proxy.hold(Scripts.HEARTBEAT.sha1(), held); // the lock call's heartbeat: held past its timeout
            assertThrows(PhaseUnknownException.class, () -> locker.tryLock("orders", Duration.ofSeconds(1)),
                    "the lock call gave up on its heartbeat");
            String id = locker.clientId();
            locker.close();
            Thread.sleep(held + 300); // the held heartbeat has landed by now, if it is to
            Double expiry = srv.raw.zscore(b("lockbridge:{late1}:clients-expiry"), b(id));
            assertTrue(expiry == null || expiry.longValue() <= serverMillis(),
                    "the closed locker is not counted (no entry, or a dead one), and nothing registered it again: "
                            + entry("late1", id));
        }
    }

    /** How many subscribers the phase notices of namespace have (the sharded channels of protocol 3). */
    static long listeners(String namespace) {
        Namespace keys = new Namespace(namespace);
        byte[][] chs = new byte[Namespace.NOTICE_SHARDS][];
        for (int i = 0; i < chs.length; i++) {
            chs[i] = keys.shard(i);
        }
        return srv.raw.pubsubNumsub(chs).values().stream().mapToLong(Long::longValue).sum();
    }

    /** The controller's notices of a step to phase (Go: store.notify): one on each shard. */
    static void notifyShards(String namespace, Phase phase) {
        Namespace keys = new Namespace(namespace);
        for (int i = 0; i < Namespace.NOTICE_SHARDS; i++) {
            srv.raw.publish(keys.shard(i), b(phase.wireName()));
        }
    }

    /**
     * A follower that hears the notices reads only as its phase lease needs
     * (here every 58 s): a notice sent while its pub/sub connection is
     * down never comes. It then reads at every interval until it hears them
     * again, as Go's does, and a resubscription after a reconnect makes it
     * read at once, as Go's loop does after subscribing again. Before, it
     * counted its subscription as heard whatever its connection, and saw a
     * step made meanwhile only at its next reading by the lease.
     */
    @Test
    void faultNoticesLostWhileThePubSubConnectionIsDown() throws Exception {
        srv.setPhase("deaf1", "", Phase.LEGACY, "init");
        srv.raw.aclSetuser("deafsvc", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw").allKeys()
                .allChannels().allCommands());
        io.lettuce.core.RedisURI uri = io.lettuce.core.RedisURI.builder(srv.uri()).withAuthentication("deafsvc", "pw")
                .build();
        try (Redis deaf = Redis.of(uri, Duration.ofSeconds(1));
                MigrateLocker locker = MigrateLocker.builder(deaf).followPhase("deaf1")
                        .phaseInterval(Duration.ofSeconds(1)) .phaseLease(Duration.ofSeconds(60)).build()) {
            assertEquals(Phase.LEGACY, locker.phase());
            MigrateLockerTest.eventually("it listens to the notices", () -> listeners("deaf1") == 1);

            // Its pub/sub connection is cut and cannot come back (the user
            // is off; its other connection stays); a step is announced
            // meanwhile.
            srv.raw.aclSetuser("deafsvc", io.lettuce.core.AclSetuserArgs.Builder.off());
            srv.raw.clientKill(io.lettuce.core.KillArgs.Builder.typePubsub().user("deafsvc"));
            MigrateLockerTest.eventually("its subscription is gone", () -> listeners("deaf1") == 0);
            srv.setPhase("deaf1", "legacy", Phase.DUAL_WRITE, "step");
            notifyShards("deaf1", Phase.DUAL_WRITE);
            MigrateLockerTest.eventually("it reads at every interval while it hears nothing, and moves",
                    () -> locker.phase() == Phase.DUAL_WRITE);

            srv.raw.aclSetuser("deafsvc", io.lettuce.core.AclSetuserArgs.Builder.on());
            MigrateLockerTest.eventually("it listens again", () -> listeners("deaf1") == 1);
            Thread.sleep(1500); // the readings of the resubscription are done: it is quiet again

            // A step whose notice was lost (none sent here), then a reconnect
            // (Lettuce's, at once): the resubscription makes it read.
            srv.setPhase("deaf1", "dual-write", Phase.DUAL_READ, "step");
            srv.raw.clientKill(io.lettuce.core.KillArgs.Builder.typePubsub().user("deafsvc"));
            MigrateLockerTest.eventually("it reads when it subscribed again, and moves",
                    () -> locker.phase() == Phase.DUAL_READ);
        } finally {
            srv.raw.aclDeluser("deafsvc");
        }
    }

    /**
     * Runs call in another thread while the server is stopped (SIGSTOP) for
     * longer than the phase lease: the command is sent under a lease that
     * has ended by the time its reply comes back.
     */
    static <T> CompletableFuture<T> acrossAPause(Supplier<T> call, Duration pause) throws Exception {
        srv.signal("STOP");
        CompletableFuture<T> future;
        try {
            future = CompletableFuture.supplyAsync(call);
            Thread.sleep(pause.toMillis());
        } finally {
            srv.signal("CONT");
        }
        try {
            future.get(20, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // the caller looks at the future
        }
        return future;
    }

    static Throwable failure(CompletableFuture<?> future) {
        assertTrue(future.isCompletedExceptionally(), "it failed");
        Throwable thrown = future.handle((v, e) -> e).join();
        return thrown.getCause() != null && thrown instanceof java.util.concurrent.CompletionException
                ? thrown.getCause() : thrown;
    }

    /**
     * An acquire sent under a phase lease that ends before its reply comes
     * back is not trusted: the registry may have stopped counting this
     * client when it ran, and the fleet stepped past its phase. The lock is
     * given back and the acquire fails with PhaseUnknownException. Before,
     * tryLock returned the lock.
     */
    @Test
    void faultAcquireOutlivingThePhaseLease() throws Exception {
        srv.setPhase("pause1", "", Phase.DUAL_READ, "init");
        try (Redis slow = Redis.of(srv.uri(), Duration.ofSeconds(15));
                MigrateLocker locker = MigrateLocker.builder(slow).followPhase("pause1")
                        .phaseInterval(Duration.ofMillis(100)) .phaseLease(Duration.ofMillis(600)).build()) {
            // the script is loaded, and the lease covers a 5 s lock
            locker.tryLock("warm", Duration.ofSeconds(5)).unlock();
            locker.phase();
            CompletableFuture<Lock> got = acrossAPause(() -> locker.tryLock("orders", Duration.ofSeconds(5)),
                    Duration.ofMillis(1500));
            Throwable thrown = failure(got);
            PhaseUnknownException refused = assertInstanceOf(PhaseUnknownException.class, thrown);
            assertEquals(PhaseUnknownException.Reason.LEASE_LAPSED, refused.reason());
            assertEquals(Phase.DUAL_READ, refused.last());
            assertEquals(0, srv.raw.exists(b("orders"), b("{orders}:modern")), "the lock was given back");
        }
    }

    /**
     * A refresh whose reply comes back after the phase lease it was sent
     * under fails with PhaseUnknownException and does not extend the lock's
     * local lease: the registry may not cover the new one.
     */
    @Test
    void faultRefreshOutlivingThePhaseLeaseDoesNotExtend() throws Exception {
        srv.setPhase("pause2", "", Phase.DUAL_WRITE, "init");
        try (Redis slow = Redis.of(srv.uri(), Duration.ofSeconds(15));
                MigrateLocker locker = MigrateLocker.builder(slow).followPhase("pause2")
                        .phaseInterval(Duration.ofMillis(100)) .phaseLease(Duration.ofMillis(600)).build()) {
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(8));
            lock.refresh(Duration.ofSeconds(8)); // the refresh script is loaded
            Thread.sleep(2000); // a refresh now would move the lease's end 2 s on
            locker.phase();
            Instant before = lock.expiresAt();
            CompletableFuture<Void> got = acrossAPause(() -> {
                lock.refresh(Duration.ofSeconds(8));
                return null;
            }, Duration.ofMillis(1500));
            PhaseUnknownException refused = assertInstanceOf(PhaseUnknownException.class, failure(got));
            assertEquals(PhaseUnknownException.Reason.LEASE_LAPSED, refused.reason());
            Duration moved = Duration.between(before, lock.expiresAt()).abs();
            assertTrue(moved.compareTo(Duration.ofMillis(500)) < 0,
                    "the local lease is the one the registry covered: moved " + moved);
            assertTrue(lock.isHeld());
            lock.unlock();
        }
    }

    /**
     * A locker cut off from Redis (its ACL user switched off and its
     * connections killed) until its phase lease lapses, its lock's lease
     * runs out (never unlocked) and the fleet rolls back from modern to
     * legacy without it. When it returns, the expired lock holds nothing:
     * it starts afresh at the stored phase, as a new locker does, and does
     * not step one phase from its old one (dual-read, beside legacy lockers).
     */
    @Test
    void faultReturningLockerWithAnExpiredLockStartsAtTheStoredPhase() throws Exception {
        srv.setPhase("back1", "", Phase.MODERN, "init");
        srv.raw.aclSetuser("javasvc", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw").allKeys()
                .allChannels().allCommands());
        io.lettuce.core.RedisURI uri = io.lettuce.core.RedisURI.builder(srv.uri()).withAuthentication("javasvc", "pw")
                .build();
        try (Redis cut = Redis.of(uri, Duration.ofSeconds(1));
                MigrateLocker locker = MigrateLocker.builder(cut).followPhase("back1")
                        .phaseInterval(Duration.ofMillis(50)) .phaseLease(Duration.ofMillis(200)).build()) {
            Lock old = locker.tryLock("forgotten", Duration.ofMillis(300)); // never unlocked
            assertEquals(Phase.MODERN, old.phase());

            srv.raw.aclSetuser("javasvc", io.lettuce.core.AclSetuserArgs.Builder.off());
            srv.raw.clientKill(io.lettuce.core.KillArgs.Builder.user("javasvc"));
            MigrateLockerTest.eventually("the cut-off locker's entry expires", () -> {
                Double exp = srv.raw.zscore(b("lockbridge:{back1}:clients-expiry"), b(locker.clientId()));
                return exp != null && exp.longValue() < serverMillis();
            });
            MigrateLockerTest.eventually("its lock's lease ran out", () -> !old.isHeld());
            srv.setPhase("back1", "modern", Phase.DUAL_READ, "step"); // the fleet rolls back without it
            srv.setPhase("back1", "dual-read", Phase.DUAL_WRITE, "step");
            srv.setPhase("back1", "dual-write", Phase.LEGACY, "step");

            srv.raw.aclSetuser("javasvc", io.lettuce.core.AclSetuserArgs.Builder.on());
            Lock[] got = new Lock[1];
            MigrateLockerTest.eventually("it locks again once it reads the phase", () -> {
                try {
                    got[0] = locker.tryLock("orders", Duration.ofSeconds(30));
                    return true;
                } catch (PhaseUnknownException | RedisUnavailableException e) {
                    return false;
                }
            });
            assertEquals(Phase.LEGACY, got[0].phase(), "it took the lock in the fleet's phase, not one step from its "
                    + "old one");
            assertThrows(NotObtainedException.class, () -> LegacyLocker.builder(redis).build()
                    .tryLock("orders", Duration.ofSeconds(30)), "a legacy locker does not get in beside it");
            got[0].unlock();
        } finally {
            srv.raw.aclDeluser("javasvc");
        }
    }

    /**
     * A ttl the registry's hold cannot cover (above 2^40 ms minus the phase
     * lease), and a phase lease or interval that would overflow it, are
     * refused with InvalidException; nothing is written.
     */
    @Test
    void faultHugeTtlWithNamespace() {
        srv.setPhase("huge1", "", Phase.DUAL_READ, "init");
        Duration lease = Duration.ofSeconds(6);
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("huge1").build()) {
            locker.tryLock("warm", Duration.ofSeconds(1)).unlock();
            for (Duration ttl : new Duration[] {Duration.ofMillis(1L << 40).minus(lease).plusMillis(1),
                    Duration.ofMillis(Long.MAX_VALUE), Duration.ofSeconds(Long.MAX_VALUE)}) {
                assertThrows(InvalidException.class, () -> locker.tryLock("orders", ttl), ttl.toString());
                assertThrows(InvalidException.class, () -> locker.lock("orders", ttl, Duration.ofMillis(10)),
                        ttl.toString());
            }
            Lock lock = locker.tryLock("orders", Duration.ofSeconds(5));
            assertThrows(InvalidException.class, () -> lock.refresh(Duration.ofMillis(1L << 40)));
            assertTrue(lock.isHeld());
            lock.unlock();
            assertEquals(0, srv.raw.exists(b("orders"), b("{orders}:modern")));
        }
        MigrateLocker.Builder builder = MigrateLocker.builder(redis).followPhase("huge1");
        assertThrows(InvalidException.class, () -> builder.phaseLease(Duration.ofMillis(1L << 39)));
        assertThrows(InvalidException.class, () -> builder.phaseLease(Duration.ofSeconds(Long.MAX_VALUE)));
        assertThrows(InvalidException.class, () -> MigrateLocker.builder(redis).followPhase("huge1")
                .phaseInterval(Duration.ofMillis(1L << 38)).build());
        assertThrows(InvalidException.class,
                () -> MigrateLocker.builder(redis).followPhase("huge1").phaseInterval(Duration.ofSeconds(2))
                .phaseLease(Duration.ofSeconds(2)).build());
    }
    /**
     * A touch names the entry it renews: the seq of the locker's last
     * confirmed write. Here an older write of the locker's (reporting a lock
     * released since) stands under its id again — as when one held up in the
     * network lands after a forced {@code fleet forget} — while its entry
     * has not changed since its last confirmed write, so its heartbeats are
     * touches. They find another entry than the one they name, write
     * nothing, and the locker sends its entry again. Before, a touch renewed
     * any entry with a lower seq and kept the old write alive. (Go, with the
     * write held up by the proxy: TestFaultLateFullWriteAfterForgetIsNotTouched.)
     */
    @Test
    void faultTouchRenewsOnlyTheEntryItNames() throws Exception {
        srv.setPhase("touch2", "", Phase.LEGACY, "init");
        try (MigrateLocker locker = MigrateLocker.builder(redis).followPhase("touch2")
                .phaseInterval(Duration.ofMillis(50)).build()) {
            String id = locker.clientId();
            byte[] clients = b("lockbridge:{touch2}:clients");
            Lock lock = locker.tryLock("touch-orders", Duration.ofSeconds(30));
            MigrateLockerTest.eventually("an entry reports the lock",
                    () -> entry("touch2", id).containsKey("held_oldest"));
            byte[] old = srv.raw.hget(clients, b(id));
            long oldSeq = (Long) entry("touch2", id).get("seq");
            lock.unlock();
            MigrateLockerTest.eventually("a newer entry reports no lock",
                    () -> !entry("touch2", id).containsKey("held_oldest"));
            long confirmed = (Long) entry("touch2", id).get("seq");
            double exp = srv.raw.zscore(b("lockbridge:{touch2}:clients-expiry"), b(id));
            MigrateLockerTest.eventually("then it touches",
                    () -> srv.raw.zscore(b("lockbridge:{touch2}:clients-expiry"), b(id)) > exp);
            assertEquals(confirmed, (Long) entry("touch2", id).get("seq"), "a touch leaves the entry");

            srv.raw.hset(clients, b(id), old); // forgotten, and the older write landed late
            MigrateLockerTest.eventually("the locker sends its entry again",
                    () -> (Long) entry("touch2", id).get("seq") > confirmed);
            Map<String, Object> now = entry("touch2", id);
            assertTrue(!now.containsKey("held_oldest"), "no lock released long ago is reported: " + now);
            assertTrue(oldSeq < confirmed);
        }
    }
}
