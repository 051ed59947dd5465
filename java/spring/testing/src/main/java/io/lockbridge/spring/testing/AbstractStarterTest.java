package io.lockbridge.spring.testing;

import java.util.Map;

import io.lockbridge.Fixtures;
import io.lockbridge.Phase;
import io.lockbridge.spring.Locks;
import io.lockbridge.spring.fleet.Reports;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A Boot application, configured by application.properties and
 * spring.data.redis.host/port, on a real redis-server: it follows the
 * namespace's phase ("reports", initialised at legacy), and shows it in its
 * health, info and metrics ({@link StarterScenarios#followsAndReports}).
 * Each line's StarterTest extends it with its annotations and reads its
 * own Actuator endpoints.
 */
public abstract class AbstractStarterTest {
    protected static Fixtures.Standalone srv;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) throws Exception {
        srv = new Fixtures.Standalone();
        srv.initPhase("reports", Phase.LEGACY);
        registry.add("spring.data.redis.host", () -> "127.0.0.1");
        registry.add("spring.data.redis.port", srv::port);
        registry.add("lockbridge.phase-interval", () -> "200ms");
    }

    @AfterAll
    static void stop() {
        srv.close();
    }

    @Autowired
    protected Locks locks;
    @Autowired
    protected MeterRegistry meters;
    @Autowired
    protected Reports reports;

    /** The lockbridge health indicator's answer, read from the line's HealthEndpoint. */
    protected abstract StarterScenarios.Health health();

    /** The line's InfoEndpoint's answer. */
    protected abstract Map<String, Object> info();

    @Test
    void followsThePhaseAndReportsIt() throws Exception {
        StarterScenarios.followsAndReports(srv, "reports", locks, meters, this::health, this::info,
                () -> reports.build("9"));
    }
}
