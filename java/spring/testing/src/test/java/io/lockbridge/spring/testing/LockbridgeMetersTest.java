package io.lockbridge.spring.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lockbridge.Fixtures;
import io.lockbridge.LegacyLocker;
import io.lockbridge.Lock;
import io.lockbridge.LostException;
import io.lockbridge.NotObtainedException;
import io.lockbridge.Phase;
import io.lockbridge.Redis;
import io.lockbridge.spring.LockbridgeMeters;
import io.lockbridge.spring.LockbridgeProperties;
import io.lockbridge.spring.Locks;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Micrometer instruments of {@link Locks} on a real redis-server, in
 * scenarios where Go's meaning (docs/observability.md) and what a wrapper
 * around the locker could count differ: every failed attempt of a lock()
 * is contention, the wait is its sleeps, the auto-refresher's refreshes
 * and losses count, a recorded legacy sighting counts.
 */
class LockbridgeMetersTest {
    static Fixtures.Standalone srv;
    static Redis redis;
    static RedisClient client;
    static StatefulRedisConnection<String, String> conn;
    static RedisCommands<String, String> cmd;

    MeterRegistry meters;

    @BeforeAll
    static void start() throws Exception {
        srv = new Fixtures.Standalone();
        redis = srv.redis();
        client = RedisClient.create("redis://127.0.0.1:" + srv.port());
        conn = client.connect();
        cmd = conn.sync();
    }

    @AfterAll
    static void stop() {
        conn.close();
        client.shutdown();
        redis.close();
        srv.close();
    }

    @BeforeEach
    void reset() {
        cmd.flushall();
        meters = new SimpleMeterRegistry();
    }

    static LockbridgeProperties modern(boolean autoRefresh) {
        LockbridgeProperties props = new LockbridgeProperties();
        props.setMode(LockbridgeProperties.Mode.MODERN);
        props.setAutoRefresh(autoRefresh);
        return props;
    }

    /** The scripts the server ran so far (a legacy attempt is one EVALSHA of legacy/scripts/acquire.lua). */
    static long scripts() {
        Matcher matcher = Pattern.compile("cmdstat_evalsha:calls=(\\d+)").matcher(cmd.info("commandstats"));
        return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
    }

    double counter(String name, String... tags) {
        var counter = meters.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void everyFailedAttemptOfALockIsContention() throws Exception {
        LockbridgeProperties props = new LockbridgeProperties();
        props.setMode(LockbridgeProperties.Mode.LEGACY);
        try (Locks locks = Locks.create(redis, props, new LockbridgeMeters(meters))) {
            locks.tryLock("warm").unlock(); // the scripts loaded: from now on every script runs as one EVALSHA
            // an old Java service's lock, for a minute
            cmd.set("jobs", Long.toString(System.currentTimeMillis() + 60_000));
            Thread release = new Thread(() -> {
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    return;
                }
                cmd.del("jobs"); // it finishes (its release is a DEL)
            });
            long before = scripts();
            release.start();
            Lock lock = locks.lock("jobs", Duration.ofSeconds(10), Duration.ofSeconds(10));
            long failed = scripts() - before - 1;
            release.join();
            assertTrue(failed >= 2, "the wait made several attempts: " + failed);
            assertEquals(failed, counter("lockbridge.lock.contention", "lockbridge.lock.system", "legacy"),
                    "each failed attempt, not only the first");
            var wait = meters.get("lockbridge.lock.wait.duration").tags("lockbridge.lock.system", "legacy").timer();
            assertEquals(1, wait.count());
            assertTrue(wait.totalTime(TimeUnit.MILLISECONDS) > 0);

            assertThrows(NotObtainedException.class, () -> locks.tryLock("jobs", Duration.ofSeconds(1)));
            assertEquals(failed + 1, counter("lockbridge.lock.contention", "lockbridge.lock.system", "legacy"));
            lock.unlock();
            locks.lock("jobs", Duration.ofSeconds(1), Duration.ofSeconds(1)).unlock();
            assertEquals(1, wait.count(), "a lock() that got in at once did not wait");
            assertEquals(1, meters.get("lockbridge.lock.acquire.duration")
                    .tags("lockbridge.lock.system", "legacy", "lockbridge.lock.operation",
                    "try_lock", "lockbridge.lock.outcome", "not_obtained").timer().count());
        }
    }

    @Test
    void theAutoRefreshersRefreshesCountAndACallersDoNot() throws Exception {
        try (Locks locks = Locks.create(redis, modern(true), new LockbridgeMeters(meters))) {
            Lock lock = locks.tryLock("kept", Duration.ofMillis(300)); // refreshed every 100 ms
            StarterScenarios.eventually("three background refreshes",
                    () -> counter("lockbridge.lock.refreshes", "lockbridge.lock.system", "modern",
                    "lockbridge.lock.outcome", "refreshed") >= 3);
            lock.unlock();
            assertEquals(0, counter("lockbridge.lock.lost"));
        }
        MeterRegistry other = new SimpleMeterRegistry();
        try (Locks locks = Locks.create(redis, modern(false), new LockbridgeMeters(other))) {
            Lock lock = locks.tryLock("manual", Duration.ofSeconds(10));
            lock.refresh(Duration.ofSeconds(10));
            lock.unlock();
            assertNull(other.find("lockbridge.lock.refreshes").counter(),
                    "Lock.refresh by the caller is not the refresher's");
        }
    }

    @Test
    void anAutoRefreshedLockFoundGoneIsLost() throws Exception {
        try (Locks locks = Locks.create(redis, modern(true), new LockbridgeMeters(meters))) {
            Lock lock = locks.tryLock("gone", Duration.ofMillis(600));
            cmd.flushall(); // its key (the modern key derived from the name, or the name) is gone
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> lock.done().get(10, TimeUnit.SECONDS));
            assertTrue(failed.getCause() instanceof LostException, failed.getCause().toString());
            StarterScenarios.eventually("the loss counted (just after done())",
                    () -> counter("lockbridge.lock.lost", "lockbridge.lock.system", "modern") == 1);
            StarterScenarios.eventually("the refresh counted",
                    () -> counter("lockbridge.lock.refreshes", "lockbridge.lock.system", "modern",
                    "lockbridge.lock.outcome", "not_held") == 1);
            assertEquals(0, locks.held());
        }
    }

    @Test
    void aRecordedLegacySightingIsCounted() {
        srv.initPhase("msight", Phase.DUAL_WRITE);
        LockbridgeProperties props = new LockbridgeProperties();
        props.setNamespace("msight");
        // a Java service on the old lock
        Lock legacy = LegacyLocker.builder(redis).build().tryLock("orders", Duration.ofSeconds(30));
        try (Locks locks = Locks.create(redis, props, new LockbridgeMeters(meters))) {
            assertThrows(NotObtainedException.class, () -> locks.tryLock("orders", Duration.ofSeconds(1)));
            assertEquals(1, counter("lockbridge.migrate.sightings", "lockbridge.migrate.namespace", "msight"));
            assertEquals(1, counter("lockbridge.lock.contention", "lockbridge.lock.system", "migrate"));
        }
        legacy.unlock();
    }
}
