package io.lockbridge.spring.app3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lockbridge.Fixtures;
import io.lockbridge.InvalidException;
import io.lockbridge.Phase;
import io.lockbridge.spring.Locks;
import io.lockbridge.spring.boot3.LockbridgeAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;

/**
 * lockbridge.mode is migrate by default. Without lockbridge.namespace (a
 * missing or misspelt property: Boot ignores unknown ones) and without
 * lockbridge.phase, the starter used to run the fixed legacy phase,
 * unregistered — whatever phase the fleet is in: beside a fleet already in
 * modern, its locks and theirs were on different keys. It refuses to start
 * instead, naming both properties.
 */
class StarterConfigFaultTest {
    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, LockbridgeAutoConfiguration.class));

    @Test
    void testFaultMigrateWithoutNamespaceOrPhaseIsRefused() throws Exception {
        try (Fixtures.Standalone srv = new Fixtures.Standalone()) {
            srv.initPhase("orders", Phase.MODERN);
            runner.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + srv.port(), "lockbridge.namespcae=orders")
                    .run(ctx -> {
                        Throwable failure = ctx.getStartupFailure();
                        assertNotNull(failure, "started a migrating locker that follows no namespace and names no phase");
                        Throwable root = NestedExceptionUtils.getMostSpecificCause(failure);
                        assertTrue(root instanceof InvalidException, "got " + root);
                        assertTrue(root.getMessage().contains("lockbridge.namespace") && root.getMessage().contains("lockbridge.phase"),
                                root.getMessage());
                    });
        }
    }

    @Test
    void migrateWithANamespaceOrAPhaseStarts() throws Exception {
        try (Fixtures.Standalone srv = new Fixtures.Standalone()) {
            srv.initPhase("orders", Phase.MODERN);
            String host = "spring.data.redis.host=127.0.0.1";
            String port = "spring.data.redis.port=" + srv.port();
            runner.withPropertyValues(host, port, "lockbridge.namespace=orders").run(ctx -> {
                assertNull(ctx.getStartupFailure());
                assertEquals(Phase.MODERN, ctx.getBean(Locks.class).migrateLocker().phase());
            });
            runner.withPropertyValues(host, port, "lockbridge.phase=legacy").run(ctx -> {
                assertNull(ctx.getStartupFailure());
                assertEquals(Phase.LEGACY, ctx.getBean(Locks.class).migrateLocker().phase());
            });
        }
    }
}
