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
     * The application's Locks follow namespace ns on srv (initialised at
     * legacy before the context started): a lock shows in the health
     * (phase, phase lease, locks held) and the instruments; a lock held
     * elsewhere counts as contention; the controller's step to dual-write
     * moves the application, its health and its phase gauge, and its next
     * lock writes both keys.
     */
    public static void followsAndReports(Fixtures.Standalone srv, String ns, Locks locks, MeterRegistry meters, Supplier<Health> health,
            Supplier<Map<String, Object>> info, Supplier<String> buildReport) throws InterruptedException {
        assertEquals("migrate", locks.system());
        Health h = health.get();
        assertEquals("UP", h.status(), h.details().toString());
        assertEquals("legacy", h.details().get("phase"));
        assertEquals(ns, h.details().get("namespace"));
        assertTrue(((Number) h.details().get("phaseLeaseLeftMillis")).longValue() > 0, h.details().toString());
        assertEquals(0, ((Number) h.details().get("locksHeld")).intValue());

        try (Lock l = locks.lock("report:1")) {
            assertEquals(Phase.LEGACY, l.phase());
            String v = srv.get("report:1");
            assertNotNull(v);
            assertTrue(v.matches("[0-9]+"), "legacy value: the expiry in ms, got " + v);
            assertEquals(1, ((Number) health.get().details().get("locksHeld")).intValue());
            assertThrows(NotObtainedException.class, () -> locks.tryLock("report:1", Duration.ofSeconds(5)));
        }
        assertFalse(srv.exists("report:1"));
        assertEquals(0, ((Number) health.get().details().get("locksHeld")).intValue());

        assertEquals(1, meters.get("lockbridge.lock.acquire.duration").tags("lockbridge.lock.system", "migrate", "lockbridge.lock.operation", "lock",
                "lockbridge.lock.outcome", "obtained").timer().count());
        assertEquals(1, meters.get("lockbridge.lock.acquire.duration").tags("lockbridge.lock.system", "migrate", "lockbridge.lock.operation",
                "try_lock", "lockbridge.lock.outcome", "not_obtained").timer().count());
        assertEquals(1.0, meters.get("lockbridge.lock.contention").tags("lockbridge.lock.system", "migrate").counter().count());
        assertEquals(1.0, meters.get("lockbridge.migrate.phase").tags("lockbridge.migrate.namespace", ns).gauge().value());

        Map<String, Object> i = info.get();
        @SuppressWarnings("unchecked")
        Map<String, Object> lb = (Map<String, Object>) i.get("lockbridge");
        assertNotNull(lb, i.toString());
        assertEquals("migrate", lb.get("mode"));
        assertEquals(ns, lb.get("namespace"));

        srv.stepPhase(ns, Phase.LEGACY, Phase.DUAL_WRITE);
        eventually("the application moved to dual-write", () -> "dual-write".equals(health.get().details().get("phase")));
        assertEquals(2.0, meters.get("lockbridge.migrate.phase").tags("lockbridge.migrate.namespace", ns).gauge().value());
        assertEquals("dual-write", buildReport.get());
        try (Lock l = locks.lock("report:2")) {
            assertEquals(Phase.DUAL_WRITE, l.phase());
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
        try (Lock l = locks.lock("topo:1")) {
            first = l.fence();
            assertTrue(first > 0);
            assertNotNull(read.apply("{topo:1}:modern"), "the modern key on the server that holds it");
            assertThrows(NotObtainedException.class, () -> locks.tryLock("topo:1", Duration.ofSeconds(5)));
        }
        try (Lock l = locks.lock("topo:1")) {
            assertTrue(l.fence() > first);
        }
        assertEquals(null, read.apply("{topo:1}:modern"));
    }

    public static void eventually(String what, BooleanSupplier ok) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!ok.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(50);
        }
    }
}
