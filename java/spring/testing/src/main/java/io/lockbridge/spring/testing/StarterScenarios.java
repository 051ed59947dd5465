package io.lockbridge.spring.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.lockbridge.Fixtures;
import io.lockbridge.Lock;
import io.lockbridge.NotObtainedException;
import io.lockbridge.Phase;
import io.lockbridge.spring.Locks;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * What both Boot lines' applications must show, written once: each line's
 * @SpringBootTest hands in its beans (its own Actuator types seen through
 * {@link Health}).
 */
public final class StarterScenarios {
    private StarterScenarios() {}

    /** A health indicator's answer, whatever the line's types. */
    public interface Health {
        String status();

        Map<String, Object> details();

        /** The answer with status (UP, DOWN, …) and details. */
        static Health of(String status, Map<String, Object> details) {
            return new Health() {
                @Override
                public String status() {
                    return status;
                }

                @Override
                public Map<String, Object> details() {
                    return details;
                }
            };
        }
    }

    /**
     * The application's Locks follow namespace on srv (initialised at
     * legacy before the context started): a lock shows in the health
     * (phase, phase lease, locks held) and the instruments; a lock held
     * elsewhere counts as contention; the controller's step to dual-write
     * moves the application, its health and its phase gauge, and its next
     * lock writes both keys.
     */
    public static void followsAndReports(Fixtures.Standalone srv, String namespace, Locks locks, MeterRegistry meters,
            Supplier<Health> health, Supplier<Map<String, Object>> info, Supplier<String> buildReport)
            throws InterruptedException {
        assertEquals("migrate", locks.system());
        Health healthNow = health.get();
        assertEquals("UP", healthNow.status(), healthNow.details().toString());
        assertEquals("legacy", healthNow.details().get("phase"));
        assertEquals(namespace, healthNow.details().get("namespace"));
        assertTrue(((Number) healthNow.details().get("phaseLeaseLeftMillis")).longValue() > 0,
                healthNow.details().toString());
        assertEquals(0, ((Number) healthNow.details().get("locksHeld")).intValue());

        try (Lock lock = locks.lock("report:1")) {
            assertEquals(Phase.LEGACY, lock.phase());
            String value = srv.get("report:1");
            assertNotNull(value);
            assertTrue(value.matches("[0-9]+"), "legacy value: the expiry in ms, got " + value);
            assertEquals(1, ((Number) health.get().details().get("locksHeld")).intValue());
            assertThrows(NotObtainedException.class, () -> locks.tryLock("report:1", Duration.ofSeconds(5)));
        }
        assertFalse(srv.exists("report:1"));
        assertEquals(0, ((Number) health.get().details().get("locksHeld")).intValue());

        assertEquals(1, meters.get("lockbridge.lock.acquire.duration")
                .tags("lockbridge.lock.system", "migrate", "lockbridge.lock.operation", "lock",
                "lockbridge.lock.outcome", "obtained").timer().count());
        assertEquals(1, meters.get("lockbridge.lock.acquire.duration")
                .tags("lockbridge.lock.system", "migrate", "lockbridge.lock.operation",
                "try_lock", "lockbridge.lock.outcome", "not_obtained").timer().count());
        assertEquals(1.0,
                meters.get("lockbridge.lock.contention").tags("lockbridge.lock.system", "migrate").counter().count());
        assertEquals(1.0,
                meters.get("lockbridge.migrate.phase").tags("lockbridge.migrate.namespace", namespace).gauge().value());

        Map<String, Object> shown = info.get();
        @SuppressWarnings("unchecked")
        Map<String, Object> lockbridge = (Map<String, Object>) shown.get("lockbridge");
        assertNotNull(lockbridge, shown.toString());
        assertEquals("migrate", lockbridge.get("mode"));
        assertEquals(namespace, lockbridge.get("namespace"));

        srv.stepPhase(namespace, Phase.LEGACY, Phase.DUAL_WRITE);
        eventually("the application moved to dual-write",
                () -> "dual-write".equals(health.get().details().get("phase")));
        assertEquals(2.0,
                meters.get("lockbridge.migrate.phase").tags("lockbridge.migrate.namespace", namespace).gauge().value());
        assertEquals("dual-write", buildReport.get());
        try (Lock lock = locks.lock("report:2")) {
            assertEquals(Phase.DUAL_WRITE, lock.phase());
            assertTrue(srv.exists("report:2"), "the legacy key");
            assertTrue(srv.exists("{report:2}:modern"), "the modern key");
        }
    }

    /**
     * The application's Locks (mode modern, fencing on) on a Sentinel
     * master or a cluster: a lock's token is on the server read reads from
     * (the master, the key's slot owner), fences grow, and a second
     * holder is refused.
     */
    public static void locksOnTopology(Locks locks, java.util.function.Function<String, String> read) {
        assertEquals("modern", locks.system());
        long first;
        try (Lock lock = locks.lock("topo:1")) {
            first = lock.fence();
            assertTrue(first > 0);
            assertNotNull(read.apply("{topo:1}:modern"), "the modern key on the server that holds it");
            assertThrows(NotObtainedException.class, () -> locks.tryLock("topo:1", Duration.ofSeconds(5)));
        }
        try (Lock lock = locks.lock("topo:1")) {
            assertTrue(lock.fence() > first);
        }
        assertEquals(null, read.apply("{topo:1}:modern"));
    }

    public static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(50);
        }
    }
}
