package io.lockbridge.spring.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Consumer;

import io.lockbridge.Fixtures;
import io.lockbridge.InvalidException;
import io.lockbridge.Phase;
import io.lockbridge.spring.Locks;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationContext;
import org.springframework.core.NestedExceptionUtils;

/**
 * lockbridge.mode is migrate by default. Without lockbridge.namespace (a
 * missing or misspelt property: Boot ignores unknown ones) and without
 * lockbridge.phase, the starter used to run the fixed legacy phase,
 * unregistered — whatever phase the fleet is in: beside a fleet already in
 * modern, its locks and theirs were on different keys. It refuses to start
 * instead, naming both properties. Each Boot line's StarterConfigFaultTest
 * starts its Redis auto-configuration and its lockbridge one.
 */
public abstract class AbstractStarterConfigFaultTest {
    /** How a context started: its startup failure (null when it started) and, when it did, the context. */
    public record Started(Throwable failure, ApplicationContext context) {}

    /**
     * Runs the line's Redis and lockbridge auto-configurations with
     * properties (an ApplicationContextRunner) and hands the outcome to
     * check.
     */
    protected abstract void run(String[] properties, Consumer<Started> check);

    @Test
    void testFaultMigrateWithoutNamespaceOrPhaseIsRefused() throws Exception {
        try (Fixtures.Standalone srv = new Fixtures.Standalone()) {
            srv.initPhase("orders", Phase.MODERN);
            run(new String[] {"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + srv.port(),
                    "lockbridge.namespcae=orders"}, started -> {
                assertNotNull(started.failure(), "started a migrating locker that follows no namespace and names "
                        + "no phase");
                Throwable root = NestedExceptionUtils.getMostSpecificCause(started.failure());
                assertTrue(root instanceof InvalidException, "got " + root);
                assertTrue(root.getMessage().contains("lockbridge.namespace")
                        && root.getMessage().contains("lockbridge.phase"), root.getMessage());
            });
        }
    }

    @Test
    void migrateWithANamespaceOrAPhaseStarts() throws Exception {
        try (Fixtures.Standalone srv = new Fixtures.Standalone()) {
            srv.initPhase("orders", Phase.MODERN);
            String host = "spring.data.redis.host=127.0.0.1";
            String port = "spring.data.redis.port=" + srv.port();
            run(new String[] {host, port, "lockbridge.namespace=orders"}, started -> {
                assertNull(started.failure());
                assertEquals(Phase.MODERN, started.context().getBean(Locks.class).migrateLocker().phase());
            });
            run(new String[] {host, port, "lockbridge.phase=legacy"}, started -> {
                assertNull(started.failure());
                assertEquals(Phase.LEGACY, started.context().getBean(Locks.class).migrateLocker().phase());
            });
        }
    }
}
